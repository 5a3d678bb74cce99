package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/providers"
	m "github.com/brisvox/brisvox/providers/llm/anthropic/anthropicmock"
	"github.com/brisvox/brisvox/providers/llm/internal/llmtest"
)

// TestStreamAssembles streams text and two parallel tool_use blocks whose
// input deltas interleave and split inside JSON strings (and inside a
// \u escape), with a ping between; the assembler gets the text, both calls
// whole with the provider's ids at call indexes 0 and 1 (content indexes
// 1 and 2), and the usage. Also checks the key and version headers.
// Mutations seen failing: the call index taken from the content block
// index (the calls come out at indexes 1 and 2); the usage's input tokens
// not kept from message_start (InputTokens 0).
func TestStreamAssembles(t *testing.T) {
	lines := []string{
		m.MessageStart(42), m.Ping(),
		m.TextStart(0), m.TextDelta(0, "Checking "), m.TextDelta(0, "both."), m.BlockStop(0),
		m.ToolStart(1, "toolu_A", "weather"), m.ToolStart(2, "toolu_B", "time"),
		m.InputDelta(1, `{"city":"Pa`), m.InputDelta(2, `{"tz":"Europe/`),
		m.InputDelta(1, `ris \u00`), m.InputDelta(2, `Paris"}`),
		m.Ping(),
		m.InputDelta(1, `e9"}`), m.BlockStop(2), m.BlockStop(1),
		m.MessageDelta("tool_use", 17), m.MessageStop(),
	}
	synctest.Test(t, func(t *testing.T) {
		a, srv := piped(t, nil, m.Response{Lines: lines})
		evs, err := llmtest.Run(t, a, llmtest.SimpleRequest())
		if err != nil {
			t.Fatal(err)
		}
		// The stop reason rides on Done. (Mutation seen failing: Done
		// without message_delta's stop_reason.)
		if last := evs[len(evs)-1]; last.Kind != providers.LLMDone || last.StopReason != "tool_use" {
			t.Fatalf("last event %+v, want Done with stop reason tool_use", last)
		}
		var usage *providers.Usage
		for i := range evs {
			if evs[i].Kind == providers.LLMUsage {
				usage = &evs[i].Usage
			}
			if evs[i].Kind == providers.LLMProviderData {
				t.Errorf("provider data without thinking: %s", evs[i].ProviderData)
			}
		}
		if usage == nil || usage.InputTokens != 42 || usage.OutputTokens != 17 {
			t.Errorf("usage %+v, want 42 in, 17 out", usage)
		}
		r := llmtest.Assemble(t, evs)
		if r.Text != "Checking both." {
			t.Errorf("text %q", r.Text)
		}
		if len(r.Calls) != 2 {
			t.Fatalf("%d calls: %+v", len(r.Calls), r.Calls)
		}
		want := []struct{ id, name, args string }{
			{"toolu_A", "weather", `{"city":"Paris \u00e9"}`},
			{"toolu_B", "time", `{"tz":"Europe/Paris"}`},
		}
		for i, w := range want {
			c := r.Calls[i]
			if c.Invalid != nil || c.Index != i || c.Call.ID != w.id || c.Call.Name != w.name || string(c.Call.Arguments) != w.args {
				t.Errorf("call %d: %+v (invalid %+v), want %+v", i, c.Call, c.Invalid, w)
			}
		}
		if got := srv.Auth(); len(got) != 1 || got[0] != testKey {
			t.Errorf("x-api-key headers %q", got)
		}
		if got := srv.Versions(); len(got) != 1 || got[0] != DefaultVersion {
			t.Errorf("anthropic-version headers %q", got)
		}
	})
}

// TestThinkingRoundTrip streams two thinking blocks (one redacted) before
// the text: no thinking text is spoken; one provider-data event, just
// before Done, holds both blocks verbatim with the signature; the
// assembler keeps it; the next request sends the blocks back at the start
// of that assistant message, byte for byte. Mutations seen failing: the
// thinking deltas emitted as LLMText (the text has the thoughts); the
// signature delta dropped (signature ""); the provider data emitted at
// each content_block_stop, growing (the assembler refuses the second
// value: ErrResponseProviderDataConflict).
func TestThinkingRoundTrip(t *testing.T) {
	lines := []string{
		m.MessageStart(5),
		m.ThinkingStart(0), m.ThinkingDelta(0, "The caller wants "), m.ThinkingDelta(0, "the hours."), m.SignatureDelta(0, "EqQBCgIYAhIM"), m.BlockStop(0),
		m.RedactedThinking(1, "cmVkYWN0ZWQ="), m.BlockStop(1),
		m.TextStart(2), m.TextDelta(2, "We open at nine."), m.BlockStop(2),
		m.MessageDelta("end_turn", 30), m.MessageStop(),
	}
	const wantData = `{"thinking":[{"type":"thinking","thinking":"The caller wants the hours.","signature":"EqQBCgIYAhIM"},{"type":"redacted_thinking","data":"cmVkYWN0ZWQ="}]}`
	synctest.Test(t, func(t *testing.T) {
		a, srv := piped(t, func(c *Config) { c.MaxTokens, c.ThinkingBudget = 4096, 2048 }, m.Response{Lines: lines}, m.Response{Lines: m.Text("ok")})
		evs, err := llmtest.Run(t, a, llmtest.SimpleRequest())
		if err != nil {
			t.Fatal(err)
		}
		n := len(evs)
		if n < 2 || evs[n-2].Kind != providers.LLMProviderData || evs[n-1].Kind != providers.LLMDone {
			t.Fatalf("events end %+v, want provider data then Done", evs[max(n-2, 0):])
		}
		if got := string(evs[n-2].ProviderData); got != wantData {
			t.Fatalf("provider data\n got %s\nwant %s", got, wantData)
		}
		r := llmtest.Assemble(t, evs)
		if r.Text != "We open at nine." {
			t.Errorf("spoken text %q", r.Text)
		}
		if string(r.ProviderData) != wantData {
			t.Errorf("assembled provider data %s", r.ProviderData)
		}
		asst := agent.Assistant(r.Text, nil)
		asst.ProviderData = r.ProviderData
		req := &providers.Request{Messages: []agent.Message{agent.User("hours?"), asst, agent.User("thanks")}}
		if _, err := llmtest.Run(t, a, req); err != nil {
			t.Fatal(err)
		}
		sent := srv.Requests()[1]["messages"].([]any)[1].(map[string]any)["content"].([]any)
		var pd struct{ Thinking []json.RawMessage }
		if err := json.Unmarshal([]byte(wantData), &pd); err != nil {
			t.Fatal(err)
		}
		if len(sent) != 3 {
			t.Fatalf("assistant content %v, want 2 thinking blocks and the text", sent)
		}
		for i, want := range pd.Thinking {
			got, _ := json.Marshal(sent[i])
			var w any
			_ = json.Unmarshal(want, &w)
			wb, _ := json.Marshal(w)
			if !bytes.Equal(got, wb) {
				t.Errorf("content block %d: %s, want %s", i, got, wb)
			}
		}
		if th := srv.Requests()[0]["thinking"]; th == nil {
			t.Errorf("thinking not enabled in the request")
		}
	})
}

// TestStreamErrors maps each failure to its typed error. Mutations seen
// failing: overloaded_error mapped to 500 (the 529 case); an unknown
// error type made a Rejected (the Protocol case); the text_delta kind
// check dropped (the tool-block case); the body's end before message_stop
// taken as a clean end (the Disconnected cases).
func TestStreamErrors(t *testing.T) {
	head := []string{m.MessageStart(1), m.TextStart(0), m.TextDelta(0, "partial ")}
	isRejected := func(status int) func(error) bool {
		return func(err error) bool { var r *providers.Rejected; return errors.As(err, &r) && r.Status == status }
	}
	isProtocol := func(err error) bool { var p *providers.Protocol; return errors.As(err, &p) }
	isDisc := func(err error) bool { var d *providers.Disconnected; return errors.As(err, &d) }
	isTimeout := func(err error) bool { var to *providers.Timeout; return errors.As(err, &to) }
	cases := []struct {
		name string
		resp m.Response
		ok   func(error) bool
	}{
		{"status 401", m.Response{Status: 401, ErrorBody: m.ErrorBody("authentication_error", "invalid x-api-key")}, isRejected(401)},
		{"status 429", m.Response{Status: 429, ErrorBody: m.ErrorBody("rate_limit_error", "slow down")}, isRejected(429)},
		{"status 529", m.Response{Status: 529, ErrorBody: m.ErrorBody("overloaded_error", "overloaded")}, isRejected(529)},
		{"overloaded event", m.Response{Lines: append(head[:3:3], m.ErrorEvent("overloaded_error", "Overloaded"))}, isRejected(529)},
		{"rate limit event", m.Response{Lines: append(head[:3:3], m.ErrorEvent("rate_limit_error", "slow"))}, isRejected(429)},
		{"api error event", m.Response{Lines: append(head[:3:3], m.ErrorEvent("api_error", "oops"))}, isRejected(500)},
		{"invalid request event", m.Response{Lines: append(head[:3:3], m.ErrorEvent("invalid_request_error", "bad"))}, isRejected(400)},
		{"permission event", m.Response{Lines: append(head[:3:3], m.ErrorEvent("permission_error", "no"))}, isRejected(403)},
		{"unknown error event", m.Response{Lines: append(head[:3:3], m.ErrorEvent("strange_error", "?"))}, isProtocol},
		{"malformed JSON", m.Response{Lines: append(head[:3:3], `{"type":"content_block_delta",`)}, isProtocol},
		{"delta of a block not started", m.Response{Lines: []string{m.MessageStart(1), m.TextDelta(3, "x")}}, isProtocol},
		{"text delta in a tool block", m.Response{Lines: []string{m.MessageStart(1), m.ToolStart(0, "toolu_1", "x"), m.TextDelta(0, "x")}}, isProtocol},
		{"block index out of range", m.Response{Lines: []string{m.MessageStart(1), m.TextStart(maxBlocks)}}, isProtocol},
		{"end before message_stop", m.Response{Lines: head}, isDisc},
		{"cut before message_stop", m.Response{Lines: head, Cut: true}, isDisc},
		{"stalled headers", m.Response{StallHeaders: true}, isTimeout},
		{"stalled first event", m.Response{Lines: head, Stall: true, StallBefore: 0}, isTimeout},
		{"stalled mid-stream", m.Response{Lines: head, Stall: true, StallBefore: 2}, isTimeout},
		{"a last line without its end", m.Response{Raw: "data: {\"type\":\"message_start\"}"}, isDisc},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, _ := piped(t, nil, c.resp)
				_, err := llmtest.Run(t, a, llmtest.SimpleRequest())
				if !c.ok(err) {
					t.Fatalf("error %v (%T)", err, err)
				}
				if err != nil && strings.Contains(err.Error(), testKey) {
					t.Fatalf("the key leaks: %v", err)
				}
			})
		})
	}
}

// TestKeyRedacted: a refusal that echoes the key quotes the service
// without it, and the adapter's renderings hold no key. Mutation seen
// failing: excerpt given "" instead of the key (the key in the error).
func TestKeyRedacted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, _ := piped(t, nil, m.Response{Status: 401, ErrorBody: m.ErrorBody("authentication_error", "bad key "+testKey)})
		_, err := llmtest.Run(t, a, llmtest.SimpleRequest())
		var r *providers.Rejected
		if !errors.As(err, &r) || r.Status != 401 {
			t.Fatalf("error %v", err)
		}
		if strings.Contains(err.Error(), testKey) || !strings.Contains(err.Error(), "[redacted]") {
			t.Fatalf("error %q", err)
		}
		for _, s := range []string{a.String(), a.GoString()} {
			if strings.Contains(s, testKey) {
				t.Fatalf("rendering %q holds the key", s)
			}
		}
	})
}

// TestWarmReusesConnection: Warm's GET of the model list leaves the one
// connection that the next Stream uses, with the key and version sent.
// Mutation seen failing: Warm not reading the body to its end (a second
// connection).
func TestWarmReusesConnection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, srv := piped(t, nil)
		llmtest.WarmReusesConnection(t, a, srv)
		if v := srv.Versions(); len(v) != 2 || v[0] != DefaultVersion {
			t.Fatalf("versions %q", v)
		}
	})
}

// TestIdleTimerResets streams events at a steady pace shorter than the
// idle deadline, for far longer than it: no Timeout. Mutation seen
// failing: the timer armed once for the first event only.
func TestIdleTimerResets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, _ := piped(t, func(c *Config) { c.IdleTimeout, c.FirstEventTimeout = time.Second, time.Second },
			m.Response{Lines: m.Text(strings.Repeat("w ", 40)), Pace: 600 * time.Millisecond})
		if _, err := llmtest.Run(t, a, llmtest.SimpleRequest()); err != nil {
			t.Fatal(err)
		}
	})
}

// TestConfigValidate names the refused configs; the preset is valid.
func TestConfigValidate(t *testing.T) {
	temp := 0.5
	hot := 1.5
	cases := []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"preset", Anthropic("claude"), true},
		{"thinking", Config{BaseURL: DefaultBaseURL, Model: "m", MaxTokens: 4096, ThinkingBudget: 1024}, true},
		{"no model", Config{BaseURL: DefaultBaseURL}, false},
		{"bad url", Config{BaseURL: "ftp://x", Model: "m"}, false},
		{"credentials in url", Config{BaseURL: "https://u:p@x", Model: "m"}, false},
		{"negative timeout", Config{BaseURL: DefaultBaseURL, Model: "m", IdleTimeout: -1}, false},
		{"small line bound", Config{BaseURL: DefaultBaseURL, Model: "m", MaxLineBytes: 10}, false},
		{"negative max tokens", Config{BaseURL: DefaultBaseURL, Model: "m", MaxTokens: -1}, false},
		{"hot temperature", Config{BaseURL: DefaultBaseURL, Model: "m", Temperature: &hot}, false},
		{"small budget", Config{BaseURL: DefaultBaseURL, Model: "m", MaxTokens: 4096, ThinkingBudget: 100}, false},
		{"budget over max tokens", Config{BaseURL: DefaultBaseURL, Model: "m", ThinkingBudget: 2048}, false},
		{"temperature with thinking", Config{BaseURL: DefaultBaseURL, Model: "m", MaxTokens: 4096, ThinkingBudget: 1024, Temperature: &temp}, false},
		{"version with a newline", Config{BaseURL: DefaultBaseURL, Model: "m", Version: "1\nx: y"}, false},
	}
	for _, c := range cases {
		err := c.cfg.Validate()
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrInvalidConfig)) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	t.Setenv(testKeyEnv, "")
	if _, err := New(Config{BaseURL: DefaultBaseURL, Model: "m", APIKeyEnv: testKeyEnv}); !errors.Is(err, ErrMissingKey) || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("missing key: %v", err)
	}
}

// FuzzDecode feeds arbitrary event data to the decoder: it never panics,
// and every failure is a Protocol or a Rejected.
func FuzzDecode(f *testing.F) {
	for _, s := range append(m.Text("a b"), m.ToolStart(0, "id", "n"), m.InputDelta(0, `{"a`), m.ThinkingStart(1), m.SignatureDelta(1, "s"), m.ErrorEvent("api_error", "x"), `{"type":"content_block_start","index":-1}`, `[]`, `null`) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var d decoder
		d.init()
		for _, part := range bytes.Split(data, []byte("\n")) {
			d.events = d.events[:0]
			if err := d.decode(part); err != nil {
				var p *providers.Protocol
				var r *providers.Rejected
				if !errors.As(err, &p) && !errors.As(err, &r) {
					t.Fatalf("error %v (%T)", err, err)
				}
				return
			}
		}
		if d.stopped && len(d.thinking) > 0 {
			if _, err := d.thinkingData(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestStopAtTheTokenLimit: stop_reason max_tokens is providers.StopLength
// on Done, so the engine counts the answer as cut. (Mutation seen failing:
// max_tokens passed on unnormalised.)
func TestStopAtTheTokenLimit(t *testing.T) {
	lines := []string{
		m.MessageStart(5), m.TextStart(0), m.TextDelta(0, "Well, it all"), m.BlockStop(0),
		m.MessageDelta("max_tokens", 3), m.MessageStop(),
	}
	synctest.Test(t, func(t *testing.T) {
		a, _ := piped(t, nil, m.Response{Lines: lines})
		evs, err := llmtest.Run(t, a, llmtest.SimpleRequest())
		if err != nil {
			t.Fatal(err)
		}
		if last := evs[len(evs)-1]; last.Kind != providers.LLMDone || last.StopReason != providers.StopLength {
			t.Fatalf("last event %+v, want Done with StopLength", last)
		}
	})
}
