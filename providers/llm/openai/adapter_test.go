package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/llm/internal/llmtest"
	m "github.com/brisvox/brisvox/providers/llm/openai/openaimock"
)

// TestRequestBody checks the request as the server parses it: roles,
// merged assistants, engine call ids on both sides, tool messages, a late
// system note kept in place, tools in the given order, the options.
// Mutations caught: sending ProviderID instead of the engine id, not
// merging adjacent assistants, dropping mid-conversation system messages,
// sorting tools, omitting reasoning_effort "none" or include_usage.
func TestRequestBody(t *testing.T) {
	srv := newMock(t)
	temp := 0.3
	a := newAdapter(t, srv, func(c *Config) {
		c.ReasoningEffort, c.Temperature, c.MaxTokens = "none", &temp, 256
	})
	req := &providers.Request{
		Messages: []agent.Message{
			agent.System("You are terse."),
			agent.User("Weather and time in Paris?"),
			agent.Assistant("Checking.", []messages.ToolCall{{ID: "t1.0", ProviderID: "call_a", Name: "weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}}),
			agent.Assistant("One more.", []messages.ToolCall{{ID: "t1.1", ProviderID: "call_b", Name: "time"}}),
			agent.ToolMessage(messages.ToolResult{CallID: "t1.0", Content: "sunny"}),
			agent.System("Note: a late result arrived."),
			agent.ToolMessage(messages.ToolResult{CallID: "t1.1", Content: "tool failed", IsError: true}),
			{Role: agent.RoleAssistant}, // empty: dropped
		},
		Tools: []providers.ToolDef{
			{Name: "weather", Description: "Weather of a city", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)},
			{Name: "time"},
		},
	}
	if _, err := llmtest.Run(t, a, req); err != nil {
		t.Fatal(err)
	}
	got := srv.Requests()
	if len(got) != 1 {
		t.Fatalf("%d requests", len(got))
	}
	want := `{
	  "model": "mock-model", "stream": true, "stream_options": {"include_usage": true},
	  "temperature": 0.3, "max_tokens": 256, "reasoning_effort": "none",
	  "messages": [
	    {"role": "system", "content": "You are terse."},
	    {"role": "user", "content": "Weather and time in Paris?"},
	    {"role": "assistant", "content": "Checking. One more.", "tool_calls": [
	      {"id": "t1.0", "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Paris\"}"}},
	      {"id": "t1.1", "type": "function", "function": {"name": "time", "arguments": "{}"}}]},
	    {"role": "tool", "tool_call_id": "t1.0", "content": "sunny"},
	    {"role": "system", "content": "Note: a late result arrived."},
	    {"role": "tool", "tool_call_id": "t1.1", "content": "tool failed"}],
	  "tools": [
	    {"type": "function", "function": {"name": "weather", "description": "Weather of a city", "parameters": {"type":"object","properties":{"city":{"type":"string"}}}}},
	    {"type": "function", "function": {"name": "time", "parameters": {"type":"object","properties":{}}}}]
	}`
	var w map[string]any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got[0], w) {
		g, _ := json.MarshalIndent(got[0], "", " ")
		t.Fatalf("request body:\n%s", g)
	}
	if auth := srv.Auth(); len(auth) != 1 || auth[0] != "Bearer "+testKey {
		t.Fatalf("auth headers %q", auth)
	}
}

// TestRequestOptions: max_completion_tokens instead of max_tokens, and the
// options absent when unset; no Authorization without a key.
// Mutation caught: sending temperature 0 or max_tokens 0 when unset.
func TestRequestOptions(t *testing.T) {
	srv := newMock(t)
	a, err := New(Config{BaseURL: srv.URL(), Model: "m", MaxTokens: 50, MaxCompletionTokens: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := llmtest.Run(t, a, llmtest.SimpleRequest()); err != nil {
		t.Fatal(err)
	}
	body := srv.Requests()[0]
	for _, k := range []string{"temperature", "max_tokens", "reasoning_effort", "tools"} {
		if _, ok := body[k]; ok {
			t.Errorf("%s sent: %v", k, body[k])
		}
	}
	if body["max_completion_tokens"] != 50.0 {
		t.Errorf("max_completion_tokens = %v", body["max_completion_tokens"])
	}
	if auth := srv.Auth(); auth[0] != "" {
		t.Errorf("Authorization sent without a key")
	}
}

// TestTimeouts stalls the server before the headers, before the first
// event and between events: each returns the phase's Timeout well before
// the 30 s mock would let go (bounds are generous: 200 ms deadlines,
// 5 s limit).
// Mutations caught: not resetting the timer per event (the idle case
// still passes but the long-stream case below times out), not arming the
// first-event deadline, a wrong phase name.
func TestTimeouts(t *testing.T) {
	const d = 200 * time.Millisecond
	lines := []string{m.TextChunk("a"), m.TextChunk("b")}
	cases := []struct {
		name string
		resp m.Response
		op   string
	}{
		{"headers", m.Response{StallHeaders: true}, "response headers"},
		{"first event", m.Response{Lines: lines, Stall: true, StallBefore: 0}, "first event"},
		{"idle gap", m.Response{Lines: lines, Stall: true, StallBefore: 1}, "event gap"},
		{"before DONE", m.Response{Lines: lines, Stall: true, StallBefore: 2}, "event gap"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newMock(t, tc.resp)
			a := newAdapter(t, srv, func(c *Config) { c.ConnectTimeout, c.FirstEventTimeout, c.IdleTimeout = d, d, d })
			start := time.Now()
			_, err := llmtest.Run(t, a, llmtest.SimpleRequest())
			within(t, time.Since(start), 5*time.Second, "stall")
			var to *providers.Timeout
			if !errors.As(err, &to) || to.Op != tc.op {
				t.Fatalf("err = %v, want Timeout %q", err, tc.op)
			}
		})
	}
}

// TestIdleTimerResets streams 40 events at a steady pace shorter than the
// idle deadline but far longer in total, in virtual time: the stream must
// complete. Mutation caught: arming the idle deadline once instead of per
// event.
func TestIdleTimerResets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lines := make([]string, 40)
		for i := range lines {
			lines[i] = m.TextChunk("x")
		}
		srv, dial := llmtest.Piped(t, m.NewWithListener, m.Response{Lines: lines, Pace: 600 * time.Millisecond})
		a := newAdapter(t, srv, func(c *Config) {
			c.IdleTimeout, c.FirstEventTimeout = time.Second, time.Second
			c.DialContext = dial
		})
		evs, err := llmtest.Run(t, a, llmtest.SimpleRequest())
		if err != nil || len(evs) != 41 {
			t.Fatalf("%d events, err %v", len(evs), err)
		}
	})
}

// TestCancelStopsAtOnce cancels the caller's context while Recv waits on a
// stalled stream with long deadlines: Recv returns context.Canceled
// promptly, and later calls keep returning it.
// Mutation caught: deriving the request from context.Background (Recv
// would wait for the 1 min idle deadline).
func TestCancelStopsAtOnce(t *testing.T) {
	srv := newMock(t, m.Response{Lines: []string{m.TextChunk("a"), m.TextChunk("b")}, Stall: true, StallBefore: 1})
	a := newAdapter(t, srv, func(c *Config) { c.IdleTimeout = time.Minute })
	ctx, cancel := context.WithCancel(t.Context())
	s, err := a.Stream(ctx, llmtest.SimpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if ev, err := s.Recv(); err != nil || ev.Text != "a" {
		t.Fatalf("first event %+v %v", ev, err)
	}
	timer := time.AfterFunc(50*time.Millisecond, cancel)
	defer timer.Stop()
	start := time.Now()
	_, err = s.Recv()
	within(t, time.Since(start), 5*time.Second, "cancel")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if _, err2 := s.Recv(); !errors.Is(err2, context.Canceled) {
		t.Fatalf("second Recv: %v", err2)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Recv(); !errors.Is(err, providers.ErrClosed) {
		t.Fatalf("Recv after Close: %v", err)
	}
}

// TestCallerDeadline: the caller's own deadline is a Timeout that still
// matches context.DeadlineExceeded.
// Mutation caught: returning the bare context error (not a provider
// Timeout) or a Disconnected.
func TestCallerDeadline(t *testing.T) {
	srv := newMock(t, m.Response{Lines: []string{m.TextChunk("a")}, Stall: true, StallBefore: 0})
	a := newAdapter(t, srv, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	s, err := a.Stream(ctx, llmtest.SimpleRequest())
	if err == nil {
		_, err = llmtest.Collect(t, s)
	}
	if !errors.Is(err, providers.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
}

// TestWarmReusesConnection: Warm opens the one connection that the
// following streams use.
// Mutations caught: a new Transport per request, not reading the warm-up
// or the end of a stream to EOF (the connection is not pooled).
func TestWarmReusesConnection(t *testing.T) {
	srv := newMock(t, m.Response{Lines: []string{m.TextChunk("hello"), m.UsageChunk(1, 1, 0)}})
	a := newAdapter(t, srv, nil)
	if err := a.Warm(t.Context()); err != nil {
		t.Fatal(err)
	}
	if srv.Conns() != 1 || srv.WarmHits() != 1 {
		t.Fatalf("after Warm: %d conns, %d warm hits", srv.Conns(), srv.WarmHits())
	}
	for range 3 {
		if _, err := llmtest.Run(t, a, llmtest.SimpleRequest()); err != nil {
			t.Fatal(err)
		}
	}
	if srv.Conns() != 1 {
		t.Fatalf("%d connections accepted, want 1", srv.Conns())
	}
}

// TestWarmRejected: a refused warm-up (bad key) is a Rejected, early.
// Mutation caught: ignoring the warm-up status.
func TestWarmRejected(t *testing.T) {
	srv := newMock(t)
	a := newAdapter(t, srv, func(c *Config) { c.BaseURL += "/nowhere" })
	var rej *providers.Rejected
	if err := a.Warm(t.Context()); !errors.As(err, &rej) || rej.Status != 404 {
		t.Fatalf("err = %v", err)
	}
}

// TestKeyNeverLeaks gathers every error and rendering of the adapter and
// checks none holds the key.
// Mutation caught: removing Adapter.String/GoString (fmt prints the key
// field), putting the key in an error.
func TestKeyNeverLeaks(t *testing.T) {
	srv := newMock(t,
		m.Response{Status: 401, ErrorBody: "bad key " + testKey},
		m.Response{Lines: []string{`{"error":{"message":"key ` + testKey + ` revoked"}}`}},
		m.Response{Lines: []string{m.TextChunk("a")}, Cut: true},
		m.Response{Lines: []string{"{" + testKey}},
	)
	a := newAdapter(t, srv, func(c *Config) { c.IdleTimeout = time.Second })
	var out []string
	for range 4 {
		_, err := llmtest.Run(t, a, llmtest.SimpleRequest())
		if err == nil {
			t.Fatal("fault did not fail")
		}
		out = append(out, err.Error(), fmt.Sprintf("%+v %#v", err, err))
	}
	out = append(out, fmt.Sprintf("%v %+v %#v %s", a, a, a, a))
	_, err := New(Config{BaseURL: srv.URL(), Model: "m", APIKeyEnv: "BRISVOX_TEST_UNSET_KEY"})
	if !errors.Is(err, ErrMissingKey) {
		t.Fatalf("missing key: %v", err)
	}
	out = append(out, err.Error())
	for _, s := range out {
		if strings.Contains(s, "SECRET") {
			t.Fatalf("key leaked: %s", s)
		}
	}
}

// TestNoGoroutineLeak runs many streams, faults included, and checks
// that nothing the adapter started is left once it and the server are
// closed.
// Mutation caught: Close neither cancelling the request nor closing the
// body (the abandoned streams' connections and their goroutines stay).
func TestNoGoroutineLeak(t *testing.T) {
	srv := m.New(
		m.Response{Lines: []string{m.TextChunk("a"), m.TextChunk("b")}},
		m.Response{Lines: []string{m.TextChunk("a")}, Stall: true, StallBefore: 1},
		m.Response{Lines: []string{m.TextChunk("a")}, Cut: true},
		m.Response{Lines: []string{m.TextChunk("a"), m.UsageChunk(1, 2, 0)}},
	)
	defer srv.Close()
	// The server's goroutines are not the adapter's: checked before it
	// closes, which would end the client's connections for it.
	before := goleak.IgnoreCurrent()
	t.Setenv(testKeyEnv, testKey)
	a, err := New(Config{BaseURL: srv.URL(), Model: "m", APIKeyEnv: testKeyEnv, IdleTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		s, err := a.Stream(t.Context(), llmtest.SimpleRequest())
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			_, _ = llmtest.Collect(t, s) // to the end
		} else {
			_, _ = s.Recv() // abandoned after one event
			_ = s.Close()
		}
	}
	_ = a.Close()
	goleak.VerifyNone(t, before)
}

// TestConfigValidate names the refused configs; the presets are valid.
// Mutation caught: dropping a Validate check.
func TestConfigValidate(t *testing.T) {
	ok := Config{BaseURL: "http://127.0.0.1:1/v1", Model: "m"}
	neg := -1.0
	cases := []struct {
		name string
		edit func(*Config)
	}{
		{"no base", func(c *Config) { c.BaseURL = "" }},
		{"ftp base", func(c *Config) { c.BaseURL = "ftp://x/v1" }},
		{"credentials in URL", func(c *Config) { c.BaseURL = "https://u:p@x/v1" }},
		{"no model", func(c *Config) { c.Model = " " }},
		{"negative timeout", func(c *Config) { c.IdleTimeout = -1 }},
		{"tiny line bound", func(c *Config) { c.MaxLineBytes = 10 }},
		{"negative tokens", func(c *Config) { c.MaxTokens = -1 }},
		{"temperature", func(c *Config) { c.Temperature = &neg }},
		{"effort", func(c *Config) { c.ReasoningEffort = "max" }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.edit(&c)
			if err := c.Validate(); !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("Validate = %v", err)
			}
			if _, err := New(c); !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("New = %v", err)
			}
		})
	}
	t.Setenv("OLLAMA_BASE_URL", "http://gpu-box:11434/v1")
	for _, c := range []Config{OpenAI("gpt-4.1-mini"), OpenRouter("openai/gpt-4.1-mini"), Ollama("llama3.2"), VLLM("qwen")} {
		if err := c.Validate(); err != nil {
			t.Errorf("preset %+v: %v", c, err)
		}
	}
	if c := Ollama("x"); c.BaseURL != "http://gpu-box:11434/v1" || c.APIKeyEnv != "" {
		t.Errorf("Ollama preset %+v", c)
	}
	if c := OpenAI("x"); c.APIKeyEnv != "OPENAI_API_KEY" {
		t.Errorf("OpenAI preset %+v", c)
	}
}
