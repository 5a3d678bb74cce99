//go:build cgo

package flite

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/brisvox/brisvox/providers"
)

// speakOnce pushes text to a fresh context of s, flushes it and reads its
// events to Flushed, returning the samples received.
func speakOnce(tb testing.TB, s providers.TTSSession, id, text string) int {
	n, _ := speakTimed(tb, s, id, text)
	return n
}

// speakTimed is speakOnce that also returns the time from the Push to the
// first audio event.
func speakTimed(tb testing.TB, s providers.TTSSession, id, text string) (int, time.Duration) {
	start := time.Now()
	var first time.Duration
	if err := s.Push(id, text); err != nil {
		tb.Fatal(err)
	}
	if err := s.Flush(id); err != nil {
		tb.Fatal(err)
	}
	n := 0
	for ev := range s.Events() {
		switch ev.Kind {
		case providers.TTSAudio:
			if n == 0 {
				first = time.Since(start)
			}
			n += len(ev.PCM)
		case providers.TTSFlushed:
			return n, first
		case providers.TTSError:
			tb.Fatal(ev.Err)
		}
	}
	tb.Fatal("events closed")
	return n, first
}

// BenchmarkSynthesize measures one libflite call on a sentence per voice;
// rtf is the real-time factor (CPU time of synthesis per second of audio).
func BenchmarkSynthesize(b *testing.B) {
	for _, name := range Voices() {
		b.Run(name, func(b *testing.B) {
			e := newEngine(b, Config{Voice: name})
			b.ReportAllocs()
			var audio time.Duration
			for b.Loop() {
				u, err := e.voice.synthesize(sentence, e.Rate())
				if err != nil {
					b.Fatal(err)
				}
				audio += time.Duration(int64(len(u.pcm)) * int64(time.Second) / int64(e.Rate()))
			}
			b.ReportMetric(b.Elapsed().Seconds()/audio.Seconds(), "rtf")
		})
	}
}

// BenchmarkSession speaks a sentence through a session, reader included:
// the cost of one context end to end; first-audio-ms is the mean time from
// the Push to the first audio event.
func BenchmarkSession(b *testing.B) {
	e := newEngine(b, Config{})
	s, err := e.Connect(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ReportAllocs()
	ids := make([]string, 64)
	for i := range ids {
		ids[i] = string(rune('A'+i%26)) + string(rune('a'+i/26))
	}
	i, samples, contexts := 0, 0, 0
	var firstAudio time.Duration
	for b.Loop() {
		// Contexts are ids that are never reused; a fresh session every
		// 64 keeps the finished-id memory out of the figure.
		if i == len(ids) {
			_ = s.Close()
			if s, err = e.Connect(context.Background()); err != nil {
				b.Fatal(err)
			}
			i = 0
		}
		n, first := speakTimed(b, s, ids[i], sentence)
		samples += n
		firstAudio += first
		contexts++
		i++
	}
	b.ReportMetric(float64(firstAudio.Milliseconds())/float64(contexts), "first-audio-ms")
	audio := float64(samples) / float64(e.Rate())
	b.ReportMetric(b.Elapsed().Seconds()/audio, "rtf")
}

// TestAllocsDoNotGrowWithEvents: the allocations of a context do not
// depend on how many audio events carry it: chunks are slices of the
// synthesized wave, word events carry the piece's strings. Mutation
// caught: a copy of each chunk (10 ms chunks then cost four times the
// allocations of 40 ms ones).
func TestAllocsDoNotGrowWithEvents(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	count := func(chunk time.Duration) float64 {
		e := newEngine(t, Config{Chunk: chunk})
		s := connect(t, e)
		n := 0
		return testing.AllocsPerRun(20, func() {
			n++
			speakOnce(t, s, string(rune('a'+n)), sentence)
		})
	}
	fine, coarse := count(10*time.Millisecond), count(40*time.Millisecond)
	t.Logf("allocations per context: %.0f with 10 ms chunks, %.0f with 40 ms", fine, coarse)
	// About 340 audio events at 10 ms, 85 at 40 ms.
	if fine > coarse+20 {
		t.Errorf("10 ms chunks cost %.0f allocations, 40 ms %.0f: some grow with the events", fine, coarse)
	}
	// The budget per context (three phrases): their words, the libflite
	// text and results, the wave copies, the session's bookkeeping.
	// Measured: 46 (47 before the events went through ttspump).
	if coarse > 60 {
		t.Errorf("%.0f allocations per context, budget 60", coarse)
	}
}

// firstChunkLines are answers of the keyless agent (the rules provider's
// lines), each given whole and flushed, as a model that answers at once
// gives them.
var firstChunkLines = []struct{ name, text string }{
	{"help", "I can tell you the time or book a table."},
	{"time", "It's twenty five past four in UTC."},
	{"greeting", "Hello! I can tell you the time or book a table. How can I help?"},
	{"ask_party", "Sure. For how many people?"},
	{"read_back", "A table for four at seven thirty under the name Mira, on Friday. Shall I book it?"},
}

// BenchmarkFirstChunk measures the time from the Push and Flush of a
// whole answer to its first audio event: the synthesis of its first
// piece, which the caller waits for (first-audio-ms, the mean).
func BenchmarkFirstChunk(b *testing.B) {
	for _, l := range firstChunkLines {
		b.Run(l.name, func(b *testing.B) {
			e := newEngine(b, Config{})
			s, err := e.Connect(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = s.Close() }()
			n := 0
			var firstAudio time.Duration
			for b.Loop() {
				n++
				_, first := speakTimed(b, s, fmt.Sprintf("c%d", n), l.text)
				firstAudio += first
			}
			b.ReportMetric(float64(firstAudio.Microseconds())/1000/float64(n), "first-audio-ms")
		})
	}
}
