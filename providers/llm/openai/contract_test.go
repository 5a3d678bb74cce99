package openai_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/brisvox/brisvox/providers/contracttest"
	"github.com/brisvox/brisvox/providers/llm/internal/llmmock"
	"github.com/brisvox/brisvox/providers/llm/internal/llmtest"
	"github.com/brisvox/brisvox/providers/llm/openai"
	m "github.com/brisvox/brisvox/providers/llm/openai/openaimock"
	"github.com/brisvox/brisvox/providers/providertest"
)

// The suite's harness is llmtest's over openaimock: every request takes
// the next scripted response ("ok" when none is left) and the next
// injected fault, merged by respond.
var _ contracttest.LLMHarness = (*llmtest.Harness)(nil)

// respond is the mock's answer to a request of the suite: r streamed as
// the service does, with f (if any) applied.
func respond(r contracttest.Response, f providertest.Fault) m.Response {
	return faults.Apply(m.Response{Lines: lines(r), Pace: contractPace}, f)
}

// lines streams r as the service does: one chunk per word of the text,
// then each call in two fragments (id and name on the first, the
// arguments cut at a rune boundary), then the finish reason.
func lines(r contracttest.Response) []string {
	var out []string
	if r.Text != "" {
		for _, w := range strings.SplitAfter(r.Text, " ") {
			out = append(out, m.TextChunk(w))
		}
	}
	for i, c := range r.Calls {
		cut := len(c.Args) / 2
		for cut > 0 && !utf8.RuneStart(c.Args[cut]) {
			cut--
		}
		out = append(out,
			m.ToolChunk(m.Frag{Index: i, ID: c.ID, Name: c.Name, Args: c.Args[:cut]}),
			m.ToolChunk(m.Frag{Index: i, Args: c.Args[cut:]}))
	}
	reason := "stop"
	if len(r.Calls) > 0 {
		reason = "tool_calls"
	}
	return append(out, m.FinishChunk(reason))
}

// contractPace is the mock's time before each event, as a service's token
// cadence: the starting points of the adapter's deadlines are apart in
// time, so that one armed at the wrong point is off by far more than the
// suite's slack (an idle deadline armed once at Stream's return instead
// of after each event fires 200 ms early at the idle check).
const contractPace = 100 * time.Millisecond

// faults is how the service's stream shows the suite's faults; BeforeEvent
// counts the data lines (one event each, but the finish chunk, which
// yields none).
var faults = llmmock.FaultWire{
	RefuseBody: func(int) string { return `{"error":{"message":"refused by the contract suite","type":"contract"}}` },
	Broken:     `{"choices":[{"delta":`,
}

// contractIO is the adapter's deadline for the connect, the first event
// and every gap, as the suite judges it.
const contractIO = 2 * time.Second

// TestContractSuiteOverTheMock runs the provider contract suite over the
// adapter and openaimock, joined by an in-memory pipe inside a synctest
// bubble: the suite's timeout checks are judged in virtual time, exactly,
// and the whole suite takes a few real milliseconds. Mutations seen
// failing it: the idle deadline not re-armed after each event
// (timeout/idle: a Timeout 1.8s after the last event), a Rejected with
// another status (error_mapping), the request's context detached from the
// caller's (no_goroutine_leak: the abandoned stream's goroutines stay),
// the mock's event counter not counting (cancel), Config.DialContext not
// wired into the transport (every check: a DNS lookup of the pipe's
// address).
func TestContractSuiteOverTheMock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, dial := llmtest.Piped(t, m.NewWithListener)
		a := llmtest.Open(t, openai.New, openai.Config{
			BaseURL:           srv.URL(),
			Model:             "mock-model",
			ConnectTimeout:    contractIO,
			FirstEventTimeout: contractIO,
			IdleTimeout:       contractIO,
			DialContext:       dial,
		}, nil)
		h := llmtest.NewHarness(srv, contractIO, contracttest.Response{Text: "ok"}, respond)
		rep, err := contracttest.RunLLM(context.Background(), a, h, contracttest.Config{})
		if err != nil {
			t.Fatal(err)
		}
		t.Log(rep.String())
		if !rep.Passed() {
			t.Fatalf("the adapter breaks the contract:\n%s", rep)
		}
		if got, want := len(rep.Checks), len(contracttest.LLMCheckNames()); got != want {
			t.Fatalf("%d checks ran, want %d", got, want)
		}
	})
}
