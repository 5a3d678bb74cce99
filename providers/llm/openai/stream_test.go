package openai

import (
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/llm/internal/llmtest"
	m "github.com/brisvox/brisvox/providers/llm/openai/openaimock"
)

// TestStreamAssembles streams text and two parallel calls whose fragments
// interleave and split inside strings, escapes and numbers, with empty id
// and name fields repeated on later fragments, and checks that the
// engine's assembler builds the same calls the model meant.
// Mutations caught: dropping the tool-call Index (fragments of call 1 land
// on call 0), emitting only the first tool call of a chunk, forgetting to
// clear the reused choices between lines (a finish chunk repeats the
// last call fragment), losing usage.
func TestStreamAssembles(t *testing.T) {
	srv := newMock(t, m.Response{Lines: []string{
		m.TextChunk("Let me "),
		m.TextChunk("check."),
		m.ToolChunk(m.Frag{Index: 0, ID: "call_a", Name: "get_weather", Args: `{"city":"Par`}),
		m.ToolChunk(m.Frag{Index: 1, ID: "call_b", Name: "get_time", Args: `{"tz":"Europe\`}),
		m.ToolChunk(m.Frag{Index: 0, Empty: true, Args: `is \"16e`}, m.Frag{Index: 1, Empty: true, Args: `/Paris","n":-1`}),
		m.ToolChunk(m.Frag{Index: 0, Empty: true, Args: `\"","days":1`}),
		m.ToolChunk(m.Frag{Index: 1, Args: `2.5e3}`}, m.Frag{Index: 0, Args: `0}`}),
		m.UsageChunk(120, 30, 64), // before the finish chunk, as some servers send it
		m.FinishChunk("tool_calls"),
	}})
	a := newAdapter(t, srv, nil)
	evs, err := llmtest.Run(t, a, llmtest.SimpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	// The finish reason rides on Done. (Mutation seen failing: Done
	// without the decoder's finish reason.)
	if last := evs[len(evs)-1]; last.Kind != providers.LLMDone || last.StopReason != "tool_calls" {
		t.Fatalf("last event %+v, want Done with stop reason tool_calls", last)
	}
	var usage []providers.Usage
	for _, ev := range evs {
		if ev.Kind == providers.LLMUsage {
			usage = append(usage, ev.Usage)
		}
	}
	if want := []providers.Usage{{InputTokens: 120, OutputTokens: 30, CachedInputTokens: 64}}; !reflect.DeepEqual(usage, want) {
		t.Fatalf("usage %+v, want %+v", usage, want)
	}
	r := llmtest.Assemble(t, evs)
	if r.Text != "Let me check." {
		t.Fatalf("text %q", r.Text)
	}
	want := []struct{ id, name, args string }{
		{"call_a", "get_weather", `{"city":"Paris \"16e\"","days":10}`},
		{"call_b", "get_time", `{"tz":"Europe\/Paris","n":-12.5e3}`},
	}
	if len(r.Calls) != len(want) {
		t.Fatalf("%d calls, want %d: %+v", len(r.Calls), len(want), r.Calls)
	}
	for i, w := range want {
		c := r.Calls[i]
		if c.Invalid != nil || c.Call.ID != w.id || c.Call.Name != w.name || string(c.Call.Arguments) != w.args {
			t.Errorf("call %d = %+v %s (invalid %+v), want %+v", i, c.Call, c.Call.Arguments, c.Invalid, w)
		}
	}
	var args map[string]any
	if err := json.Unmarshal(r.Calls[0].Call.Arguments, &args); err != nil || args["city"] != `Paris "16e"` {
		t.Fatalf("arguments decode to %v (%v)", args, err)
	}
}

// TestStreamFaults maps each injected fault to its typed error.
// Mutations caught: mapping a cut body to io.EOF (a silent short answer),
// letting a bad JSON line pass, removing the line bound (the reader grows
// to hold the line), mapping an error chunk to text.
func TestStreamFaults(t *testing.T) {
	long := `{"choices":[{"index":0,"delta":{"content":"` + strings.Repeat("x", 2000) + `"}}]}`
	cases := []struct {
		name   string
		resp   m.Response
		target error
		want   string
	}{
		{"cut before DONE", m.Response{Lines: []string{m.TextChunk("a")}, Cut: true}, providers.ErrDisconnected, "before [DONE]"},
		{"cut mid line", m.Response{Raw: "data: " + m.TextChunk("a") + "\n\ndata: {\"choi"}, providers.ErrDisconnected, ""},
		{"bad JSON", m.Response{Lines: []string{m.TextChunk("a"), `{"choices":[{`}}, providers.ErrProtocol, "not valid JSON"},
		{"wrong type", m.Response{Lines: []string{`{"choices":[{"delta":{"content":7}}]}`}}, providers.ErrProtocol, "not valid JSON"},
		{"overlong line", m.Response{Lines: []string{long}}, providers.ErrProtocol, "line too long"},
		{"overlong event", m.Response{Raw: "data: " + strings.Repeat("y", 600) + "\ndata: " + strings.Repeat("y", 600) + "\n\n"}, providers.ErrProtocol, "event data over"},
		{"error chunk", m.Response{Lines: []string{`{"error":{"message":"overloaded","code":503}}`}}, providers.ErrRejected, "overloaded"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newMock(t, tc.resp)
			a := newAdapter(t, srv, func(c *Config) { c.MaxLineBytes = 1024 })
			_, err := llmtest.Run(t, a, llmtest.SimpleRequest())
			if !errors.Is(err, tc.target) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %v containing %q", err, tc.target, tc.want)
			}
		})
	}
}

// TestRejectedStatus maps every non-2xx status to Rejected with its status
// and a short excerpt, never the key (the error body echoes it).
// Mutations caught: removing the key redaction, dropping the status.
func TestRejectedStatus(t *testing.T) {
	for _, status := range []int{400, 401, 403, 404, 429, 500, 503} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			body := `{"error":{"message":"Incorrect API key provided: ` + testKey + `. Rate limited.","type":"invalid_request_error"}}`
			srv := newMock(t, m.Response{Status: status, ErrorBody: body})
			a := newAdapter(t, srv, nil)
			_, err := a.Stream(t.Context(), llmtest.SimpleRequest())
			var rej *providers.Rejected
			if !errors.As(err, &rej) || rej.Status != status {
				t.Fatalf("err = %v, want Rejected %d", err, status)
			}
			if strings.Contains(err.Error(), "SECRET") || !strings.Contains(rej.Detail, "Incorrect API key provided: [redacted]") {
				t.Fatalf("detail %q", rej.Detail)
			}
			if got, want := providers.Retryable(err), status == 429 || status >= 500; got != want {
				t.Fatalf("Retryable = %v", got)
			}
		})
	}
}
