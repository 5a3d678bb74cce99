package deepgram

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/providers/internal/speechtest"
)

// TestSlowReaderIsNotATimeout: the caller stops reading Events (its
// buffer full, the reader goroutine blocked handing over a result) for
// three times the result deadline while the service has answered
// everything. That is the caller's delay, not the service's: no Timeout;
// every result arrives once the caller reads again. Mutation caught: the
// result deadline left armed while the reader waits for the caller (the
// session fails with Timeout "result" at 3 s).
func TestSlowReaderIsNotATimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, srv := newPipe(t, func(c *Config) { c.EventBuffer = 1 })
		srv.ScriptText("one two three four")
		s := speechtest.Connect(t, a.Connect)
		for range 4 {
			if err := s.SendAudio(frame(320, 0)); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(3 * testResult) // the caller is busy
		for i := range 4 {
			ev, ok := speechtest.Next(t, s, time.Second)
			if !ok || ev.Err != nil {
				t.Fatalf("event %d: %+v (open %v)", i, ev, ok)
			}
		}
		// More audio still gets its answers: the session is alive.
		if err := s.Finalize(); err != nil {
			t.Fatal(err)
		}
		if ev, ok := speechtest.Next(t, s, time.Second); !ok || !ev.FromFinalize {
			t.Fatalf("after the pause: %+v (open %v)", ev, ok)
		}
	})
}
