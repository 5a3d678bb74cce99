package gemini_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/providers/contracttest"
	"github.com/brisvox/brisvox/providers/llm/gemini"
	m "github.com/brisvox/brisvox/providers/llm/gemini/geminimock"
	"github.com/brisvox/brisvox/providers/llm/internal/llmmock"
	"github.com/brisvox/brisvox/providers/llm/internal/llmtest"
	"github.com/brisvox/brisvox/providers/providertest"
)

// The suite's harness is llmtest's over geminimock: every request takes
// the next scripted response ("ok" when none is left) and the next
// injected fault, merged by respond.
var _ contracttest.LLMHarness = (*llmtest.Harness)(nil)

// respond is the mock's answer to a request of the suite: r streamed as
// the service does, with f (if any) applied.
func respond(r contracttest.Response, f providertest.Fault) m.Response {
	return faults.Apply(m.Response{Lines: lines(r), Pace: contractPace}, f)
}

// splitWords cuts s into words, each with the space after it.
func splitWords(s string) []string {
	var out []string
	for _, w := range strings.SplitAfter(s, " ") {
		if w != "" {
			out = append(out, w)
		}
	}
	return out
}

// lines streams r as the service does: one chunk per word of text, one
// chunk per call (each whole), then the finishReason chunk with the usage.
// Every chunk but the last yields exactly one event, so event k comes
// from line k; the usage and Done come at the body's end, after the last.
func lines(r contracttest.Response) []string {
	var out []string
	for _, w := range splitWords(r.Text) {
		out = append(out, m.TextChunk(w))
	}
	for _, c := range r.Calls {
		out = append(out, m.Chunk(m.Part{ID: c.ID, Name: c.Name, Args: c.Args}))
	}
	return append(out, m.Finish("STOP", 10, 5, 0))
}

// contractPace is the mock's time before each chunk, as a service's token
// cadence, so deadlines armed at the wrong point are off by far more than
// the suite's slack.
const contractPace = 100 * time.Millisecond

// faults is how the service's stream shows the suite's faults, event k
// acting at lineOfEvent.
var faults = llmmock.FaultWire{
	RefuseBody: func(status int) string { return m.ErrorBody(status, "UNAVAILABLE", "refused by the contract suite") },
	Broken:     `{"candidates":[{"content":`,
	LineOf:     lineOfEvent,
}

// lineOfEvent is the index of the line that yields event k: line k for
// the content chunks; the last line (the finishReason chunk) for the
// usage and Done, which the adapter emits only after it.
func lineOfEvent(ls []string, k int) int {
	return min(k, len(ls)-1)
}

// contractIO is the adapter's deadline for the connect, the first event
// and every gap, as the suite judges it.
const contractIO = 2 * time.Second

// TestContractSuiteOverTheMock runs the provider contract suite over the
// adapter and geminimock, joined by an in-memory pipe inside a synctest
// bubble, so the suite's timeout checks are judged in virtual time.
// Mutations seen failing: the idle deadline not re-armed after each chunk
// (s.arm removed from Recv: the suite fails). (A clean end of the body
// without a finishReason is not in the suite, whose disconnect is a cut;
// TestEndWithoutFinishReason pins it.)
func TestContractSuiteOverTheMock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, dial := llmtest.Piped(t, m.NewWithListener)
		a := llmtest.Open(t, gemini.New, gemini.Config{
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
