package sim

import (
	"errors"
	"fmt"
	"time"

	"github.com/brisvox/brisvox/actors/session"
	"github.com/brisvox/brisvox/providers/providertest"
)

// bargeInStarts are when the caller starts speaking over the long answer
// of the played-text suite, in call time. The answer's first audio comes
// at 2450 ms (speech ends at 1500 ms, plus the default 950 ms) and the
// interrupt follows the speech start by the VAD's 40 ms: so the first
// start interrupts before any audio, the next 10 ms into the first word,
// the others at several points mid-answer, and the last after the answer
// ended.
var bargeInStarts = []time.Duration{2060 * msec, 2420 * msec, 2600 * msec, 2900 * msec, 3300 * msec, 3840 * msec, 5000 * msec, 16 * time.Second}

// answerEnds is after the long answer has played out entirely.
const answerEnds = 15 * time.Second

// answerTail is a barge-in start between the long answer's last frame
// leaving the engine (7.93 s) and the caller hearing its last word (7.97 s,
// behind a 300 ms playout buffer): only a pacer that waits for the end
// mark's echo still takes it as a barge-in, and cuts "closed." out.
const answerTail = 7900 * msec

// playedTextVariant is one way of running the played-text suite.
type playedTextVariant struct {
	name  string
	slack int
	// extra barge-in starts for this variant.
	extra     []time.Duration
	configure func(*session.Config)
	loopback  LoopbackConfig
}

// playedTextVariants: no lead margin (exact), the default 20 ms margin (at
// most one heard word fewer), and a carrier with a 300 ms playout buffer
// whose mark echoes confirm playback (exact: the cut is bounded by the
// newest confirmation plus the time since it came). The exact cases are
// what keeps the slack honest: with a 40 ms margin instead of none, the
// cuts at 2420 ms and 2600 ms lose their last heard word and fail
// (checked); with the confirmations ignored, the confirmed cases claim
// up to 300 ms of unheard words (checked).
var playedTextVariants = []playedTextVariant{
	{name: "exact", configure: func(cfg *session.Config) { cfg.Pacer.NoLeadMargin = true }},
	{name: "margin", slack: 1},
	{
		name: "confirmed", extra: []time.Duration{answerTail},
		configure: func(cfg *session.Config) { cfg.Pacer.ConfirmEvery = 100 * msec },
		loopback:  LoopbackConfig{PlayoutDelay: 300 * msec},
	},
}

// PlayedTextCases is the played-text suite: barge-ins at several points of
// one answer, in each of playedTextVariants. Nothing heard means nothing
// kept; a heard prefix is kept exactly, or with the margin's slack.
func PlayedTextCases() []Case {
	var out []Case
	for _, v := range playedTextVariants {
		for _, start := range append(append([]time.Duration(nil), bargeInStarts...), v.extra...) {
			name := fmt.Sprintf("played_text_%s_at_%dms", v.name, start.Milliseconds())
			out = append(out, Case{Name: name, Slack: v.slack, Build: func() *Call {
				s := NewScenario(name).Silence(500*msec).Speak("Tell me about your opening hours.", 1000*msec).
					Silence(start-1500*msec).Speak("Wait.", 600*msec).Silence(3000 * msec)
				c := base(s, providertest.Response{Text: longAnswer}, providertest.Response{Text: "Okay."})
				c.Configure = v.configure
				c.Loopback = v.loopback
				return c
			}, Check: func(r *Result, c *Call) error {
				interrupts := 1
				if start > answerEnds {
					interrupts = 0
				}
				var errs []error
				errs = append(errs, expect(r, 2, interrupts), equalWords(saidTurn(r, 1), "Okay."))
				if start+40*msec <= 2450*msec+v.loopback.PlayoutDelay {
					errs = append(errs, equalWords(saidTurn(r, 0), "")) // nothing heard, nothing kept
				}
				if interrupts == 0 {
					errs = append(errs, equalWords(saidTurn(r, 0), longAnswer))
				}
				return errors.Join(errs...)
			}})
		}
	}
	return out
}

// DemoCall is the call `brisvox-sim demo` plays: a question answered with a
// tool, then a long answer the caller interrupts.
func DemoCall() *Call {
	s := NewScenario("demo").Silence(500*msec).Speak("What time is it?", 1000*msec).Silence(4500*msec).
		Speak("And when are you open?", 1200*msec).Silence(2600*msec).
		Speak("Thanks, that is all.", 1000*msec).Silence(3000 * msec)
	c := base(s,
		providertest.Response{Text: "Let me check the time.", Calls: []providertest.ScriptedCall{{ID: "call_1", Name: "get_time", Args: `{}`}}},
		providertest.Response{Text: "It is twelve o'clock."},
		providertest.Response{Text: longAnswer},
		providertest.Response{Text: "You're welcome. Goodbye!"})
	c.Tools = mustRegistry(timeTool())
	return c
}
