package deepgram

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/providers/internal/speechtest"
	"github.com/brisvox/brisvox/providers/internal/wsmock"
	"github.com/brisvox/brisvox/providers/providertest"
)

// The mock's latency (the contract harness's pace) is pipelined: frames
// 20 ms apart are answered 250 ms after each, not 250 ms after the answer
// before, and the final 250 ms after the Finalize; a session's messages
// stay in order, a fault acts when its message falls due, and CloseStream
// still ends the session cleanly. Catches: the latency ignored (every
// answer at 0 ms, and the contract suite no longer sees an idle deadline
// that is not re-armed after each result), serialized (250, 500, 750 ms),
// or not applied to the final.
func TestMockLatencyIsPipelined(t *testing.T) {
	const lat = 250 * time.Millisecond
	t.Run("answers", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			a, srv := newPipe(t, nil)
			srv.SetLatency(lat)
			srv.ScriptText("one two three")
			s := speechtest.Connect(t, a.Connect)
			start := time.Now()
			for i := range 3 {
				if i > 0 {
					time.Sleep(20 * time.Millisecond)
				}
				if err := s.SendAudio(frame(320, 0)); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Finalize(); err != nil {
				t.Fatal(err)
			}
			var at []time.Duration
			var texts []string
			for range 4 {
				ev, ok := speechtest.Next(t, s, time.Second)
				if !ok || ev.Err != nil {
					t.Fatalf("event %d: %+v, open %v", len(at), ev, ok)
				}
				at, texts = append(at, time.Since(start)), append(texts, ev.Text)
			}
			wantAt := []time.Duration{250 * time.Millisecond, 270 * time.Millisecond, 290 * time.Millisecond, 290 * time.Millisecond}
			if !slices.Equal(at, wantAt) {
				t.Errorf("events at %v, want %v", at, wantAt)
			}
			if want := []string{"one", "one two", "one two three", "one two three"}; !slices.Equal(texts, want) {
				t.Errorf("texts %q, want %q", texts, want)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			synctest.Wait() // the mock's session records CloseStream
			if c := srv.Controls(); c[len(c)-1] != "CloseStream" {
				t.Errorf("controls %v, want CloseStream last", c)
			}
		})
	})
	t.Run("stall holds what follows", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			a, srv := newPipe(t, nil)
			srv.SetLatency(lat)
			srv.ScriptText("one two")
			srv.Inject(wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultDelay, BeforeEvent: 0, Duration: time.Second}})
			s := speechtest.Connect(t, a.Connect)
			start := time.Now()
			for range 2 {
				if err := s.SendAudio(frame(320, 0)); err != nil {
					t.Fatal(err)
				}
			}
			for i, want := range []time.Duration{lat + time.Second, lat + time.Second} {
				if ev, _ := speechtest.Next(t, s, 2*time.Second); ev.Err != nil || time.Since(start) != want {
					t.Errorf("event %d at %v (%+v), want %v", i, time.Since(start), ev, want)
				}
			}
		})
	})
}
