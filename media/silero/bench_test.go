//go:build cgo

package silero

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user+system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportPerWindow adds wall and CPU time per window to the benchmark.
func reportPerWindow(b *testing.B, windows int, cpu0 time.Duration) {
	n := float64(b.N) * float64(windows)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/window")
	b.ReportMetric(float64((cpuTime(b)-cpu0).Nanoseconds())/n, "cpu-ns/window")
}

// BenchmarkModelRun is one Run of a batch of n windows (one per stream) on
// one thread, with the 16 kHz model; BenchmarkModelRun8k with the 8 kHz
// one.
func BenchmarkModelRun(b *testing.B) { benchModelRun(b, Rate16k) }

func BenchmarkModelRun8k(b *testing.B) { benchModelRun(b, Rate8k) }

func benchModelRun(b *testing.B, rate int) {
	m := newTestModel(b, rate, 256)
	for _, n := range []int{1, 8, 64, 256} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			streams := make([]*Stream, n)
			pcm := make([][]int16, n)
			for i := range streams {
				streams[i], _ = NewStream(rate)
				pcm[i] = noise(m.WindowSize(), uint32(i))
			}
			probs := make([]float32, n)
			b.ReportAllocs()
			cpu0 := cpuTime(b)
			for b.Loop() {
				if err := m.Run(streams, pcm, probs); err != nil {
					b.Fatal(err)
				}
			}
			reportPerWindow(b, n, cpu0)
		})
	}
}

// BenchmarkPool submits one window of each of s streams through a 16 kHz
// pool (default workers, MaxBatch 64), with the 16 kHz model and with the
// 8 kHz one (the windows decimated on the worker), and waits for all
// results: end-to-end throughput with the batching that happens on its
// own.
func BenchmarkPool(b *testing.B) {
	for _, rate := range []int{Rate16k, Rate8k} {
		b.Run(fmt.Sprintf("model=%dk", rate/1000), func(b *testing.B) { benchPool(b, rate) })
	}
}

// benchPool is BenchmarkPool for a 16 kHz pool with its model at
// modelRate.
func benchPool(b *testing.B, modelRate int) {
	p := newTestPool(b, PoolConfig{ModelRate: modelRate, MaxBatch: 64, QueueSize: 1024})
	for _, s := range []int{1, 64, 256} {
		b.Run(fmt.Sprintf("streams=%d", s), func(b *testing.B) {
			results := make(chan Result, s)
			jobs := make([]Job, s)
			for i := range jobs {
				jobs[i] = Job{Stream: p.NewStream(), PCM: noise(p.WindowSize(), uint32(i)), Done: func(r Result) { results <- r }}
			}
			st0 := p.Stats()
			b.ReportAllocs()
			cpu0 := cpuTime(b)
			for b.Loop() {
				for _, j := range jobs {
					if err := p.Submit(j); err != nil {
						b.Fatal(err)
					}
				}
				for range jobs {
					if r := <-results; r.Err != nil {
						b.Fatal(r.Err)
					}
				}
			}
			reportPerWindow(b, s, cpu0)
			st := p.Stats()
			b.ReportMetric(float64(st.Completed-st0.Completed)/float64(st.Batches-st0.Batches), "windows/batch")
		})
	}
}

// BenchmarkPoolPaced is the pool as calls use it: each of s streams
// submits a window every 32 ms at its own phase (seeded), in real time, so
// the windows arrive spread over the period as calls' do, not in one
// burst. One op is one 32 ms period of every stream. It reports the CPU
// per window (the process's, the submitting goroutine included), the mean
// batch, and the wait from Submit to Done (p50, p99, max) — what the pool
// adds to a speech decision. Windows a stream could not submit because
// its previous one was still in flight are counted as busy.
func BenchmarkPoolPaced(b *testing.B) {
	for _, c := range []struct {
		streams, modelRate int
		interval           time.Duration
	}{
		{100, Rate16k, 0}, {100, Rate8k, 0}, {100, Rate8k, time.Millisecond}, {100, Rate8k, 2 * time.Millisecond},
		{300, Rate16k, 0}, {300, Rate8k, 0}, {300, Rate8k, time.Millisecond}, {300, Rate8k, 2 * time.Millisecond},
		{600, Rate16k, 0}, {600, Rate8k, 0}, {600, Rate8k, time.Millisecond}, {600, Rate8k, 2 * time.Millisecond},
	} {
		name := fmt.Sprintf("streams=%d/model=%dk/interval=%v", c.streams, c.modelRate/1000, c.interval)
		b.Run(name, func(b *testing.B) {
			p := newTestPool(b, PoolConfig{SampleRate: Rate16k, ModelRate: c.modelRate, BatchInterval: c.interval, QueueSize: 4096})
			period := WindowDuration(Rate16k)
			type paced struct {
				s     *Stream
				phase time.Duration
				sent  time.Time
				done  func(Result)
			}
			rng := rand.New(rand.NewPCG(1, uint64(c.streams)))
			streams := make([]*paced, c.streams)
			var mu sync.Mutex
			var waits []time.Duration
			var errs int
			var inflight sync.WaitGroup
			for i := range streams {
				ps := &paced{s: p.NewStream(), phase: time.Duration(rng.Int64N(int64(period)))}
				ps.done = func(r Result) {
					w := time.Since(ps.sent)
					mu.Lock()
					waits = append(waits, w)
					if r.Err != nil {
						errs++
					}
					mu.Unlock()
					inflight.Done()
				}
				streams[i] = ps
			}
			slices.SortFunc(streams, func(a, b *paced) int { return cmp.Compare(a.phase, b.phase) })
			pcm := noise(p.WindowSize(), 7)
			busy := 0
			st0 := p.Stats()
			cpu0 := cpuTime(b)
			start := time.Now()
			k := 0
			for b.Loop() {
				base := start.Add(time.Duration(k) * period)
				for _, ps := range streams {
					if d := time.Until(base.Add(ps.phase)); d > 0 {
						time.Sleep(d)
					}
					ps.sent = time.Now()
					inflight.Add(1)
					if err := p.Submit(Job{Stream: ps.s, PCM: pcm, Done: ps.done}); err != nil {
						inflight.Done()
						if !errors.Is(err, ErrStreamBusy) {
							b.Fatal(err)
						}
						busy++
					}
				}
				k++
			}
			inflight.Wait()
			st := p.Stats()
			n := float64(st.Completed - st0.Completed)
			b.ReportMetric(float64((cpuTime(b)-cpu0).Nanoseconds())/n, "cpu-ns/window")
			b.ReportMetric(float64(st.Completed-st0.Completed)/float64(st.Batches-st0.Batches), "windows/batch")
			slices.Sort(waits)
			q := func(f float64) float64 { return float64(waits[int(f*float64(len(waits)-1))].Microseconds()) }
			b.ReportMetric(q(0.5), "p50-wait-µs")
			b.ReportMetric(q(0.99), "p99-wait-µs")
			b.ReportMetric(q(1), "max-wait-µs")
			b.ReportMetric(float64(busy+errs), "busy+errors")
		})
	}
}
