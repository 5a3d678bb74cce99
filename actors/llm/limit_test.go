package llm_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/sim"
)

// TestAnswerCutByTheTokenLimit: a response that ends at its token limit is
// spoken as far as it went and counted (responses_cut_by_limit), so an
// operator can raise the limit. (Mutation seen failing: the round not
// reporting the stop reason — the counter stays 0.)
func TestAnswerCutByTheTokenLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := sim.NewScenario("cut-by-limit").Silence(500*time.Millisecond).Speak("Tell me everything.", time.Second).Silence(4 * time.Second)
		r, _ := run(t, s, nil, nil, providertest.Response{Text: "Well, it all began", StopReason: providers.StopLength})
		if got := roles(r.Context); got != "u(Tell me everything.) a(Well, it all began)" {
			t.Errorf("context %s", got)
		}
		for _, ch := range r.Tree.Children {
			if ch.Name == string(messages.StageLLM) && ch.Counters["responses_cut_by_limit"] != 1 {
				t.Errorf("llm counters %v", ch.Counters)
			}
		}
	})
}
