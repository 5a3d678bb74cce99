package journal

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// BenchmarkAppend is one appender, each Append waiting for its own
// fdatasync: the disk's sync latency is the figure.
func BenchmarkAppend(b *testing.B) {
	for _, size := range []int{1 << 10, 8 << 10} {
		b.Run(fmt.Sprintf("size=%dKiB", size>>10), func(b *testing.B) {
			j, err := Open(Config{Dir: b.TempDir(), Log: zerolog.Nop()})
			if err != nil {
				b.Fatal(err)
			}
			defer j.Close()
			p := make([]byte, size)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := j.Append(1, p); err != nil {
					b.Fatal(err)
				}
			}
			st := j.Stats()
			b.ReportMetric(float64(st["syncs"])/float64(st["appends"]), "syncs/append")
		})
	}
}

// BenchmarkAppendConcurrent is N appenders at once, 1 KiB each: group
// commit lets them share fdatasyncs, so appends/s grows with N while
// each Append still returns only once it is durable.
func BenchmarkAppendConcurrent(b *testing.B) {
	for _, n := range []int{1, 8, 64} {
		b.Run(fmt.Sprint("appenders=", n), func(b *testing.B) {
			j, err := Open(Config{Dir: b.TempDir(), Log: zerolog.Nop()})
			if err != nil {
				b.Fatal(err)
			}
			defer j.Close()
			p := make([]byte, 1<<10)
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			per := (b.N + n - 1) / n
			for range n {
				wg.Go(func() {
					for range per {
						if _, err := j.Append(1, p); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			took := time.Since(start)
			b.StopTimer()
			st := j.Stats()
			b.ReportMetric(float64(st["appends"])/took.Seconds(), "appends/s")
			b.ReportMetric(float64(st["appends"])/float64(max(st["syncs"], 1)), "appends/sync")
		})
	}
}

// BenchmarkAppendAck is Append then Ack, one at a time (the records writer's
// cycle without the database): two fdatasyncs per entry.
func BenchmarkAppendAck(b *testing.B) {
	j, err := Open(Config{Dir: b.TempDir(), Log: zerolog.Nop()})
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	p := make([]byte, 4<<10)
	var inAppend, inAck time.Duration
	for b.Loop() {
		t0 := time.Now()
		seq, err := j.Append(1, p)
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := j.Ack(seq); err != nil {
			b.Fatal(err)
		}
		inAppend += t1.Sub(t0)
		inAck += time.Since(t1)
	}
	b.ReportMetric(float64(inAppend.Microseconds())/float64(b.N), "append-µs/op")
	b.ReportMetric(float64(inAck.Microseconds())/float64(b.N), "ack-µs/op")
}
