package anthropic_test

import (
	"context"
	"testing"
	"time"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/llm/anthropic"
	m "github.com/brisvox/brisvox/providers/llm/anthropic/anthropicmock"
	"github.com/brisvox/brisvox/providers/llm/internal/llmtest"
	"github.com/brisvox/brisvox/providers/llm/internal/loosetest"
)

// liveBudget bounds a whole live run (four steps, five requests).
const liveBudget = 5 * time.Minute

// TestLive holds the Anthropic API to the loose assertions. It is skipped,
// with a message, unless BRISVOX_LIVE_TESTS=1 and ANTHROPIC_API_KEY is
// set. The model comes from BRISVOX_ANTHROPIC_MODEL. Only counts are
// logged.
func TestLive(t *testing.T) {
	loosetest.Gate(t, anthropic.DefaultAPIKeyEnv)
	cfg := anthropic.Anthropic(loosetest.EnvOr("BRISVOX_ANTHROPIC_MODEL", "claude-haiku-4-5"))
	cfg.FirstEventTimeout = 30 * time.Second
	a, err := anthropic.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx, cancel := context.WithTimeout(t.Context(), liveBudget)
	defer cancel()
	rep, err := loosetest.Run(ctx, a, loosetest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	loosetest.Check(t, rep)
}

// looseScript answers a loose run as a model would, in the order of its
// requests: the plain answer; a text block then two tool_use blocks (the
// parallel calls); the answer after the results; a long answer that stalls
// after its first text delta (the cancel step). broken breaks one of them.
func looseScript(broken string) []m.Response {
	text := m.Response{Lines: m.Text("The sky is blue.")}
	parisArgs := `"Paris"}`
	if broken == "args not JSON" {
		parisArgs = `Paris}`
	}
	tools := m.Response{Lines: []string{
		m.MessageStart(40),
		m.TextStart(0), m.TextDelta(0, "Checking both cities."), m.BlockStop(0),
		m.ToolStart(1, "toolu_a", "get_weather"), m.InputDelta(1, `{"city":`), m.InputDelta(1, parisArgs), m.BlockStop(1),
		m.ToolStart(2, "toolu_b", "get_weather"), m.InputDelta(2, `{"city":"Tokyo"}`), m.BlockStop(2),
		m.MessageDelta("tool_use", 30),
		m.MessageStop(),
	}}
	follow := m.Response{Lines: m.Text("Cloudy in Paris and Tokyo.")}
	// MessageStart, TextStart, the first delta; then the stall.
	long := m.Response{Lines: m.Text("one two three"), Stall: true, StallBefore: 3}
	switch broken {
	case loosetest.BrokenNoEnd:
		text.Lines = text.Lines[:len(text.Lines)-1] // no message_stop
	case loosetest.BrokenFollowUp:
		follow.Lines = []string{m.MessageStart(60), m.MessageDelta("end_turn", 1), m.MessageStop()}
	}
	return []m.Response{text, tools, follow, long}
}

// TestLooseOverMock runs the live test's loose assertions against the
// mock, in virtual time: a plausible script passes, and a broken one
// fails the step it breaks, so the assertions are checked on every run.
// Mutation caught (seen failing): the adapter giving every call fragment
// index 0 (the parallel calls merge and the assembler refuses them).
func TestLooseOverMock(t *testing.T) {
	cases := loosetest.MockCases()
	var srv *m.Server
	loosetest.OverMock(t, cases, func(t *testing.T, broken string) providers.LLM {
		var dial llmtest.DialFunc
		srv, dial = llmtest.Piped(t, m.NewWithListener, looseScript(broken)...)
		return llmtest.Open(t, anthropic.New, anthropic.Config{BaseURL: srv.URL(), Model: "mock-model", DialContext: dial}, nil)
	}, func(t *testing.T, _ loosetest.Report) {
		reqs := srv.Requests()
		if len(reqs) != 4 {
			t.Fatalf("%d requests, want 4", len(reqs))
		}
		if n := countBlocks(reqs[2], "tool_result"); n != 2 {
			t.Fatalf("the follow-up carries %d tool results, want 2", n)
		}
	})
}

// countBlocks counts the content blocks of type typ in a parsed messages
// request.
func countBlocks(req map[string]any, typ string) int {
	msgs, _ := req["messages"].([]any)
	n := 0
	for _, x := range msgs {
		msg, _ := x.(map[string]any)
		blocks, _ := msg["content"].([]any)
		for _, b := range blocks {
			if bm, ok := b.(map[string]any); ok && bm["type"] == typ {
				n++
			}
		}
	}
	return n
}
