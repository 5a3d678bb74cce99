//go:build cgo

package flite

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/brisvox/brisvox/providers"
)

// newEngine builds an engine or fails the test.
func newEngine(t testing.TB, cfg Config) *Engine {
	t.Helper()
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// connect opens a session closed at the end of the test.
func connect(t testing.TB, e *Engine) providers.TTSSession {
	t.Helper()
	s, err := e.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// spoken is what a reader of one context saw, in order.
type spoken struct {
	events  []providers.TTSEvent
	words   []string
	offsets []time.Duration
	// audioAt is the context's audio received before each word event.
	audioAt []time.Duration
	samples int
	rates   map[int]bool
	flushed bool
}

// duration is the context's audio received.
func (sp *spoken) duration(rate int) time.Duration {
	return time.Duration(int64(sp.samples) * int64(time.Second) / int64(rate))
}

// readContext reads events until id's Flushed (or the limit on events),
// failing on an error event or on an event of another context.
func readContext(t testing.TB, s providers.TTSSession, id string, rate int) *spoken {
	t.Helper()
	sp := &spoken{rates: map[int]bool{}}
	deadline := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-s.Events():
			if !ok {
				t.Fatalf("events closed before %q was flushed", id)
			}
			if ev.Kind == providers.TTSError {
				t.Fatalf("session failed: %v", ev.Err)
			}
			if ev.ContextID != id {
				t.Fatalf("event %v of context %q while reading %q", ev.Kind, ev.ContextID, id)
			}
			sp.events = append(sp.events, ev)
			switch ev.Kind {
			case providers.TTSAudio:
				sp.rates[ev.Rate] = true
				sp.samples += len(ev.PCM)
			case providers.TTSWord:
				sp.words = append(sp.words, ev.Word)
				sp.offsets = append(sp.offsets, ev.Offset)
				sp.audioAt = append(sp.audioAt, sp.duration(rate))
			case providers.TTSFlushed:
				sp.flushed = true
				return sp
			}
		case <-deadline:
			t.Fatalf("no Flushed for %q within 30s", id)
		}
	}
}

// checkWords checks the contract of a context's words against text:
// they join to its words, their offsets strictly increase, each comes
// before the audio it starts in and within one chunk of it, and the audio
// lasts past the last word's start.
func checkWords(t *testing.T, sp *spoken, text string, rate int, chunk time.Duration) {
	t.Helper()
	if got, want := strings.Fields(strings.Join(sp.words, " ")), strings.Fields(text); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("words %q, want %q", got, want)
	}
	for i, off := range sp.offsets {
		if i > 0 && off <= sp.offsets[i-1] {
			t.Errorf("word %d %q at %v, not after word %d at %v", i, sp.words[i], off, i-1, sp.offsets[i-1])
		}
		if off < sp.audioAt[i] || off >= sp.audioAt[i]+chunk {
			t.Errorf("word %d %q at %v announced after %v of audio (chunk %v)", i, sp.words[i], off, sp.audioAt[i], chunk)
		}
	}
	if n := len(sp.offsets); n > 0 && sp.duration(rate) <= sp.offsets[n-1] {
		t.Errorf("audio lasts %v, last word starts at %v", sp.duration(rate), sp.offsets[n-1])
	}
	if len(sp.rates) != 1 || !sp.rates[rate] {
		t.Errorf("audio rates %v, want only %d", sp.rates, rate)
	}
}

// rms is the root mean square of pcm.
func rms(pcm []int16) float64 {
	var sum float64
	for _, v := range pcm {
		sum += float64(v) * float64(v)
	}
	if len(pcm) == 0 {
		return 0
	}
	return math.Sqrt(sum / float64(len(pcm)))
}
