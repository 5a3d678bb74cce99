package carriertest

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// counterCall matches the counters incremented in the code.
var counterCall = regexp.MustCompile(`\b(?:Inc|Add|Bad)\("([a-z_]+)"`)

// UsedCounterNames lists the counter names incremented (Inc, Add, Bad
// with a literal name) in the non-test Go files of dirs, so that a test
// can check that each is registered.
func UsedCounterNames(t testing.TB, dirs ...string) []string {
	t.Helper()
	var names []string
	for _, d := range dirs {
		files, err := filepath.Glob(filepath.Join(d, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range counterCall.FindAllSubmatch(b, -1) {
				names = append(names, string(m[1]))
			}
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	if len(names) < 10 {
		t.Fatalf("found only %d counter names: the pattern is stale", len(names))
	}
	return names
}
