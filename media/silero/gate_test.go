//go:build cgo

package silero

import (
	"testing"
	"time"

	"github.com/brisvox/brisvox/media"
)

// TestModelWithSpeechGate runs a sentence through the model and the speech
// gate: one start close to where the voice begins, one stop close to where
// it ends.
func TestModelWithSpeechGate(t *testing.T) {
	const rate = Rate16k
	m := newTestModel(t, rate, 1)
	pcm, from, to := utterance(t, "Hello, I would like to change my delivery address please.", rate, 200)
	// Where the voice really is: the synthesizer pads the sentence.
	onset, offset := -1, -1
	for i := from; i < to; i++ {
		if pcm[i] > 1000 || pcm[i] < -1000 {
			if onset < 0 {
				onset = i
			}
			offset = i
		}
	}
	at := func(sample int) time.Duration { return time.Duration(sample) * time.Second / rate }
	gate, err := media.NewSpeechGate(media.SpeechGateConfig{})
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	w := m.WindowSize()
	var events []media.VADEvent
	var times []time.Duration
	for i, p := range runAlone(t, m, windows(pcm, w)) {
		if ev, when := gate.Process(p, base.Add(at(i*w)), WindowDuration(rate)); ev != media.VADNone {
			events, times = append(events, ev), append(times, when.Sub(base))
		}
	}
	if len(events) != 2 || events[0] != media.VADStart || events[1] != media.VADStop {
		t.Fatalf("events %v at %v, want one start and one stop", events, times)
	}
	// The backdated start is within a window or two of the voice onset,
	// the stop within 250 ms of its end.
	if d := times[0] - at(onset); d < -2*WindowDuration(rate) || d > 2*WindowDuration(rate) {
		t.Errorf("start at %v, voice begins at %v", times[0], at(onset))
	}
	if d := times[1] - at(offset); d < -250*time.Millisecond || d > 250*time.Millisecond {
		t.Errorf("stop at %v, voice ends at %v", times[1], at(offset))
	}
	t.Logf("start %v (voice %v), stop %v (voice end %v)", times[0], at(onset), times[1], at(offset))
}
