package session_test

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/actors/session"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/sim"
)

// TestStagesLastEventsReachTheSession: what a stage sends as it stops
// reaches OnEvent before the call's end. The caller hangs up while
// still speaking: the stt stage reports the audio it sent since the last
// final only as its provider session closes, in its Stopping handler (an
// EventUsage of kind stt), and the call record needs it. Mutation
// caught: the session stopping itself at once at the end (ctx.Stop(self)
// with its stages, as before), which handles the stages' Terminated
// ahead of their queued last messages and drops them now and then: no
// stt usage at all (the test failed in 5 of 5 runs of its 100 calls; one
// call in 10 to 20 lost it in the bubble, H7 measured 1 890 of 2 000 in
// real time).
func TestStagesLastEventsReachTheSession(t *testing.T) {
	for range 100 {
		synctest.Test(t, func(t *testing.T) {
			var mu sync.Mutex
			var evs []messages.CallEvent
			ended := false
			late := 0
			c := call("last words", sim.Action{At: 1500 * time.Millisecond, Do: func(h *sim.Handle) { h.Conn.HangUp() }})
			c.Configure = func(cfg *session.Config) {
				cfg.OnEvent = func(e messages.CallEvent) {
					mu.Lock()
					defer mu.Unlock()
					if ended {
						late++
					}
					evs = append(evs, e)
				}
				onEnd := cfg.OnEnd
				cfg.OnEnd = func(e messages.CallEnded) {
					mu.Lock()
					ended = true
					mu.Unlock()
					onEnd(e)
				}
			}
			r, err := c.Run()
			if r == nil {
				t.Fatalf("run: %v", err)
			}
			mu.Lock()
			defer mu.Unlock()
			var stt time.Duration
			for _, e := range evs {
				if e.Kind == messages.EventUsage && e.Usage != nil && e.Usage.Kind == messages.UsageSTT {
					stt += e.Usage.Audio
				}
			}
			// The caller hung up at 1.5 s, mid-utterance, before any
			// final: all of the stt's audio (sent from the call's start)
			// is reported at its stop.
			if stt < 500*time.Millisecond {
				t.Fatalf("stt usage %v after a hang-up 1 s into the caller's speech: the stage's last event was lost", stt)
			}
			if late != 0 {
				t.Fatalf("%d events after OnEnd", late)
			}
		})
	}
}
