package archtest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// layerRules is the module's layering, bottom to top. Patterns are relative
// to the module path; see Rule.
var layerRules = []Rule{
	{
		Name:        "messages-is-the-bottom",
		Packages:    "messages/...",
		OnlyAllowed: true,
		Allowed:     []string{"messages/..."}, // its own subpackages only
	},
	{
		Name:        "agent-sees-only-messages",
		Packages:    "agent/...",
		OnlyAllowed: true,
		Allowed:     []string{"messages/...", "agent/..."},
	},
	{
		// Providers are below the transports and the actors: an adapter
		// may use media's codecs and resamplers, never a call's transport.
		Name:     "providers-know-no-runtime",
		Packages: "providers/...",
		// Their tests too: an adapter's tests run it on its vendor mock
		// with the fakes and the contract suite, and compile no actor (the
		// whole calls over real adapters live in sim/wholecall).
		Tests:     true,
		Forbidden: []string{"actors/...", "sip/...", "media/webrtc/...", "media/carrier/...", "media/conn", "cmd/...", "sim/..."},
	},
	{
		// media/ is one layer below the actors: the codecs and models, the
		// connection contract (media/conn) and the transports that
		// implement it (media/webrtc, media/carrier/...).
		Name:      "media-below-actors",
		Packages:  "media/...",
		Forbidden: []string{"actors/...", "agent/...", "providers/...", "sip/...", "cmd/...", "sim/..."},
	},
	{
		// The connection contract is a leaf: every transport, the
		// simulator and the transport actor share it.
		Name:        "conn-is-a-leaf",
		Packages:    "media/conn",
		OnlyAllowed: true,
		Allowed:     []string{"messages/..."},
	},
	{
		// The SIP transport is a transport like the others: it implements
		// media/conn's Conn and sees no actor.
		Name:        "sip-sees-only-the-conn",
		Packages:    "sip/...",
		OnlyAllowed: true,
		Allowed:     []string{"messages/...", "media", "media/conn", "media/opus/...", "media/g722/...", "sip/...", "internal/..."},
	},
	{
		// The JSON grammar is written once, at the lowest layer both its
		// readers may import (agent's fast validator, the providers'
		// scanner): it imports nothing of the module but messages.
		Name:        "jsonlex-is-a-leaf",
		Packages:    "agent/jsonlex",
		OnlyAllowed: true,
		Allowed:     []string{"messages/..."},
	},
	{
		// The n-gram builder is text in, an ARPA model out: the domain
		// model of the recognizer is built and checked without cgo, a
		// decoder or a provider.
		Name:        "ngram-is-a-leaf",
		Packages:    "providers/stt/pocketsphinx/ngram",
		OnlyAllowed: true,
		Allowed:     []string{"providers/stt/pocketsphinx/ngram/..."}, // its own subpackages only
	},
	{
		// The end-of-turn policy is a conversation rule (agent/endofturn);
		// the model that feeds it is media's and the vad actor runs it.
		Name:      "turn-takes-the-policy-from-agent",
		Packages:  "actors/turn",
		Forbidden: []string{"media/..."},
	},
	{
		// The provider fakes are a leaf below the runtime.
		Name:        "fakes-are-a-leaf",
		Packages:    "providers/providertest",
		OnlyAllowed: true,
		Allowed:     []string{"providers", "agent/...", "messages/..."},
	},
	{
		// The stages of a call's tree talk by messages only: a stage
		// imports no other stage (the session spawns them, kit is shared).
		Name:      "stages-talk-by-messages",
		Packages:  "actors/...",
		Except:    []string{"actors/session", "actors/kit"},
		Forbidden: []string{"actors/llm", "actors/tools", "actors/pacer", "actors/stt", "actors/tts", "actors/turn", "actors/vad", "actors/transport", "actors/switchboard", "actors/session"},
	},
	{
		// The agent file is the binary's configuration: it reads the
		// providers' option tables and knows no actor and no simulator.
		Name:      "agentfile-is-configuration",
		Packages:  "cmd/internal/agentfile/...",
		Forbidden: []string{"actors/...", "sim/...", "media/webrtc/...", "media/carrier/...", "sip/..."},
	},
	{
		// The actors are below the transports, the simulator and the
		// commands: a call's tree drives a media/conn.Conn and never knows
		// which transport is behind it.
		Name:      "actors-below-transports",
		Packages:  "actors/...",
		Forbidden: []string{"media/webrtc/...", "media/carrier/...", "sip/...", "sim/...", "cmd/..."},
	},
	{
		// What is kept of a call follows it from outside the tree (serve's
		// Keeper): the records' parts know no actor, no provider and no
		// transport; only the keeper, which joins them for serve, sees
		// serve.
		Name:      "records-outside-the-tree",
		Packages:  "cmd/internal/records/...",
		Except:    []string{"cmd/internal/records/keeper"},
		Forbidden: []string{"actors/...", "providers/...", "media/webrtc/...", "media/carrier/...", "sip/...", "sim/...", "cmd/internal/serve/...", "cmd/internal/agentbuild/..."},
	},
	{
		Name:      "nothing-imports-cmd",
		Packages:  "...",
		Except:    []string{"cmd/..."}, // a command may use its own helper packages
		Forbidden: []string{"cmd/..."},
	},
	{
		Name:     "production-without-sim",
		Packages: "...",
		// The simulator is imported by its dev commands only: no
		// production package, and no test-support package either (the
		// provider fakes and the contract suite are leaves below it, so a
		// provider's tests never compile the actor tree).
		Except:    []string{"sim/...", "cmd/brisvox-sim/...", "cmd/brisvox-bench/..."},
		Forbidden: []string{"sim/..."},
	},
}

// loadModule lists the module's packages, failing the test if it cannot.
func loadModule(t *testing.T) (modulePath string, pkgs []Package) {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root, modulePath, err := FindModuleRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	pkgs, err = ListPackages(root)
	if err != nil {
		t.Fatal(err)
	}
	// Guard against a vacuous pass: this very package must be in the list.
	self := modulePath + "/internal/archtest"
	if !slices.ContainsFunc(pkgs, func(p Package) bool { return p.ImportPath == self }) {
		t.Fatalf("go list did not report %s; got %d packages", self, len(pkgs))
	}
	for _, p := range pkgs {
		if p.Error != nil {
			// Broken packages fail their own build and tests; say so here
			// only as context, the checks still use what go list saw.
			t.Logf("go list: %s: %s", p.ImportPath, p.Error.Err)
		}
	}
	return modulePath, pkgs
}

func TestEveryPackageHasDocGo(t *testing.T) {
	_, pkgs := loadModule(t)
	checked := 0
	for _, p := range pkgs {
		if !p.HasNonTestFiles() {
			continue
		}
		checked++
		for _, msg := range CheckDocFile(p) {
			t.Error(msg)
		}
	}
	t.Logf("checked doc.go of %d packages", checked)
}

func TestLayering(t *testing.T) {
	modulePath, pkgs := loadModule(t)
	for _, v := range CheckRules(modulePath, pkgs, layerRules) {
		t.Error(v)
	}
}

// --- The checks can fail -------------------------------------------------

func TestCheckDocFileBites(t *testing.T) {
	write := func(t *testing.T, files map[string]string) string {
		t.Helper()
		dir := t.TempDir()
		for name, src := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	cases := []struct {
		name    string
		files   map[string]string
		goFiles []string
		testGo  []string
		want    string // substring of the single report; "" for none
	}{
		{
			name:    "missing doc.go",
			files:   map[string]string{"a.go": "// Package x is documented elsewhere.\npackage x\n"},
			goFiles: []string{"a.go"},
			want:    "no doc.go",
		},
		{
			name:    "doc.go without comment",
			files:   map[string]string{"doc.go": "package x\n"},
			goFiles: []string{"doc.go"},
			want:    "no package comment",
		},
		{
			name:    "doc.go with a detached comment",
			files:   map[string]string{"doc.go": "// Package x is detached.\n\npackage x\n"},
			goFiles: []string{"doc.go"},
			want:    "no package comment",
		},
		{
			name:    "doc.go with only a directive",
			files:   map[string]string{"doc.go": "//go:build linux\n\n//go:generate true\npackage x\n"},
			goFiles: []string{"doc.go"},
			want:    "no package comment",
		},
		{
			name:    "doc.go excluded from the build",
			files:   map[string]string{"doc.go": "//go:build ignore\n\n// Package x.\npackage x\n", "a.go": "package x\n"},
			goFiles: []string{"a.go"},
			want:    "not part of the package",
		},
		{
			name:    "documented",
			files:   map[string]string{"doc.go": "// Package x does things.\npackage x\n"},
			goFiles: []string{"doc.go"},
		},
		{
			name:   "only tests",
			files:  map[string]string{"x_test.go": "package x\n"},
			testGo: []string{"x_test.go"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := Package{ImportPath: "example.com/m/x", Dir: write(t, c.files), GoFiles: c.goFiles, TestGoFiles: c.testGo}
			got := CheckDocFile(p)
			switch {
			case c.want == "" && len(got) != 0:
				t.Errorf("want no report, got %q", got)
			case c.want != "" && (len(got) != 1 || !strings.Contains(got[0], c.want) || !strings.Contains(got[0], p.ImportPath)):
				t.Errorf("want one report naming %s and containing %q, got %q", p.ImportPath, c.want, got)
			}
		})
	}
}

func TestMatch(t *testing.T) {
	cases := []struct {
		pattern, rel string
		want         bool
	}{
		{"...", "anything/at/all", true},
		{"sim/...", "sim", true},
		{"sim/...", "sim/fake", true},
		{"sim/...", "simulator", false},
		{"media/transport/...", "media/transport/rtp", true},
		{"media/transport/...", "media/codec", false},
		{"messages", "messages", true},
		{"messages", "messages/sub", false},
	}
	for _, c := range cases {
		if got := Match(c.pattern, c.rel); got != c.want {
			t.Errorf("Match(%q, %q) = %v, want %v", c.pattern, c.rel, got, c.want)
		}
	}
}

// TestLayerRulesBite shows each rule of layerRules reporting a synthetic
// violation, and staying quiet on a nearby legal import. Every rule must
// have a case here.
func TestLayerRulesBite(t *testing.T) {
	const mod = "example.com/m"
	cases := []struct {
		rule      string
		from      string
		bad, good string // module-relative imports
	}{
		{"messages-is-the-bottom", "messages", "agent", "messages/wire"},
		{"agent-sees-only-messages", "agent/memory", "providers", "messages"},
		{"providers-know-no-runtime", "providers/openai", "actors/call", "agent"},
		{"providers-know-no-runtime", "providers", "sip/dialog", "messages"},
		// The transports are named one by one (caught: the rule forbidding
		// a media/transport/... folder that never existed).
		{"providers-know-no-runtime", "providers/stt/x", "media/webrtc", "media/opus"},
		{"providers-know-no-runtime", "providers/tts/x", "media/carrier/twilio", "media"},
		{"providers-know-no-runtime", "providers", "media/conn", "media/g722"},
		{"providers-know-no-runtime", "providers", "cmd/brisvox/cli", "agent"},
		{"media-below-actors", "media/codec", "actors", "messages"},
		{"media-below-actors", "media", "sim/fake", "media/codec"},
		{"media-below-actors", "media", "cmd/brisvox/cli", "messages"},
		// The transports under media/ are in the rule too: no exception
		// for media/webrtc or media/carrier (caught: an Except of either).
		{"media-below-actors", "media/webrtc", "actors/transport", "media/conn"},
		{"media-below-actors", "media/carrier/twilio", "actors/session", "media/conn"},
		{"media-below-actors", "media/carrier/internal/wscall", "providers", "media"},
		{"media-below-actors", "media/webrtc", "sip/rtp", "media/opus"},
		{"conn-is-a-leaf", "media/conn", "media", "messages"},
		{"sip-sees-only-the-conn", "sip/rtp", "actors/transport", "media/conn"},
		{"sip-sees-only-the-conn", "sip", "providers", "media/g722"},
		{"stages-talk-by-messages", "actors/tools", "actors/llm", "actors/kit"},
		{"fakes-are-a-leaf", "providers/providertest", "providers/internal/wsmock", "providers"},
		{"fakes-are-a-leaf", "providers/providertest", "actors/kit", "agent"},
		{"providers-know-no-runtime", "providers/contracttest", "sim", "providers/providertest"},
		{"jsonlex-is-a-leaf", "agent/jsonlex", "agent", "messages"},
		{"jsonlex-is-a-leaf", "agent/jsonlex", "providers/internal/jsonscan", "messages"},
		{"ngram-is-a-leaf", "providers/stt/pocketsphinx/ngram", "providers/stt/pocketsphinx", "providers/stt/pocketsphinx/ngram/arpa"},
		{"ngram-is-a-leaf", "providers/stt/pocketsphinx/ngram", "providers/llm/rules", "providers/stt/pocketsphinx/ngram/arpa"},
		{"turn-takes-the-policy-from-agent", "actors/turn", "media/eot", "agent/endofturn"},
		{"agentfile-is-configuration", "cmd/internal/agentfile", "actors/llm", "providers/tts/cartesia"},
		{"agentfile-is-configuration", "cmd/internal/agentfile", "sim", "providers"},
		{"records-outside-the-tree", "cmd/internal/records/recording", "actors/transport", "media/conn"},
		{"records-outside-the-tree", "cmd/internal/records", "cmd/internal/serve", "messages"},
		{"records-outside-the-tree", "cmd/internal/records/tracing", "providers", "agent"},
		{"stages-talk-by-messages", "actors/pacer", "actors/transport", "messages"},
		{"stages-talk-by-messages", "actors/switchboard", "actors/session", "actors/kit"},
		{"actors-below-transports", "actors/session", "media/webrtc", "media/conn"},
		{"actors-below-transports", "actors/transport", "sip/rtp", "media"},
		{"actors-below-transports", "actors/tts", "media/carrier/twilio", "providers"},
		{"actors-below-transports", "actors/llm", "sim", "agent"},
		{"nothing-imports-cmd", "actors", "cmd/brisvox/cli", "media"},
		{"production-without-sim", "actors/call", "sim", "providers"},
		// No test support is exempt (caught: an Except of
		// providers/internal/speechtest, providers/... or internal/...).
		{"production-without-sim", "providers/internal/speechtest", "sim", "providers/providertest"},
		{"production-without-sim", "providers/contracttest", "sim", "providers"},
		{"production-without-sim", "internal/goroutines", "sim/scenario", "messages"},
		{"production-without-sim", "cmd/brisvox", "sim", "cmd/internal/serve"},
	}
	covered := map[string]bool{}
	for _, c := range cases {
		idx := slices.IndexFunc(layerRules, func(r Rule) bool { return r.Name == c.rule })
		if idx < 0 {
			t.Fatalf("no rule named %q", c.rule)
		}
		r := layerRules[idx]
		covered[r.Name] = true

		// Through the whole pipeline, on a synthetic module.
		pkgs := []Package{{ImportPath: mod + "/" + c.from, Imports: []string{"fmt", mod + "/" + c.bad, mod + "/" + c.good}}}
		got := CheckRules(mod, pkgs, []Rule{r})
		if len(got) != 1 || got[0].Rule != r.Name || got[0].Importer != c.from || got[0].Imported != c.bad {
			t.Errorf("%s: %s importing %s and %s: want exactly one violation for %s, got %v", r.Name, c.from, c.bad, c.good, c.bad, got)
		}
	}
	for _, r := range layerRules {
		if !covered[r.Name] {
			t.Errorf("rule %q has no case in TestLayerRulesBite", r.Name)
		}
	}

	// Exemptions: the same imports from an exempt package are fine.
	exempt := []struct{ rule, from, imp string }{
		{"nothing-imports-cmd", "cmd/brisvox", "cmd/brisvox/cli"},
		{"production-without-sim", "cmd/brisvox-sim", "sim"},
		{"production-without-sim", "cmd/brisvox-bench", "sim"},
		{"production-without-sim", "sim/scenario", "sim"},
	}
	for _, e := range exempt {
		r := layerRules[slices.IndexFunc(layerRules, func(r Rule) bool { return r.Name == e.rule })]
		if got := CheckRule(mod, e.from, []string{mod + "/" + e.imp}, r); len(got) != 0 {
			t.Errorf("%s: %s importing %s should be exempt, got %v", e.rule, e.from, e.imp, got)
		}
	}
}

// TestCheckRulesReportsEveryViolation checks that violations are not cut
// short: several bad imports over several packages are all reported.
func TestCheckRulesReportsEveryViolation(t *testing.T) {
	const mod = "example.com/m"
	pkgs := []Package{
		{ImportPath: mod + "/messages", Imports: []string{mod + "/agent", mod + "/providers"}},
		{ImportPath: mod + "/providers", Imports: []string{mod + "/actors", mod + "/sim"}},
		{ImportPath: "other.example/x", Imports: []string{mod + "/cmd/brisvox"}}, // outside the module: ignored
	}
	got := CheckRules(mod, pkgs, layerRules)
	var lines []string
	for _, v := range got {
		lines = append(lines, v.String())
	}
	want := []string{
		"[messages-is-the-bottom] messages imports agent",
		"[messages-is-the-bottom] messages imports providers",
		"[providers-know-no-runtime] providers imports actors",
		"[providers-know-no-runtime] providers imports sim",
		"[production-without-sim] providers imports sim",
	}
	if len(lines) != len(want) {
		t.Fatalf("want %d violations, got %d:\n%s", len(want), len(lines), strings.Join(lines, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(lines[i], want[i]+":") {
			t.Errorf("violation %d: want prefix %q, got %q", i, want[i], lines[i])
		}
	}
}

func TestDecodePackagesAndModuleRoot(t *testing.T) {
	pkgs, err := DecodePackages(strings.NewReader(`{"ImportPath":"a","Imports":["b"]}` + "\n" + `{"ImportPath":"b","TestGoFiles":["b_test.go"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) != 2 || pkgs[0].ImportPath != "a" || pkgs[0].Imports[0] != "b" || pkgs[1].HasNonTestFiles() {
		t.Errorf("decoded %+v", pkgs)
	}

	dir := t.TempDir()
	sub := filepath.Join(dir, "x", "y")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("// c\nmodule example.com/m\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root, mp, err := FindModuleRoot(sub)
	if err != nil || mp != "example.com/m" {
		t.Fatalf("FindModuleRoot = %q, %q, %v", root, mp, err)
	}
	if want, _ := filepath.EvalSymlinks(dir); root != dir && root != want {
		t.Errorf("root = %q, want %q", root, dir)
	}
}

// testSupportRoots are the module's test support beyond the naming pattern
// (IsTestSupport): the simulator and the dev commands built on it.
var testSupportRoots = []string{"sim/...", "cmd/brisvox-sim/...", "cmd/brisvox-bench/...", "internal/archtest"}

func TestProductionWithoutTestSupport(t *testing.T) {
	modulePath, pkgs := loadModule(t)
	for _, v := range CheckProductionImports(modulePath, pkgs, testSupportRoots) {
		t.Error(v)
	}
}

// TestProductionImportsBite shows the check reporting production code that
// imports the test driver or test support, and staying quiet for test
// support itself. Mutations caught: "testing/synctest" let through (only
// "testing" matched), the "mock" suffix not recognised, a root ignored.
func TestProductionImportsBite(t *testing.T) {
	const mod = "example.com/m"
	cases := []struct {
		from    string
		imports []string
		bad     []string // the imports reported, in order
	}{
		{"cmd/brisvox", []string{"fmt", "testing", mod + "/agent"}, []string{"testing"}},
		{"cmd/brisvox", []string{"testing/synctest"}, []string{"testing/synctest"}},
		{"cmd/internal/serve", []string{mod + "/sim"}, []string{"sim"}},
		{"providers/tts/cartesia", []string{mod + "/providers/tts/cartesia/cartesiamock", mod + "/providers"}, []string{"providers/tts/cartesia/cartesiamock"}},
		{"actors/llm", []string{mod + "/providers/providertest", mod + "/messages"}, []string{"providers/providertest"}},
		{"providers/llm/internal/loose", []string{"testing"}, []string{"testing"}},
		{"providers/llm/internal/loosetest", []string{"testing"}, nil},
		// Test support may use both.
		{"providers/providertest", []string{"testing", mod + "/internal/goroutinetest"}, nil},
		{"providers/tts/cartesia/cartesiamock", []string{"testing"}, nil},
		{"providers/contracttest", []string{"testing", mod + "/providers/providertest"}, nil},
		{"cmd/brisvox-sim", []string{"testing/synctest", mod + "/sim"}, nil},
		// Only the last element counts: "attest" is a suffix, "testdata" is not.
		{"agent/attest", []string{"testing"}, nil},
		{"agent/testdata/x", []string{"testing"}, []string{"testing"}},
	}
	for _, c := range cases {
		got := CheckProductionImports(mod, []Package{{ImportPath: mod + "/" + c.from, Imports: c.imports}}, testSupportRoots)
		var bad []string
		for _, v := range got {
			bad = append(bad, v.Imported)
		}
		if !slices.Equal(bad, c.bad) {
			t.Errorf("%s importing %v: reported %v, want %v", c.from, c.imports, got, c.bad)
		}
	}
}

// TestRuleWithTestsBites shows a rule with Tests holding a package's test
// imports too, and a rule without it not. Mutation caught: CheckRules
// ignoring Tests (the test imports never read).
func TestRuleWithTestsBites(t *testing.T) {
	const mod = "example.com/m"
	r := layerRules[slices.IndexFunc(layerRules, func(r Rule) bool { return r.Name == "providers-know-no-runtime" })]
	cases := []struct {
		p    Package
		want []string
	}{
		{Package{ImportPath: mod + "/providers/tts/cartesia", XTestImports: []string{mod + "/sim", mod + "/providers/contracttest"}}, []string{"sim"}},
		{Package{ImportPath: mod + "/providers/llm/openai", TestImports: []string{mod + "/actors/kit"}}, []string{"actors/kit"}},
		{Package{ImportPath: mod + "/providers/tts/cartesia", Imports: []string{mod + "/providers"}, XTestImports: []string{mod + "/providers/contracttest", mod + "/providers/providertest"}}, nil},
	}
	for _, c := range cases {
		var got []string
		for _, v := range CheckRules(mod, []Package{c.p}, []Rule{r}) {
			got = append(got, v.Imported)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: reported %v, want %v", c.p.ImportPath, got, c.want)
		}
	}
	r.Tests = false
	if got := CheckRules(mod, []Package{cases[0].p}, []Rule{r}); len(got) != 0 {
		t.Errorf("without Tests the test imports count: %v", got)
	}
}
