package pocketsphinx

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// rssAnonKB is the RssAnon line of /proc/self/status, in kB.
func rssAnonKB(b *testing.B) int {
	b.Helper()
	st, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skipf("no /proc/self/status: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(st))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "RssAnon:"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			if err != nil {
				b.Fatalf("RssAnon %q: %v", v, err)
			}
			return kb
		}
	}
	b.Skip("no RssAnon in /proc/self/status")
	return 0
}

// BenchmarkRealTimeFactor streams the en.wav fixture (three sentences, 8.6 s
// up to the last hangover) through one session in 20 ms chunks with a Finalize after
// each sentence and waits for each final: x_realtime is decoding time over
// audio time (below 1: faster than real time). The decoder is loaded
// before the timer starts.
func BenchmarkRealTimeFactor(b *testing.B) {
	needEngine(b)
	fx := loadFixture(b, "en")
	e, err := New(Config{PoolSize: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	if err := e.Warm(b.Context()); err != nil {
		b.Fatal(err)
	}
	sent := min(len(fx.pcm), fx.segments[len(fx.segments)-1].End+hangover)
	audio := time.Duration(sent) * time.Second / 16000
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		s := connect(b, e, b.Context())
		from := 0
		for _, seg := range fx.segments {
			to := min(len(fx.pcm), seg.End+hangover)
			sendFrames(b, s, fx.pcm[from:to])
			from = to
			if err := s.Finalize(); err != nil {
				b.Fatal(err)
			}
			untilFinal(b, s)
		}
		s.Close()
	}
	b.ReportMetric(float64(time.Since(start))/float64(audio)/float64(b.N), "x_realtime")
}

// BenchmarkSendAudio is the caller's cost of one 20 ms chunk (the copy
// into the ring), with the worker's take to keep room.
func BenchmarkSendAudio(b *testing.B) {
	in := newInbox(16000)
	pcm := ramp(0, frame)
	dst := make([]int16, frame)
	b.ReportAllocs()
	for b.Loop() {
		_ = in.put(pcm)
		in.take(dst)
	}
}

// BenchmarkLoadDecoder is the cost of one decoder: the whole model read
// (what Warm saves the first Connect). MB/decoder is the growth of the
// process's anonymous resident memory (RssAnon) for one more decoder, the
// model's C heap that the Go heap figures do not show.
func BenchmarkLoadDecoder(b *testing.B) {
	needEngine(b)
	cfg := Config{}.withDefaults()
	before := rssAnonKB(b)
	held, err := loadDecoder(cfg)
	if err != nil {
		b.Fatal(err)
	}
	grown := rssAnonKB(b) - before
	defer held.free()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		d, err := loadDecoder(cfg)
		if err != nil {
			b.Fatal(err)
		}
		d.free()
	}
	b.ReportMetric(float64(grown)/1024, "MB/decoder")
}
