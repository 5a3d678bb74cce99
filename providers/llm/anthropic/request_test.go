package anthropic

import (
	"encoding/json"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers"
)

// thinkingBlob is provider data as the adapter makes it: one thinking
// block with its signature.
const thinkingBlob = `{"thinking":[{"type":"thinking","thinking":"The user wants the weather.","signature":"c2lnLTE="}]}`

// body builds the wire request of msgs and parses it back.
func body(t *testing.T, cfg Config, msgs []agent.Message, tools []providers.ToolDef) map[string]any {
	t.Helper()
	cfg = cfg.withDefaults()
	b, err := buildBody(&cfg, &providers.Request{Messages: msgs, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// compact re-encodes a JSON value compactly, for comparisons.
func compact(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRequestBody checks the body of a conversation with every role:
// system prompt top-level; the round's two tool results in ONE user
// message, first, with the late system note after them; the assistant's
// thinking block first and verbatim; tool_use ids the escaped engine ids,
// matching the tool_result ids; roles alternate; no empty text block; the
// trailing assistant message (a prefill) dropped. Mutations seen failing:
// tool results each in a user message of their own (add without the
// merge: two user turns in a row); the trailing assistant kept; late
// system notes sent as system (role "system" in messages); ToolUseID not applied to
// the tool_result (ids differ).
func TestRequestBody(t *testing.T) {
	calls := []messages.ToolCall{
		{ID: "t1.0", Name: "weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
		{ID: "t1.1", Name: "time", Arguments: json.RawMessage(`not json`)},
	}
	asst := agent.Assistant("Let me check.", calls)
	asst.ProviderData = []byte(thinkingBlob)
	msgs := []agent.Message{
		agent.System("You are a phone agent."),
		agent.System("Be brief."),
		agent.User("Weather in Paris?"),
		agent.User(""),
		asst,
		agent.ToolMessage(messages.ToolResult{CallID: "t1.0", Content: "sunny"}),
		agent.ToolMessage(messages.ToolResult{CallID: "t1.1", Content: "clock down", IsError: true}),
		agent.System("the booking finished late"),
		agent.Assistant("It is sunny.", nil),
		agent.User("Thanks"),
		agent.Assistant("", nil),
		agent.Assistant("prefill", nil),
	}
	tools := []providers.ToolDef{{Name: "weather", Description: "w", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}, {Name: "time"}}
	v := body(t, Config{Model: "m"}, msgs, tools)

	if v["system"] != "You are a phone agent.\n\nBe brief." {
		t.Errorf("system %q", v["system"])
	}
	if v["max_tokens"] != float64(DefaultMaxTokens) || v["stream"] != true || v["model"] != "m" {
		t.Errorf("model/max_tokens/stream: %v %v %v", v["model"], v["max_tokens"], v["stream"])
	}
	if _, ok := v["thinking"]; ok {
		t.Errorf("thinking sent while off")
	}
	want := `[` +
		`{"content":[{"text":"Weather in Paris?","type":"text"}],"role":"user"},` +
		`{"content":[{"signature":"c2lnLTE=","thinking":"The user wants the weather.","type":"thinking"},{"text":"Let me check.","type":"text"},` +
		`{"id":"t1_2E0","input":{"city":"Paris"},"name":"weather","type":"tool_use"},{"id":"t1_2E1","input":{},"name":"time","type":"tool_use"}],"role":"assistant"},` +
		`{"content":[{"content":"sunny","tool_use_id":"t1_2E0","type":"tool_result"},{"content":"clock down","is_error":true,"tool_use_id":"t1_2E1","type":"tool_result"},` +
		`{"text":"[system note] the booking finished late","type":"text"}],"role":"user"},` +
		`{"content":[{"text":"It is sunny.","type":"text"}],"role":"assistant"},` +
		`{"content":[{"text":"Thanks","type":"text"}],"role":"user"}]`
	if got := compact(t, v["messages"]); got != want {
		t.Errorf("messages\n got %s\nwant %s", got, want)
	}
	wantTools := `[{"description":"w","input_schema":{"properties":{"city":{"type":"string"}},"type":"object"},"name":"weather"},{"input_schema":{"properties":{},"type":"object"},"name":"time"}]`
	if got := compact(t, v["tools"]); got != wantTools {
		t.Errorf("tools\n got %s\nwant %s", got, wantTools)
	}
}

// TestRequestMergeLead: merged turns keep the lead blocks first — the
// thinking blocks of a second assistant message before the first one's
// text, a tool result before a user text of the same turn. Mutation seen
// failing: add ignoring lead ("if lead" made "if false": the blocks
// appended in arrival order).
func TestRequestMergeLead(t *testing.T) {
	second := agent.Assistant("b", []messages.ToolCall{{ID: "t2.0", Name: "x", Arguments: json.RawMessage(`{}`)}})
	second.ProviderData = []byte(thinkingBlob)
	msgs := []agent.Message{
		agent.User("u"),
		agent.Assistant("a", nil),
		second,
		agent.User("also"),
		agent.ToolMessage(messages.ToolResult{CallID: "t2.0", Content: "done"}),
	}
	v := body(t, Config{Model: "m"}, msgs, nil)
	want := `[{"content":[{"text":"u","type":"text"}],"role":"user"},` +
		`{"content":[{"signature":"c2lnLTE=","thinking":"The user wants the weather.","type":"thinking"},{"text":"a","type":"text"},{"text":"b","type":"text"},{"id":"t2_2E0","input":{},"name":"x","type":"tool_use"}],"role":"assistant"},` +
		`{"content":[{"content":"done","tool_use_id":"t2_2E0","type":"tool_result"},{"text":"also","type":"text"}],"role":"user"}]`
	if got := compact(t, v["messages"]); got != want {
		t.Errorf("messages\n got %s\nwant %s", got, want)
	}
}

// TestRequestGreetingFirst: a conversation the agent opened (system, the
// greeting, then the caller) gets a user turn OpeningNote before the
// greeting, as the API wants the user first. Mutation seen failing: the
// opening note not inserted (the first message is the assistant's).
func TestRequestGreetingFirst(t *testing.T) {
	v := body(t, Config{Model: "m"}, []agent.Message{agent.System("s"), agent.Assistant("Hello, Acme here.", nil), agent.User("Hi")}, nil)
	want := `[{"content":[{"text":"` + OpeningNote + `","type":"text"}],"role":"user"},` +
		`{"content":[{"text":"Hello, Acme here.","type":"text"}],"role":"assistant"},` +
		`{"content":[{"text":"Hi","type":"text"}],"role":"user"}]`
	if got := compact(t, v["messages"]); got != want {
		t.Errorf("messages\n got %s\nwant %s", got, want)
	}
}

// TestRequestOptions: thinking and temperature as configured. Mutation
// seen failing: budget_tokens not sent (thinking omitted).
func TestRequestOptions(t *testing.T) {
	v := body(t, Config{Model: "m", MaxTokens: 4000, ThinkingBudget: 2048}, []agent.Message{agent.User("hi")}, nil)
	if got := compact(t, v["thinking"]); got != `{"budget_tokens":2048,"type":"enabled"}` {
		t.Errorf("thinking %s", got)
	}
	if v["max_tokens"] != float64(4000) {
		t.Errorf("max_tokens %v", v["max_tokens"])
	}
	temp := 0.5
	v = body(t, Config{Model: "m", Temperature: &temp}, []agent.Message{agent.User("hi")}, nil)
	if v["temperature"] != 0.5 {
		t.Errorf("temperature %v", v["temperature"])
	}
}

// TestRequestRefused: requests that cannot be encoded wrap
// ErrInvalidRequest, through Stream, before any I/O. Mutation seen
// failing: foreign provider data silently dropped (no error).
func TestRequestRefused(t *testing.T) {
	foreign := agent.Assistant("x", nil)
	foreign.ProviderData = []byte(`{"sig":"gemini"}`)
	cases := []struct {
		name string
		req  providers.Request
	}{
		{"no user turn", providers.Request{Messages: []agent.Message{agent.System("s")}}},
		{"only a prefill", providers.Request{Messages: []agent.Message{agent.System("s"), agent.Assistant("x", nil)}}},
		{"foreign provider data", providers.Request{Messages: []agent.Message{agent.User("u"), foreign, agent.User("v")}}},
		{"schema not JSON", providers.Request{Messages: []agent.Message{agent.User("u")}, Tools: []providers.ToolDef{{Name: "x", Parameters: json.RawMessage(`{`)}}}},
		{"unknown role", providers.Request{Messages: []agent.Message{{Role: "robot", Text: "x"}}}},
	}
	synctest.Test(t, func(t *testing.T) {
		a, srv := piped(t, nil)
		for _, c := range cases {
			if _, err := a.Stream(t.Context(), &c.req); !errors.Is(err, ErrInvalidRequest) {
				t.Errorf("%s: %v, want ErrInvalidRequest", c.name, err)
			}
		}
		if _, err := a.Stream(t.Context(), nil); !errors.Is(err, ErrNilRequest) {
			t.Errorf("nil request: %v", err)
		}
		if n := len(srv.Requests()); n != 0 {
			t.Errorf("%d requests sent", n)
		}
	})
}

// TestToolUseID: escaping keeps distinct ids distinct and yields the
// API's alphabet. Mutation seen failing: '_' left unescaped ("a_2E" and
// "a." collide).
func TestToolUseID(t *testing.T) {
	ids := []string{"t1.0", "t1_2E0", "a.", "a_2E", "x-y", "é"}
	seen := map[string]string{}
	for _, id := range ids {
		got := ToolUseID(id)
		for _, c := range got {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
				t.Errorf("ToolUseID(%q) = %q holds %q", id, got, c)
			}
		}
		if prev, dup := seen[got]; dup {
			t.Errorf("ToolUseID(%q) = ToolUseID(%q) = %q", id, prev, got)
		}
		seen[got] = id
	}
}
