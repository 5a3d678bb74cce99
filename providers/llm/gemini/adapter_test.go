package gemini

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers"
	m "github.com/brisvox/brisvox/providers/llm/gemini/geminimock"
	"github.com/brisvox/brisvox/providers/llm/internal/llmtest"
)

// TestRequestShape sends a conversation with a system prompt, a greeting
// first, a round of two parallel calls (with signatures) and their
// results, a late system note and tools, and checks the body the mock
// received. Mutations seen failing: consecutive same-role parts not
// merged (each part a content of its own: the two results apart); the call's
// signature not put back on its part; the schema wrapped or replaced
// instead of sent as parametersJsonSchema as it is; no opening user note.
func TestRequestShape(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, srv := piped(t, nil)
		schema := `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`
		pd, _ := json.Marshal(providerData{TextSignatures: []string{"sigT1", "sigT2"}})
		req := &providers.Request{
			Messages: []agent.Message{
				agent.System("be brief"),
				agent.Assistant("hello, how can I help?", nil),
				agent.User("weather in Paris and Rome?"),
				{Role: agent.RoleAssistant, Text: "checking", ProviderData: pd, ToolCalls: []messages.ToolCall{
					{ID: "c.1", Name: "weather", Arguments: json.RawMessage(`{"city":"Paris"}`), ProviderData: []byte(`"sig/A=="`)},
					{ID: "c.2", Name: "weather", Arguments: json.RawMessage(`{"city":"Rome"}`)},
				}},
				agent.ToolMessage(messages.ToolResult{CallID: "c.1", Content: "sunny"}),
				agent.ToolMessage(messages.ToolResult{CallID: "c.2", Content: "timeout", IsError: true}),
				agent.System("the caller is waiting"),
			},
			Tools: []providers.ToolDef{{Name: "weather", Description: "weather now", Parameters: json.RawMessage(schema)}},
		}
		if _, err := llmtest.Run(t, a, req); err != nil {
			t.Fatal(err)
		}
		reqs := srv.Requests()
		if len(reqs) != 1 {
			t.Fatalf("%d requests", len(reqs))
		}
		got, _ := json.Marshal(reqs[0])
		want := `{"contents":[` +
			`{"parts":[{"text":"[system note] the call has started"}],"role":"user"},` +
			`{"parts":[{"text":"hello, how can I help?"}],"role":"model"},` +
			`{"parts":[{"text":"weather in Paris and Rome?"}],"role":"user"},` +
			`{"parts":[{"text":"checking","thoughtSignature":"sigT2"},` +
			`{"functionCall":{"args":{"city":"Paris"},"id":"c.1","name":"weather"},"thoughtSignature":"sig/A=="},` +
			`{"functionCall":{"args":{"city":"Rome"},"id":"c.2","name":"weather"}}],"role":"model"},` +
			`{"parts":[{"functionResponse":{"id":"c.1","name":"weather","response":{"result":"sunny"}}},` +
			`{"functionResponse":{"id":"c.2","name":"weather","response":{"error":"timeout"}}},` +
			`{"text":"[system note] the caller is waiting"}],"role":"user"}],` +
			`"generationConfig":{"maxOutputTokens":1024},` +
			`"systemInstruction":{"parts":[{"text":"be brief"}]},` +
			`"tools":[{"functionDeclarations":[{"description":"weather now","name":"weather","parametersJsonSchema":` + schema + `}]}]}`
		var w any
		_ = json.Unmarshal([]byte(want), &w)
		wb, _ := json.Marshal(w)
		if string(got) != string(wb) {
			t.Fatalf("body\n%s\nwant\n%s", got, wb)
		}
		if p := srv.Paths(); len(p) != 1 || p[0] != "/v1beta/models/mock-model:streamGenerateContent?alt=sse" {
			t.Fatalf("paths %q", p)
		}
		if k := srv.Auth(); len(k) != 1 || k[0] != testKey {
			t.Fatalf("x-goog-api-key headers %q", k)
		}
	})
}

// TestStreamAssembles streams text, a thought (never spoken), two
// parallel calls in one chunk (one with an id and a signature, one
// without an id) and the finish, and assembles it as the llm actor does.
// Mutations seen failing: the thought part spoken as text; the call
// counter not advanced (the calls merge); the signature not carried as
// the call's provider data; usage emitted per chunk (the assembler sees
// two usages: the count below).
func TestStreamAssembles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, _ := piped(t, nil, m.Response{Lines: []string{
			m.Chunk(m.Part{Text: "planning...", Thought: true}),
			m.TextChunk("Let me "),
			m.Chunk(m.Part{Text: "check.", Signature: "sigText"}),
			m.Chunk(m.Part{ID: "fc-1", Name: "weather", Args: `{"city":"Paris"}`, Signature: "sigCall"}, m.Part{Name: "time", Args: `{"tz":"CET"}`}),
			m.Finish("STOP", 12, 7, 3),
		}})
		evs, err := llmtest.Run(t, a, llmtest.SimpleRequest())
		if err != nil {
			t.Fatal(err)
		}
		usages := 0
		for _, ev := range evs {
			if ev.Kind == providers.LLMUsage {
				usages++
				if ev.Usage != (providers.Usage{InputTokens: 12, OutputTokens: 7, CachedInputTokens: 3}) {
					t.Fatalf("usage %+v", ev.Usage)
				}
			}
		}
		if usages != 1 {
			t.Fatalf("%d usage events, want 1", usages)
		}
		last := evs[len(evs)-1]
		if last.Kind != providers.LLMDone || last.StopReason != "STOP" {
			t.Fatalf("last event %+v", last)
		}
		r := llmtest.Assemble(t, evs)
		if r.Text != "Let me check." {
			t.Fatalf("text %q", r.Text)
		}
		if len(r.Calls) != 2 {
			t.Fatalf("calls %+v", r.Calls)
		}
		c0, c1 := r.Calls[0], r.Calls[1]
		if c0.Call.Name != "weather" || string(c0.Call.Arguments) != `{"city":"Paris"}` || string(c0.ProviderData) != `"sigCall"` {
			t.Fatalf("call 0 %+v", c0)
		}
		if c1.Call.Name != "time" || string(c1.Call.Arguments) != `{"tz":"CET"}` || len(c1.ProviderData) != 0 {
			t.Fatalf("call 1 %+v", c1)
		}
		if string(r.ProviderData) != `{"textSignatures":["sigText"]}` {
			t.Fatalf("provider data %s", r.ProviderData)
		}
		var ids []string
		for _, ev := range evs {
			if ev.Kind == providers.LLMToolCall {
				ids = append(ids, ev.ID)
			}
		}
		if fmt.Sprint(ids) != "[fc-1 gc1]" {
			t.Fatalf("call ids %v", ids)
		}
	})
}

// TestSignaturesRoundTrip: the provider data of a response, stored on the
// assistant message as the engine does, comes back verbatim on the same
// parts of the next request. Mutation seen failing: the call signature
// re-encoded (sent as the JSON string, quotes included).
func TestSignaturesRoundTrip(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sigCall, sigText := "Cr8B+/x=\"odd\"", "EtQ/9=="
		a, srv := piped(t, nil, m.Response{Lines: []string{
			m.Chunk(m.Part{Text: "ok", Signature: sigText}),
			m.Chunk(m.Part{ID: "x", Name: "f", Args: `{}`, Signature: sigCall}),
			m.Finish("STOP", 1, 1, 0),
		}})
		evs, err := llmtest.Run(t, a, llmtest.SimpleRequest())
		if err != nil {
			t.Fatal(err)
		}
		r := llmtest.Assemble(t, evs)
		msg, ok := r.AssistantMessage()
		if !ok {
			t.Fatal("no assistant message")
		}
		// AssistantMessage leaves the calls' provider data on r.Calls;
		// the call carries it to the next request as messages.ToolCall
		// does.
		msg.ToolCalls[0].ID = "engine.1"
		msg.ToolCalls[0].ProviderData = r.Calls[0].ProviderData
		req := &providers.Request{Messages: []agent.Message{
			agent.User("hi"),
			msg,
			agent.ToolMessage(messages.ToolResult{CallID: "engine.1", Content: "done"}),
		}}
		if _, err := llmtest.Run(t, a, req); err != nil {
			t.Fatal(err)
		}
		body, _ := json.Marshal(srv.Requests()[1]["contents"])
		for _, want := range []string{
			`{"text":"ok","thoughtSignature":` + mustQuote(sigText) + `}`,
			`"thoughtSignature":` + mustQuote(sigCall),
		} {
			if !strings.Contains(string(body), want) {
				t.Fatalf("contents %s\nlack %s", body, want)
			}
		}
	})
}

func mustQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestFinishReasons: MAX_TOKENS is providers.StopLength, others pass as
// they are. Mutation seen failing: no normalisation (Done says
// MAX_TOKENS).
func TestFinishReasons(t *testing.T) {
	for _, c := range []struct{ reason, want string }{
		{"MAX_TOKENS", providers.StopLength},
		{"STOP", "STOP"},
		{"SAFETY", "SAFETY"},
	} {
		t.Run(c.reason, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, _ := piped(t, nil, m.Response{Lines: []string{m.TextChunk("cut"), m.Finish(c.reason, 1, 1, 0)}})
				evs, err := llmtest.Run(t, a, llmtest.SimpleRequest())
				if err != nil {
					t.Fatal(err)
				}
				if last := evs[len(evs)-1]; last.Kind != providers.LLMDone || last.StopReason != c.want {
					t.Fatalf("last %+v, want Done %q", last, c.want)
				}
			})
		})
	}
}

// TestEndWithoutFinishReason: a body that ends cleanly before a
// finishReason is a Disconnected, not a complete answer. Mutation seen
// failing: the finished check skipped (the stream ends in Done).
func TestEndWithoutFinishReason(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, _ := piped(t, nil, m.Response{Lines: []string{m.TextChunk("half an ")}})
		evs, err := llmtest.Run(t, a, llmtest.SimpleRequest())
		var d *providers.Disconnected
		if !errors.As(err, &d) {
			t.Fatalf("events %+v, error %v, want Disconnected", evs, err)
		}
	})
}

// TestErrorMapping: a refusal status is a Rejected with a short, key-free
// excerpt; an error object in the stream a Rejected with its code, or a
// Protocol without a valid one; malformed JSON a Protocol. Mutations seen
// failing: the excerpt not redacted (the key shows); an in-stream error
// object ignored (the stream ends in Disconnected).
func TestErrorMapping(t *testing.T) {
	cases := []struct {
		name   string
		resp   m.Response
		status int // Rejected status; 0: a Protocol
	}{
		{"status", m.Response{Status: 400, ErrorBody: m.ErrorBody(400, "INVALID_ARGUMENT", "API key "+testKey+" not valid")}, 400},
		{"in stream", m.Response{Lines: []string{m.TextChunk("a "), m.ErrorBody(503, "UNAVAILABLE", "overloaded")}}, 503},
		{"in stream no code", m.Response{Lines: []string{m.ErrorBody(0, "", "what")}}, 0},
		{"malformed", m.Response{Lines: []string{`{"candidates":[`}}, 0},
		{"args not an object", m.Response{Lines: []string{`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":[1]}}]}}]}`}}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, _ := piped(t, nil, c.resp)
				_, err := llmtest.Run(t, a, llmtest.SimpleRequest())
				if err == nil {
					t.Fatal("no error")
				}
				if strings.Contains(err.Error(), testKey) {
					t.Fatalf("the key leaks: %v", err)
				}
				var rej *providers.Rejected
				var p *providers.Protocol
				switch {
				case c.status != 0 && (!errors.As(err, &rej) || rej.Status != c.status):
					t.Fatalf("error %v, want Rejected %d", err, c.status)
				case c.status == 0 && !errors.As(err, &p):
					t.Fatalf("error %v, want Protocol", err)
				}
			})
		})
	}
}

// TestWarmAndKey: Warm GETs the model list with the key; the adapter's
// String shows no key; New without the key's variable fails naming it.
// Mutation seen failing: the warm-up sent without the key header.
func TestWarmAndKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, srv := piped(t, nil)
		if err := a.Warm(t.Context()); err != nil {
			t.Fatal(err)
		}
		if srv.WarmHits() != 1 || fmt.Sprint(srv.Auth()) != "["+testKey+"]" {
			t.Fatalf("warm hits %d, auth %q", srv.WarmHits(), srv.Auth())
		}
		if s := fmt.Sprintf("%v %#v %+v", a, a, a); strings.Contains(s, testKey) {
			t.Fatalf("the key shows: %s", s)
		}
	})
	t.Setenv("BRISVOX_TEST_GEMINI_NOKEY", "")
	_, err := New(Config{BaseURL: "http://x", Model: "m", APIKeyEnv: "BRISVOX_TEST_GEMINI_NOKEY"})
	if !errors.Is(err, ErrMissingKey) || !strings.Contains(err.Error(), "BRISVOX_TEST_GEMINI_NOKEY") {
		t.Fatalf("error %v", err)
	}
}

// TestConfigValidate names the configs Validate refuses.
func TestConfigValidate(t *testing.T) {
	neg, hot := -2, 2.5
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"no url", Config{Model: "m"}},
		{"query in url", Config{BaseURL: "http://x/?key=1", Model: "m"}},
		{"no model", Config{BaseURL: "http://x"}},
		{"model with a slash", Config{BaseURL: "http://x", Model: "a/b"}},
		{"negative timeout", Config{BaseURL: "http://x", Model: "m", IdleTimeout: -1}},
		{"tiny lines", Config{BaseURL: "http://x", Model: "m", MaxLineBytes: 10}},
		{"hot", Config{BaseURL: "http://x", Model: "m", Temperature: &hot}},
		{"budget", Config{BaseURL: "http://x", Model: "m", ThinkingBudget: &neg}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := c.cfg.Validate(); !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("error %v", err)
			}
		})
	}
	if err := Gemini("gemini-2.5-flash").Validate(); err != nil {
		t.Fatal(err)
	}
}
