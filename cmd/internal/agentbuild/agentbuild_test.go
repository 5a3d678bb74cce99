package agentbuild

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/brisvox/brisvox/agent/stock"
	"github.com/brisvox/brisvox/cmd/internal/agentfile"
	"github.com/brisvox/brisvox/cmd/internal/serve"
	"github.com/brisvox/brisvox/internal/archtest"
	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/sim"
)

// nonZero is a value the option takes that no config field holds at
// zero: the top of its range, the last of its enum, true.
func nonZero(o providers.Option) providers.Value {
	switch o.Type {
	case providers.TypeString:
		switch {
		case len(o.Enum) > 0:
			return providers.Value{String: o.Enum[len(o.Enum)-1]}
		case len(o.Schemes) > 0:
			return providers.Value{String: o.Schemes[0] + "://host.example.net"}
		}
		return providers.Value{String: "x"}
	case providers.TypeEnv:
		return providers.Value{String: "SOME_KEY"}
	case providers.TypeInt:
		if len(o.Values) > 0 {
			return providers.Value{Int: o.Values[len(o.Values)-1]}
		}
		return providers.Value{Int: int64(o.Max)}
	case providers.TypeFloat:
		return providers.Value{Float: o.Max}
	case providers.TypeBool:
		return providers.Value{Bool: true}
	case providers.TypeDuration:
		return providers.Value{Duration: o.MaxDuration}
	case providers.TypeStrings:
		return providers.Value{Strings: []string{"a"}}
	case providers.TypeInts:
		return providers.Value{Ints: []int64{int64(o.Max)}}
	}
	return providers.Value{}
}

// changed names the fields of two configs that differ ("Voice.Speed"),
// through pointers and nested structs.
func changed(a, b reflect.Value, prefix string) []string {
	for a.Kind() == reflect.Pointer || b.Kind() == reflect.Pointer {
		if a.Kind() != reflect.Pointer || b.Kind() != reflect.Pointer || a.IsNil() || b.IsNil() {
			if reflect.DeepEqual(a.Interface(), b.Interface()) {
				return nil
			}
			if !a.IsNil() {
				b = reflect.New(a.Type().Elem())
			} else {
				a = reflect.New(b.Type().Elem())
			}
		}
		a, b = a.Elem(), b.Elem()
	}
	if a.Kind() != reflect.Struct {
		if reflect.DeepEqual(a.Interface(), b.Interface()) {
			return nil
		}
		return []string{prefix}
	}
	var out []string
	for i := range a.NumField() {
		f := a.Type().Field(i)
		if !f.IsExported() {
			continue
		}
		out = append(out, changed(a.Field(i), b.Field(i), prefix+"."+f.Name)...)
	}
	return out
}

// TestEveryOptionMaps runs every option of every provider's table through
// its setter onto the provider's config and checks that it landed in a
// field of its own: the config changed, in fields no other option of the
// table writes. Mutations: a setter that forgets to set -> the field
// stays zero; a setter copied from the row above that sets the other
// row's field -> two options write the same field; a table published for
// another config type -> "sets a".
func TestEveryOptionMaps(t *testing.T) {
	seen := map[[2]string]bool{}
	n := 0
	for _, p := range agentfile.Providers() {
		key := [2]string{p.Stage, p.Name}
		b, ok := builders[key]
		if !ok {
			t.Errorf("schema provider %s %q has no builder", p.Stage, p.Name)
			continue
		}
		seen[key] = true
		writes := map[string]string{} // field -> option
		for _, o := range p.Table.List {
			cfg := b.config(0)
			if err := p.Table.Apply(cfg, map[string]providers.Value{o.Name: nonZero(o)}); err != nil {
				t.Errorf("%s %s: %v", p.Stage, p.Name, err)
				continue
			}
			fields := changed(reflect.ValueOf(cfg), reflect.ValueOf(b.config(0)), "")
			if len(fields) == 0 {
				t.Errorf("%s %s: option %s changed nothing in the config", p.Stage, p.Name, o.Name)
			}
			for _, f := range fields {
				if other, dup := writes[f]; dup {
					t.Errorf("%s %s: options %s and %s both write %s", p.Stage, p.Name, other, o.Name, f)
				}
				writes[f] = o.Name
			}
			n++
		}
	}
	for key := range builders {
		if !seen[key] {
			t.Errorf("builder %v is not in the file schema", key)
		}
	}
	if n < 100 {
		t.Errorf("only %d options mapped: the schema lost its options?", n)
	}
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	root, _, err := archtest.FindModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// keys sets dummy values of every key and token variable the examples
// name: the constructors read them (never sent anywhere here).
func keys(t *testing.T) {
	for _, v := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "DEEPGRAM_API_KEY", "CARTESIA_API_KEY", "ELEVENLABS_API_KEY"} {
		t.Setenv(v, "test-key-not-real")
	}
	// local-openai.toml guards its offer with a token (32 characters at least).
	t.Setenv("BRISVOX_WEBRTC_TOKEN", "test-token-not-real-0123456789abcdef")
}

// TestBuildExamples builds every example agent (no I/O: the models are
// loaded by Open, which is not called here).
func TestBuildExamples(t *testing.T) {
	keys(t)
	files, _ := filepath.Glob(filepath.Join(moduleRoot(t), "examples", "agents", "*.*"))
	if len(files) < 6 {
		t.Fatalf("examples: %v", files)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			f, ds := agentfile.Load(path, agentfile.Options{KnownTools: ToolNames()})
			if len(ds) > 0 {
				t.Fatalf("diagnostics:\n%s", ds)
			}
			a, ds := Build(f, Options{})
			if len(ds) > 0 {
				t.Fatalf("build:\n%s", ds)
			}
			if a.Name() == "" || a.llm == nil || a.tts == nil || len(a.stt) != len(Rates(f)) {
				t.Errorf("built %+v", a)
			}
			if err := a.Close(); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestBuildReportsConstructorErrors: what only a provider's constructor
// knows comes back as a diagnostic at the provider's position.
func TestBuildReportsConstructorErrors(t *testing.T) {
	keys(t)
	src := `prompt = "p"
[stt]
provider = "deepgram"
[llm]
provider = "anthropic"
model = "claude"
temperature = 0.5
thinking_budget = 2048
max_tokens = 4096
[tts]
provider = "flite"
[transports.webrtc]
enabled = true
`
	f, ds := agentfile.Parse("bad.toml", []byte(src), agentfile.TOML, agentfile.Options{KnownTools: ToolNames()})
	if len(ds) > 0 {
		t.Fatalf("the file itself is clean, got:\n%s", ds)
	}
	a, ds := Build(f, Options{})
	if a != nil || len(ds) != 1 {
		t.Fatalf("want one diagnostic, got %v", ds)
	}
	d := ds[0]
	if d.Line != 5 || d.Col == 0 || d.Path != "llm" || !strings.Contains(d.Msg, "thinking") {
		t.Errorf("diagnostic %s", d)
	}
}

// ender records end_call requests.
type ender struct{ calls []string }

func (e *ender) EndCall(session, _ string) error { e.calls = append(e.calls, session); return nil }

var _ stock.Ender = (*ender)(nil)

// TestSessionConfig: a call's config carries the file's settings and a
// registry of the enabled tools with the confirmation gate where asked.
func TestSessionConfig(t *testing.T) {
	src := `prompt = "You are a test."
greeting = "Hi there."
[stt]
provider = "pocketsphinx"
[llm]
provider = "rules"
max_rounds = 4
[tts]
provider = "flite"
[vad]
engine = "energy"
threshold = 700
[turn]
end_of_turn_delay = "250ms"
[fillers]
after = "2s"
phrases = ["Hold on."]
[tools]
enabled = ["get_time", "save_note", "end_call"]
confirm = ["save_note"]
[transports.webrtc]
enabled = true
`
	f, ds := agentfile.Parse("s.toml", []byte(src), agentfile.TOML, agentfile.Options{KnownTools: ToolNames()})
	if len(ds) > 0 {
		t.Fatal(ds)
	}
	a := built(t, f)
	conn := loopback(t, 16000)
	cfg, err := a.Session(serve.CallEnv{ID: "c1", Conn: conn})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.LLMConfig.System != "You are a test." || cfg.Greeting != "Hi there." || cfg.LLMConfig.MaxRounds != 4 ||
		cfg.Turn.EndOfTurnDelay != 250*time.Millisecond || cfg.VAD.Threshold != 700 || cfg.VADModel != nil ||
		cfg.LLMConfig.FillerAfter != 2*time.Second || strings.Join(cfg.LLMConfig.Fillers, "|") != "Hold on." {
		t.Errorf("config %+v", cfg)
	}
	var names []string
	for _, s := range cfg.Tools.Specs() {
		names = append(names, s.Name)
		if want := s.Name == "save_note"; s.Confirm != want {
			t.Errorf("%s: Confirm %v, want %v", s.Name, s.Confirm, want)
		}
	}
	if strings.Join(names, ",") != "end_call,get_time,save_note" {
		t.Errorf("tools %v", names)
	}
	// An 8 kHz call has no STT here (webrtc only): refused, not run on a
	// recognizer of the wrong rate.
	narrow := loopback(t, 8000)
	if _, err := a.Session(serve.CallEnv{ID: "c2", Conn: narrow}); err == nil || !strings.Contains(err.Error(), "8000 Hz") {
		t.Errorf("8 kHz call: %v", err)
	}
}

// built builds f, failing the test on any diagnostic; the agent is
// closed at the end of the test.
func built(t *testing.T, f *agentfile.File) *Agent {
	t.Helper()
	a, ds := Build(f, Options{})
	if len(ds) > 0 {
		t.Fatal(ds)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a
}

// loopback is a silent simulated connection at rate, closed at the end of
// the test.
func loopback(t *testing.T, rate int) *sim.Loopback {
	t.Helper()
	c := sim.NewLoopback(sim.LoopbackConfig{Rate: rate}, sim.NewScenario("silence").Silence(time.Second), time.Now())
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// leadConn is a connection that holds audio before the wire.
type leadConn struct{ *sim.Loopback }

func (leadConn) OutputLead() time.Duration { return 40 * time.Millisecond }

// confirmingConn is a connection whose mark echoes confirm playback.
type confirmingConn struct {
	*sim.Loopback
	confirms bool
}

func (c confirmingConn) ConfirmsPlayback() bool { return c.confirms }

// TestSessionLeadMargin: a transport that queues audio (WebRTC's
// prebuffer) widens the pacer's lead margin by its lead, so a word still
// queued at a barge-in is not kept as heard. Mutation: the lead ignored ->
// the default margin.
func TestSessionLeadMargin(t *testing.T) {
	f, ds := agentfile.Load(filepath.Join(moduleRoot(t), "examples", "agents", "local.toml"), agentfile.Options{KnownTools: ToolNames()})
	if len(ds) > 0 {
		t.Fatal(ds)
	}
	f.VAD.Engine.V = "energy" // no Silero pool needed for this
	a := built(t, f)
	lb := loopback(t, 16000)
	plain, err := a.Session(serve.CallEnv{ID: "c1", Conn: lb})
	if err != nil {
		t.Fatal(err)
	}
	lead, err := a.Session(serve.CallEnv{ID: "c2", Conn: leadConn{lb}})
	if err != nil {
		t.Fatal(err)
	}
	if plain.Pacer.LeadMargin != 0 || lead.Pacer.LeadMargin != 60*time.Millisecond {
		t.Errorf("lead margins %v (plain, want the default) and %v (want 60ms)", plain.Pacer.LeadMargin, lead.Pacer.LeadMargin)
	}
	// A carrier whose echoes confirm playback gets position marks; a
	// connection that says it does not, and a plain one, do not.
	// Mutation: the confirmer ignored (ConfirmEvery 0 for all).
	for _, c := range []struct {
		conn conn.Conn
		want time.Duration
	}{{lb, 0}, {confirmingConn{lb, false}, 0}, {confirmingConn{lb, true}, ConfirmEvery}} {
		cfg, err := a.Session(serve.CallEnv{ID: "c3", Conn: c.conn})
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Pacer.ConfirmEvery != c.want {
			t.Errorf("%T: confirm every %v, want %v", c.conn, cfg.Pacer.ConfirmEvery, c.want)
		}
	}
}
