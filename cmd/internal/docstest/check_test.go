package docstest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// facts is a small code base for the bite tests.
func facts() Facts {
	return Facts{
		Code: &Code{
			Names:           map[string]bool{"energy_fallback": true, "[redacted]": true, "gate_": true},
			NamePrefixes:    map[string]bool{"gate_": true},
			Counters:        map[string]string{"stale_turn": "a.go:1", "stale_turns": "b.go:1", "frames": "c.go:1"},
			CounterPrefixes: map[string]string{"conn_": "d.go:1"},
			Metrics: map[string]Metric{
				"brisvox_calls_total":     {Where: "m.go:1", Labels: []string{"result"}},
				"brisvox_sip_calls":       {Where: "m.go:2", Labels: []string{}},
				"brisvox_vad_pool_depth":  {Where: "m.go:3"},
				"brisvox_turns_total":     {Where: "m.go:4", Labels: []string{}},
				"brisvox_barge_ins_total": {Where: "m.go:5", Labels: []string{}},
			},
			Flags: map[string][]string{"drain": {"serve"}, "agent": {"serve"}, "json": {"sim"}},
			Decls: map[string]map[string]bool{"sim": {"Call": true, "TestSim": true, "BenchmarkCall": true, "TestDTMFKeys": true},
				"providertest": {"Fault": true, "FuzzRead": true}},
			Members: map[string]map[string]bool{"sim": {"Run": true}},
		},
		Config: Config{Tables: map[string][]string{
			"":                  {"prompt", "transports", "vad"},
			"vad":               {"engine", "hangover"},
			"transports":        {"webrtc"},
			"transports.webrtc": {"enabled", "public"},
		}},
		ServeFlags: []string{"agent", "drain"},
		Tree: map[string]bool{"sim": true, "sim/suite.go": true, "sim/mockstt.go": true, "docs": true,
			"providers": true, "providers/providertest": true},
		Tops: map[string]bool{"sim": true, "docs": true, "providers": true},
	}
}

// documented names everything facts() must find in the docs, so a case
// shows only its own problem.
const documented = "All: `brisvox_calls_total`, `brisvox_sip_calls`, `brisvox_vad_pool_depth`, `brisvox_turns_total`, " +
	"`brisvox_barge_ins_total`, `--agent`, `--drain`, `prompt`, `transports`, `vad`, `engine`, `hangover`, `webrtc`, `enabled`, `public`.\n\n"

// TestCheckBites: each rule of Check fails on a doc that breaks it and
// passes the same doc made right.
// Mutation caught: a rule that reports nothing (each bad case must show
// its problem), a rule that reports the good form (each good case must
// pass).
func TestCheckBites(t *testing.T) {
	cases := []struct {
		name string
		doc  string
		edit func(*Facts)
		want string // "" for no problem
	}{
		{"a counter that is not counted", "Older rounds are counted (`stale_requests`).", nil,
			"`stale_requests`: cited as a counter, but nothing counts it (known alike: stale_turn, stale_turns)"},
		{"a counter that is counted", "Older rounds are counted (`stale_turn`).", nil, ""},
		{"a counter before the word", "The `stale_request` counter goes up.", nil, "cited as a counter, but nothing counts it"},
		{"a list of counters", "The stage counts `stale_turn`, `stale_turns` and `stale_text`.", nil, "`stale_text`: cited as a counter"},
		{"a single-word counter", "Counters: `frames`, `bytes`.", nil, "`bytes`: cited as a counter"},
		{"a counter prefix", "Its counters (`conn_*`) and `stale_*` counters.", nil, ""},
		{"a counter prefix nothing counts", "Its `ws_*` counters.", nil, "`ws_*`: cited as a counter"},
		{"a run-time counter name", "It counts `conn_frames_in`.", nil, ""},
		{"a name the code has nowhere", "The stage's state is `energy_fallback` or `energy_failed`.", nil,
			"`energy_failed`: the code names nothing so"},
		{"a name built from a fixed start", "Refusals are under `gate_pcm`.", nil, ""},
		{"a name in a fenced block is not read", "```\nstale_requests\n```", nil, ""},
		{"a metric registered but not in the docs", "", func(f *Facts) {
			f.Code.Metrics["brisvox_new_total"] = Metric{Where: "new.go:7", Labels: []string{}}
		}, "new.go:7: metric brisvox_new_total is registered but no doc names it"},
		{"a metric the code does not register", "Scrape `brisvox_calls_refused_total`.", nil,
			"`brisvox_calls_refused_total`: no such metric is registered (known alike: brisvox_calls_total)"},
		{"a metric label it does not have", "`brisvox_calls_total{reason}`", nil, "brisvox_calls_total has no label reason"},
		{"a metric label it has", "`brisvox_calls_total{result}` and `brisvox_calls_total{agent}`", nil, ""},
		{"a metric prefix", "the SIP figures (`brisvox_sip_*`)", nil, ""},
		{"a metric prefix nothing has", "`brisvox_rtp_*`", nil, "no metric starts so"},
		{"a serve flag not in the docs", "", func(f *Facts) { f.ServeFlags = append(f.ServeFlags, "max-calls") },
			"flag --max-calls is not in the docs"},
		{"a flag no command has", "Run `brisvox serve --agent a.toml --max-call 3`.", nil, "no command has a flag --max-call"},
		{"a lone flag", "with `--drian 10s`", nil, "no command has a flag --drian"},
		{"another program's flags", "chromium `--headless --no-sandbox`", nil, ""},
		{"a table the file does not have", "In `[transports.sipp]`.", nil, "the agent file has no table [transports.sipp]"},
		{"a bracketed word of the code", "Keys are shown as `[redacted]`.", nil, ""},
		{"a key under a table it is not in", "Set `webrtc.stun`.", nil, "the agent file's [transports.webrtc] has no key stun"},
		{"a key under its table", "Set `webrtc.public` or `transports.webrtc.enabled`.", nil, ""},
		{"a setting no table has", "Write `hangover_ms = 300`.", nil, "no table of the agent file has a key hangover_ms"},
		{"a setting", "Write `hangover = \"300ms\"`.", nil, ""},
		{"a key in no doc", "", func(f *Facts) {
			f.Config.Tables["vad"] = append(f.Config.Tables["vad"], "min_speech")
		}, "agent file [vad]: key min_speech is in no doc"},
		{"a key shown only in a fenced example", "```toml\n[vad]\n# min_speech = \"64ms\"\n```", func(f *Facts) {
			f.Config.Tables["vad"] = append(f.Config.Tables["vad"], "min_speech")
		}, ""},
		{"a Go selector is not a key", "`vad.go` and `llm.ToolResult`", nil, ""},
		{"a Go name its package does not declare", "Inject a `sim.Fault`.", nil,
			"`sim.Fault`: package sim declares no Fault (declared in providertest)"},
		{"a Go name its package declares", "`sim.Call.Run()` and `*providertest.Fault`", nil, ""},
		{"a member nothing declares", "`sim.Call.Wait`", nil, "no field or method Wait in the module"},
		{"another module's package", "`prometheus.NewRegistry`", nil, ""},
		{"a test that is gone", "`TestSimRuns` and `BenchmarkCall/16k`", nil, "`TestSimRuns`: no test, benchmark or fuzz target"},
		{"a test that is there", "`TestSim`, `BenchmarkCall/16k`, `TestDTMF*` and `FuzzRead(f)`", nil, ""},
		{"a path that is gone", "See `sim/contract/llm_test.go`.", nil, "`sim/contract/llm_test.go`: no such file or directory"},
		{"a path that is there", "See `sim/suite.go`, `sim/mock*.go`, `sim/...` and `docs/`.", nil, ""},
		{"a path outside the module's directories", "`github.com/pion/webrtc` and `a/b`", nil, ""},
		{"a Go name by its package's path", "`sim/contract.RunLLM`", nil, "`sim/contract.RunLLM`: no such file or directory"},
		{"a Go name by its path, not declared", "`providers/providertest.Fault` and `providers/providertest.Mock`", nil,
			"package providertest declares no Mock"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := facts()
			if tc.edit != nil {
				tc.edit(&f)
			}
			probs := Check(Cite("X.md", documented+tc.doc), f)
			var got []string
			for _, p := range probs {
				got = append(got, p.String())
			}
			switch {
			case tc.want == "" && len(got) > 0:
				t.Errorf("want no problem, got:\n%s", strings.Join(got, "\n"))
			case tc.want != "" && !slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, tc.want) }):
				t.Errorf("want a problem with %q, got:\n%s", tc.want, strings.Join(got, "\n"))
			case tc.want != "" && len(got) != 1:
				t.Errorf("want one problem, got:\n%s", strings.Join(got, "\n"))
			}
		})
	}
}

// TestCiteLines: a citation carries the line of its span, across a span
// that wraps and in a table row.
// Mutation caught: lines counted from the block's start only.
func TestCiteLines(t *testing.T) {
	doc := "# T\n\nOne line,\nthen `stale_turn`\nand `serve\n--drain 5s` and `frames_in`.\n\n| `brisvox_turns_total` | x |\n"
	got := map[string]int{}
	for _, c := range Cite("X.md", doc) {
		got[c.Name] = c.Line
	}
	for name, line := range map[string]int{"stale_turn": 4, "drain": 5, "frames_in": 6, "brisvox_turns_total": 8} {
		if got[name] != line {
			t.Errorf("%s: line %d, want %d (all: %v)", name, got[name], line, got)
		}
	}
}

// TestScanCodeFindsEachForm: the code scan reads every way the module
// counts, registers a metric and defines a flag, on a module written here.
// Mutation caught: a form of counting left out of the scan (each name
// below is read by one rule only).
func TestScanCodeFindsEachForm(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n\ngo 1.26\n")
	write("a/a.go", `package a

const statHeld = "held_const"

var dropNames = [2]string{0: "dropped_table", 1: "loop_table"}

var counterNames = [1]string{"webrtc_table"}

type T struct{ stats C; Counters map[string]uint64 }

func (t *T) run(k string, n uint64) map[string]uint64 {
	t.stats.Inc("inc_literal")
	t.stats.Add("add_literal", n)
	t.stats.Inc(statHeld)
	t.stats.Inc(verdictCounter(1))
	t.Counters["describe_key"] = 1
	t.Counters["conn_"+k] = n
	t.count("count_method")
	out := map[string]uint64{"literal_key": 1}
	out["returned_key"] = 2
	return out
}

func verdictCounter(v int) string {
	if v == 0 {
		return "verdict_name"
	}
	return "verdict_" + k()
}
`)
	write("a/a_test.go", "package a\n\nfunc f() { x.Inc(\"test_only\") }\n")
	write("cmd/c/main.go", `package main

import (
	"flag"

	"github.com/prometheus/client_golang/prometheus"
)

func main() {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.StringVar(&x, "agent", "", "")
	fs.Duration("drain", 0, "")
	fs.Func("query", "", nil)
	flag.Bool("json", false, "")
	_ = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "brisvox_vec_total"}, []string{"result"})
	_ = prometheus.NewCounter(prometheus.CounterOpts{Name: "brisvox_plain_total"})
	_ = prometheus.NewDesc("brisvox_desc_total", "h", []string{"cause"}, nil)
	_ = srv.GaugeFunc("brisvox_func_depth", "h", labels, nil)
	sub := flag.NewFlagSet(os.Args[1], flag.ContinueOnError)
	sub.Bool("watch", false, "")
}

func register(fs *flag.FlagSet) { fs.String("seeds", "", "") }
`)
	write("skipped/s.go", "package s\n\nvar bad = \"skipped_name\"\n\nfunc TestSkipped() {}\n")
	write("nested/go.mod", "module other\n")
	write("nested/n.go", "package n\n\nfunc f() { x.Inc(\"nested_module\") }\n")
	code, err := ScanCode(dir, "skipped")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"held_const", "dropped_table", "loop_table", "webrtc_table", "inc_literal", "add_literal",
		"verdict_name", "describe_key", "count_method", "literal_key", "returned_key"} {
		if _, ok := code.Counters[n]; !ok {
			t.Errorf("counter %s not found", n)
		}
	}
	for _, n := range []string{"test_only", "nested_module"} {
		if _, ok := code.Counters[n]; ok {
			t.Errorf("counter %s found: tests and nested modules are not the code's counters", n)
		}
	}
	if !code.Names["test_only"] || code.Names["nested_module"] || code.Names["skipped_name"] {
		t.Errorf("names: test files are read, nested modules and skipped directories are not")
	}
	if !code.hasFunc("TestSkipped", false) {
		t.Errorf("a skipped directory's declarations are read")
	}
	for _, p := range []string{"conn_", "verdict_"} {
		if _, ok := code.CounterPrefixes[p]; !ok {
			t.Errorf("counter prefix %s not found", p)
		}
	}
	wantMetrics := map[string][]string{"brisvox_vec_total": {"result"}, "brisvox_plain_total": {}, "brisvox_desc_total": {"cause"}, "brisvox_func_depth": nil}
	for n, labels := range wantMetrics {
		m, ok := code.Metrics[n]
		if !ok || !slices.Equal(m.Labels, labels) || (labels == nil) != (m.Labels == nil) {
			t.Errorf("metric %s: %+v, want labels %v", n, m, labels)
		}
	}
	if got := code.ServeFlags(); !slices.Equal(got, []string{"agent", "drain", "query"}) {
		t.Errorf("serve flags %v", got)
	}
	if got := code.Flags["json"]; !slices.Equal(got, []string{"cmd/c"}) {
		t.Errorf("package flag json: %v", got)
	}
	// A set named at run time and a set passed in are the package's.
	// Mutation caught: their flags left out (no command has --watch).
	for _, n := range []string{"watch", "seeds"} {
		if got := code.Flags[n]; !slices.Equal(got, []string{"cmd/c"}) {
			t.Errorf("flag %s: %v, want the package's", n, got)
		}
	}
}

// TestProbeConfig: the agent file's schema comes from agentfile itself,
// nested tables and each stage's providers included.
// Mutation caught: provider options left out (a stage table probed
// without its provider), nested tables not followed.
func TestProbeConfig(t *testing.T) {
	cfg, err := ProbeConfig()
	if err != nil {
		t.Fatal(err)
	}
	for table, keys := range map[string][]string{
		"":                  {"prompt", "stt", "transports", "serve"},
		"stt":               {"provider", "warm", "api_key_env", "model_dir"},
		"tts":               {"provider", "voice"},
		"transports.sip":    {"udp", "allow"},
		"transports.webrtc": {"enabled", "stun"},
		"serve":             {"memory_limit"},
	} {
		for _, k := range keys {
			if !slices.Contains(cfg.Tables[table], k) {
				t.Errorf("[%s] lacks %s: %v", table, k, cfg.Tables[table])
			}
		}
	}
	if got, ok := cfg.Table("webrtc"); !ok || got != "transports.webrtc" {
		t.Errorf("Table(webrtc) = %q, %v", got, ok)
	}
}
