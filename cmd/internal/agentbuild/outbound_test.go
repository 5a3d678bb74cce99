package agentbuild

import (
	"errors"
	"testing"
	"time"

	"github.com/brisvox/brisvox/cmd/internal/agentfile"
	"github.com/brisvox/brisvox/cmd/internal/serve"
)

var _ serve.VariableChecker = (*Agent)(nil)

// TestSessionOutbound: a call we placed gets its variables in the prompt
// and in [outbound]'s greeting, which waits first_words_wait for the
// callee unless speak_first (and the dial did not ask to wait); a call
// that came in reads the placeholders as empty text and greets at once;
// a dial missing a variable is refused by CheckVariables, naming it.
// Mutations caught: the variables not expanded (the prompt keeps
// {{name}}), the top-level greeting used on outbound calls, the wait
// applied to speak_first, wait_for_callee ignored.
func TestSessionOutbound(t *testing.T) {
	src := func(outbound string) string {
		return `name = "Reminders"
prompt = "You call {{name}} about the visit on {{day}}."
greeting = "Hello, how can I help?"
[stt]
provider = "pocketsphinx"
[llm]
provider = "rules"
[tts]
provider = "flite"
[vad]
engine = "energy"
[outbound]
greeting = "Hi {{name}}, this is the clinic."
` + outbound + `
[transports.webrtc]
enabled = true
`
	}
	f, ds := agentfile.Parse("o.toml", []byte(src(`first_words_wait = "3s"`)), agentfile.TOML, agentfile.Options{KnownTools: ToolNames()})
	if len(ds) > 0 {
		t.Fatal(ds)
	}
	a := built(t, f)
	vars := map[string]string{"name": "Ada", "day": "Monday"}
	cfg, err := a.Session(serve.CallEnv{ID: "o1", Conn: loopback(t, 16000), Dial: &serve.DialRequest{Variables: vars}})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.LLMConfig.System != "You call Ada about the visit on Monday." || cfg.Greeting != "Hi Ada, this is the clinic." || cfg.GreetAfter != 3*time.Second {
		t.Errorf("outbound: prompt %q greeting %q after %v", cfg.LLMConfig.System, cfg.Greeting, cfg.GreetAfter)
	}
	in, err := a.Session(serve.CallEnv{ID: "i1", Conn: loopback(t, 16000)})
	if err != nil {
		t.Fatal(err)
	}
	if in.LLMConfig.System != "You call  about the visit on ." || in.Greeting != "Hello, how can I help?" || in.GreetAfter != 0 {
		t.Errorf("inbound: prompt %q greeting %q after %v", in.LLMConfig.System, in.Greeting, in.GreetAfter)
	}
	if err := a.CheckVariables(map[string]string{"name": "Ada"}); !errors.Is(err, agentfile.ErrMissingVariable) || err.Error() == "" {
		t.Errorf("a dial without day: %v", err)
	}
	if err := a.CheckVariables(vars); err != nil {
		t.Errorf("a dial with every variable: %v", err)
	}

	f, ds = agentfile.Parse("o.toml", []byte(src("speak_first = true")), agentfile.TOML, agentfile.Options{KnownTools: ToolNames()})
	if len(ds) > 0 {
		t.Fatal(ds)
	}
	a = built(t, f)
	first, err := a.Session(serve.CallEnv{ID: "o2", Conn: loopback(t, 16000), Dial: &serve.DialRequest{Variables: vars}})
	if err != nil {
		t.Fatal(err)
	}
	waited, err := a.Session(serve.CallEnv{ID: "o3", Conn: loopback(t, 16000), Dial: &serve.DialRequest{Variables: vars, WaitForCallee: true}})
	if err != nil {
		t.Fatal(err)
	}
	// wait_for_callee waits the default first_words_wait (4 s): the
	// file, speaking first, sets none.
	if first.GreetAfter != 0 || waited.GreetAfter != 4*time.Second {
		t.Errorf("speak_first: after %v; with wait_for_callee: %v", first.GreetAfter, waited.GreetAfter)
	}
}
