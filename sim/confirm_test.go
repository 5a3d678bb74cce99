package sim

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/actors/session"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers/providertest"
)

// pacerCounter reads one of the pacer's counters from the call's tree.
func pacerCounter(t *testing.T, r *Result, name string) uint64 {
	t.Helper()
	if r.Tree == nil {
		t.Fatal("the call was not probed")
	}
	for _, c := range r.Tree.Children {
		if c.Name == string(messages.StagePacer) {
			return c.Counters[name]
		}
	}
	t.Fatal("no pacer in the tree")
	return 0
}

// TestConfirmationsWithoutEchoes: a transport that is said to confirm
// playback but never echoes. An answer that plays to its end is settled
// as played after EndEchoTimeout (counted), so the turn goes on; a
// barge-in keeps nothing, since nothing was confirmed heard. Mutations
// caught: no deadline for the end mark's echo (the answer never settles,
// so the second turn is not taken: 1 turn), a cut with no confirmation
// taken at the clock's position (the cut answer's words kept).
func TestConfirmationsWithoutEchoes(t *testing.T) {
	confirm := func(cfg *session.Config) {
		cfg.Pacer.ConfirmEvery = 100 * msec
		cfg.Pacer.EndEchoTimeout = time.Second
	}
	t.Run("played_out", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := NewScenario("no_echo_end").Silence(500*msec).Speak("Tell me about your opening hours.", 1000*msec).
				Silence(8*time.Second).Speak("Thanks.", 600*msec).Silence(3 * time.Second)
			c := base(s, providertest.Response{Text: longAnswer}, providertest.Response{Text: "Okay."})
			c.Configure, c.Loopback = confirm, LoopbackConfig{MarkAcks: MarkNever}
			r, err := c.Run()
			if err != nil {
				t.Fatal(err)
			}
			if err := expect(r, 2, 0); err != nil {
				t.Fatal(err)
			}
			if err := equalWords(saidTurn(r, 0), longAnswer); err != nil {
				t.Fatal(err)
			}
			if n := pacerCounter(t, r, "end_echo_timeouts"); n != 2 {
				t.Fatalf("end_echo_timeouts %d, want 2 (both answers)", n)
			}
		})
	})
	t.Run("cut", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := NewScenario("no_echo_cut").Silence(500*msec).Speak("Tell me about your opening hours.", 1000*msec).
				Silence(2000*msec).Speak("Wait.", 600*msec).Silence(3 * time.Second)
			c := base(s, providertest.Response{Text: longAnswer}, providertest.Response{Text: "Okay."})
			c.Configure, c.Loopback = confirm, LoopbackConfig{MarkAcks: MarkNever}
			r, err := c.Run()
			if err != nil {
				t.Fatal(err)
			}
			if err := expect(r, 2, 1); err != nil {
				t.Fatal(err)
			}
			if err := equalWords(saidTurn(r, 0), ""); err != nil {
				t.Fatal(err)
			}
			if n := pacerCounter(t, r, "confirmed_cuts"); n != 1 {
				t.Fatalf("confirmed_cuts %d, want 1", n)
			}
		})
	})
}
