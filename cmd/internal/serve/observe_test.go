package serve

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/sim"
)

// TestServeObserve: the in-process observers get the call's events (with
// the latency event's timeline marks, the VAD's decision among them) and
// its end, and the call's page still gets its events. Mutations: Observe
// not called when the conn publishes -> no events observed; ObserveEnd not
// called -> no end; the turn actor not marking MarkVADDetected -> the
// decision missing from Marks; DetectedAt not carried (marking the stop's
// own time) -> the decision equals the stop instead of the stop plus the
// 300 ms hangover.
func TestServeObserve(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var evs []messages.CallEvent
		var ids []messages.CallID
		var ends []messages.CallEnded
		cfg := Config{
			MaxCalls: 2,
			Observe: func(id messages.CallID, e messages.CallEvent) {
				mu.Lock()
				evs, ids = append(evs, e), append(ids, id)
				mu.Unlock()
			},
			ObserveEnd: func(e messages.CallEnded) {
				mu.Lock()
				ends = append(ends, e)
				mu.Unlock()
			},
		}
		s, _, stop := serving(t, cfg, &simAgent{responses: []providertest.Response{{Text: "Hi, how can I help?"}}})
		c := newFakeConn("c1", sim.NewScenario("hello").Silence(500*msec).Speak("Hello?", 800*msec).Silence(4*time.Second))
		a, err := s.Admit()
		if err != nil {
			t.Fatal(err)
		}
		c.adm = a
		s.Start(c)
		time.Sleep(4 * time.Second)
		c.HangUp()
		time.Sleep(time.Second)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		_ = c.Close()

		mu.Lock()
		defer mu.Unlock()
		page, _ := c.snapshot()
		if len(page) == 0 {
			t.Error("the call's page got no events")
		}
		var lat *messages.CallEvent
		for i := range evs {
			if ids[i] != ids[0] {
				t.Errorf("events of two calls: %s and %s", ids[0], ids[i])
			}
			if evs[i].Kind == messages.EventLatency {
				lat = &evs[i]
			}
		}
		if lat == nil {
			t.Fatalf("no latency event observed among %d events", len(evs))
		}
		stopAt, ok1 := lat.Marks[messages.MarkVADStop]
		decided, ok2 := lat.Marks[messages.MarkVADDetected]
		out, ok3 := lat.Marks[messages.MarkFirstAudioOut]
		if !ok1 || !ok2 || !ok3 {
			t.Fatalf("latency marks %v: want vad_stop, vad_detected and first_audio_out", lat.Marks)
		}
		// The energy VAD decides the stop at the end of the frame that
		// completes the hangover; the speech ends on a frame boundary.
		if got := decided.Sub(stopAt); got != 300*msec {
			t.Errorf("decision %v after the stop, want the 300 ms hangover", got)
		}
		if got := out.Sub(stopAt); got != lat.Latency {
			t.Errorf("marks give %v, the event's latency is %v", got, lat.Latency)
		}
		if len(ends) != 1 || ends[0].Call != ids[0] || ends[0].Reason == "" {
			t.Errorf("ends observed %+v", ends)
		}
	})
}
