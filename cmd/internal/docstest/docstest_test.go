package docstest

import (
	"os"
	"strings"
	"testing"
)

// TestDocsAreTrue: every counter, metric, flag, agent-file table and key
// and snake_case name the docs cite in backquotes is one the code has, and
// every metric registered, agent-file key and serve flag is in the docs.
// Mutation caught: a counter renamed in the code and not in the docs
// (stale_requests for stale_turn), a metric registered without its line
// in the docs, a key added to the agent file without its row.
func TestDocsAreTrue(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root, err := ModuleRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	files, err := DocFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	cites, err := CiteAll(root, files)
	if err != nil {
		t.Fatal(err)
	}
	code, err := ScanCode(root, "cmd/internal/docstest")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ProbeConfig()
	if err != nil {
		t.Fatal(err)
	}
	// Guard against a vacuous pass: each kind is found on both sides.
	kinds := map[Kind]int{}
	for _, c := range cites {
		kinds[c.Kind]++
	}
	for _, k := range []Kind{KindName, KindCounter, KindMetric, KindFlag, KindTable, KindKey, KindTableKey, KindGo, KindPath, KindTest} {
		if kinds[k] == 0 {
			t.Errorf("the docs cite no %s: the reader is broken", k)
		}
	}
	if len(code.Counters) < 100 || len(code.Metrics) < 10 || len(code.ServeFlags()) < 5 || len(cfg.Tables) < 10 {
		t.Errorf("the code scan found %d counters, %d metrics, %d serve flags, %d agent-file tables: the scan is broken",
			len(code.Counters), len(code.Metrics), len(code.ServeFlags()), len(cfg.Tables))
	}
	tree, tops, err := Tree(root)
	if err != nil {
		t.Fatal(err)
	}
	probs := Check(cites, Facts{Code: code, Config: cfg, ServeFlags: code.ServeFlags(), Tree: tree, Tops: tops})
	if len(probs) > 0 {
		var b strings.Builder
		for _, p := range probs {
			b.WriteString("\n  " + p.String())
		}
		t.Errorf("%d claims of the docs the code does not keep (fix the doc, or the code):%s", len(probs), b.String())
	}
	t.Logf("%d citations in %d docs; %d counters, %d metrics, %d flags, %d agent-file tables", len(cites), len(files),
		len(code.Counters), len(code.Metrics), len(code.Flags), len(cfg.Tables))
}
