//go:build cgo

package silero

import (
	"fmt"
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
// one thread.
func BenchmarkModelRun(b *testing.B) {
	m := newTestModel(b, Rate16k, 256)
	for _, n := range []int{1, 8, 64, 256} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			streams := make([]*Stream, n)
			pcm := make([][]int16, n)
			for i := range streams {
				streams[i], _ = NewStream(Rate16k)
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

// BenchmarkPool submits one window of each of s streams through the pool
// (default workers, MaxBatch 64) and waits for all results: end-to-end
// throughput with the batching that happens on its own.
func BenchmarkPool(b *testing.B) {
	p := newTestPool(b, PoolConfig{MaxBatch: 64, QueueSize: 1024})
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
