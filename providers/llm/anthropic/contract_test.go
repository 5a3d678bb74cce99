package anthropic_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/brisvox/brisvox/providers/contracttest"
	"github.com/brisvox/brisvox/providers/llm/anthropic"
	m "github.com/brisvox/brisvox/providers/llm/anthropic/anthropicmock"
	"github.com/brisvox/brisvox/providers/llm/internal/llmmock"
	"github.com/brisvox/brisvox/providers/llm/internal/llmtest"
	"github.com/brisvox/brisvox/providers/providertest"
)

// The suite's harness is llmtest's over anthropicmock: every request takes
// the next scripted response ("ok" when none is left) and the next
// injected fault, merged by respond.
var _ contracttest.LLMHarness = (*llmtest.Harness)(nil)

// respond is the mock's answer to a request of the suite: r streamed as
// the service does, with f (if any) applied.
func respond(r contracttest.Response, f providertest.Fault) m.Response {
	return faults.Apply(m.Response{Lines: lines(r), Pace: contractPace}, f)
}

// lines streams r as the service does: message_start, a text block with
// one delta per word, then each call as a tool_use block with its input
// in two deltas (cut at a rune boundary), the message_delta and
// message_stop.
func lines(r contracttest.Response) []string {
	out := []string{m.MessageStart(10)}
	block := 0
	if r.Text != "" {
		out = append(out, m.TextStart(block))
		for _, w := range strings.SplitAfter(r.Text, " ") {
			if w != "" {
				out = append(out, m.TextDelta(block, w))
			}
		}
		out = append(out, m.BlockStop(block))
		block++
	}
	for _, c := range r.Calls {
		cut := len(c.Args) / 2
		for cut > 0 && !utf8.RuneStart(c.Args[cut]) {
			cut--
		}
		out = append(out, m.ToolStart(block, c.ID, c.Name), m.InputDelta(block, c.Args[:cut]), m.InputDelta(block, c.Args[cut:]), m.BlockStop(block))
		block++
	}
	reason := "end_turn"
	if len(r.Calls) > 0 {
		reason = "tool_use"
	}
	return append(out, m.MessageDelta(reason, 5), m.MessageStop())
}

// contractPace is the mock's time before each event, as a service's token
// cadence: the starting points of the adapter's deadlines are apart in
// time, so that one armed at the wrong point is off by far more than the
// suite's slack (an idle deadline armed once at Stream's return instead
// of after each event fires 200 ms early at the idle check).
const contractPace = 100 * time.Millisecond

// faults is how the service's stream shows the suite's faults;
// BeforeEvent counts the data lines (message_start and the block starts
// and stops yield no event of their own: lineOfEvent).
var faults = llmmock.FaultWire{
	RefuseBody: func(int) string { return m.ErrorBody("api_error", "refused by the contract suite") },
	Broken:     `{"type":"content_block_delta","index":`,
	LineOf:     lineOfEvent,
}

// lineOfEvent is the index of the line that yields event k of the
// adapter (0: the first line, so a stall before event 0 stalls the whole
// stream); len(ls) past the last.
func lineOfEvent(ls []string, k int) int {
	if k == 0 {
		return 0
	}
	n := 0
	for i, l := range ls {
		var v struct {
			Type         string `json:"type"`
			ContentBlock struct {
				Type string `json:"type"`
			} `json:"content_block"`
		}
		_ = json.Unmarshal([]byte(l), &v)
		switch {
		case v.Type == "content_block_delta", v.Type == "message_delta", v.Type == "message_stop",
			v.Type == "content_block_start" && v.ContentBlock.Type == "tool_use":
			if n == k {
				return i
			}
			n++
		}
	}
	return len(ls)
}

// contractIO is the adapter's deadline for the connect, the first event
// and every gap, as the suite judges it.
const contractIO = 2 * time.Second

// TestContractSuiteOverTheMock runs the provider contract suite over the
// adapter and anthropicmock, joined by an in-memory pipe inside a synctest
// bubble: the suite's timeout checks are judged in virtual time, exactly,
// and the whole suite takes a few real milliseconds. Mutations seen
// failing: the idle deadline not re-armed after each event (streaming:
// a first-event Timeout; timeout/idle: a Timeout 1.6s after the last
// event), Config.DialContext not wired into the transport (every check: a
// DNS lookup of the pipe's address).
func TestContractSuiteOverTheMock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, dial := llmtest.Piped(t, m.NewWithListener)
		a := llmtest.Open(t, anthropic.New, anthropic.Config{
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
