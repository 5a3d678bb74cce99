package pocketsphinx

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/brisvox/brisvox/providers/llm/rules"
)

// rssAnonKB is the RssAnon line of /proc/self/status, in kB.
func rssAnonKB(b *testing.B) int { return statusKB(b, "RssAnon") }

// statusKB is a line of /proc/self/status (RssAnon, VmRSS), in kB.
func statusKB(tb testing.TB, field string) int {
	tb.Helper()
	st, err := os.ReadFile("/proc/self/status")
	if err != nil {
		tb.Skipf("no /proc/self/status: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(st))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			if err != nil {
				tb.Fatalf("%s %q: %v", field, v, err)
			}
			return kb
		}
	}
	tb.Skipf("no %s in /proc/self/status", field)
	return 0
}

// BenchmarkRealTimeFactor streams the en.wav fixture (three sentences, 8.6 s
// up to the last hangover) through one session in 20 ms chunks with a
// SpeechStarted 200 ms into each sentence and a Finalize after it, and
// waits for each final: x_realtime is decoding time over
// audio time (below 1: faster than real time). The decoder is loaded
// before the timer starts.
func BenchmarkRealTimeFactor(b *testing.B) {
	needEngine(b)
	realTimeFactor(b, Config{PoolSize: 1})
}

// BenchmarkDomainRealTimeFactor is BenchmarkRealTimeFactor with the rules
// provider's domain model interpolated (Config.Domain): each word's
// language score is read from both models.
func BenchmarkDomainRealTimeFactor(b *testing.B) {
	needEngine(b)
	realTimeFactor(b, Config{PoolSize: 1, Domain: rules.Phrases()})
}

func realTimeFactor(b *testing.B, cfg Config) {
	fx := loadFixture(b, "en")
	e, err := New(cfg)
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
			from = sendUtterance(b, s, fx.pcm, from, min(len(fx.pcm), seg.End+hangover), seg)
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
	loadCost(b, Config{}.withDefaults())
}

// BenchmarkDomainLoadDecoder is BenchmarkLoadDecoder with the rules
// provider's domain model: the general and the domain model read into
// one interpolated set.
func BenchmarkDomainLoadDecoder(b *testing.B) {
	needEngine(b)
	e, err := New(Config{Domain: rules.Phrases()})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	loadCost(b, e.cfg)
}

func loadCost(b *testing.B, cfg Config) {
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

// BenchmarkDecoderMemory loads decoders one after another into a pool, as
// speech starting on several calls at once would, and reports the growth
// of RssAnon per decoder (MB/decoder, the mean over them) and for all of
// them (MB_total). The first iteration's figures are kept: later ones
// reuse the C heap the first freed. Run it alone in its process (-run XXX
// -bench DecoderMemory -benchtime 1x) for a clean figure.
func BenchmarkDecoderMemory(b *testing.B) {
	needEngine(b)
	decoderMemory(b, Config{PoolSize: 4}.withDefaults())
}

// BenchmarkDomainDecoderMemory is BenchmarkDecoderMemory with the rules
// provider's domain model interpolated into each decoder's language
// model (Config.Domain): what the domain adds per decoder. Run it alone
// in its process too.
func BenchmarkDomainDecoderMemory(b *testing.B) {
	needEngine(b)
	e, err := New(Config{PoolSize: 4, Domain: rules.Phrases()})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	decoderMemory(b, e.cfg)
}

// decoderMemory loads 4 decoders of cfg into a pool per iteration and
// reports the RssAnon growth of the first.
func decoderMemory(b *testing.B, cfg Config) {
	const n = 4
	var perDecoder, total float64
	first := true
	for b.Loop() {
		p := newPool(n, -1, func() (recognizer, error) { return loadDecoder(cfg) }, nil)
		before := rssAnonKB(b)
		held := make([]recognizer, 0, n)
		for range n {
			d, err := p.acquire(b.Context(), time.Second)
			if err != nil {
				b.Fatal(err)
			}
			held = append(held, d)
		}
		if first {
			total = float64(rssAnonKB(b)-before) / 1024
			perDecoder, first = total/n, false
		}
		for _, d := range held {
			p.release(d, true)
		}
		p.close()
	}
	b.ReportMetric(perDecoder, "MB/decoder")
	b.ReportMetric(total, "MB_total")
}

// BenchmarkConcurrentSpeech is the CPU side of PoolSize: N callers speak
// at once, each session streaming the en.wav fixture (SpeechStarted,
// Finalize after each sentence) on its own decoder, all decoders loaded
// before the timer. x_realtime is the wall time over one stream's audio
// (under 1: each caller is heard faster than it speaks); cores is the
// process's CPU time (getrusage) over the wall time, and cpu/audio that
// CPU time over the audio of all the streams: the cores one caller
// speaking costs, whatever else the machine runs.
func BenchmarkConcurrentSpeech(b *testing.B) {
	needEngine(b)
	fx := loadFixture(b, "en")
	sent := min(len(fx.pcm), fx.segments[len(fx.segments)-1].End+hangover)
	audio := time.Duration(sent) * time.Second / 16000
	for _, n := range []int{1, 2, 4} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			e, err := New(Config{PoolSize: n})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			warm := make([]recognizer, n) // load all n before the timer
			for i := range warm {
				if warm[i], err = e.pool.acquire(b.Context(), time.Second); err != nil {
					b.Fatal(err)
				}
			}
			for _, d := range warm {
				e.pool.release(d, true)
			}
			cpu0 := cpuTime(b)
			start := time.Now()
			for b.Loop() {
				var wg sync.WaitGroup
				for range n {
					wg.Go(func() {
						s := connect(b, e, b.Context())
						defer s.Close()
						from := 0
						for _, seg := range fx.segments {
							from = sendUtterance(b, s, fx.pcm, from, min(len(fx.pcm), seg.End+hangover), seg)
							if err := s.Finalize(); err != nil {
								b.Error(err)
								return
							}
							untilFinal(b, s)
						}
					})
				}
				wg.Wait()
			}
			wall, cpu := time.Since(start), cpuTime(b)-cpu0
			b.ReportMetric(float64(wall)/float64(audio)/float64(b.N), "x_realtime")
			b.ReportMetric(float64(cpu)/float64(wall), "cores")
			b.ReportMetric(float64(cpu)/float64(audio)/float64(n*b.N), "cpu/audio")
		})
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	b.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Skipf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
