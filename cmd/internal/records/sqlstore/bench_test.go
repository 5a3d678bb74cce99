package sqlstore

import (
	"context"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/brisvox/brisvox/cmd/internal/records"
	"github.com/brisvox/brisvox/cmd/internal/records/storetest"
	"github.com/brisvox/brisvox/internal/pgtest"
)

// BenchmarkPut puts records of the realistic size (storetest.FullRecord:
// twelve turns, about 9 KiB of JSON) one at a time, as the node's writer
// goroutine does, and reports records per second. SQLite: WAL,
// synchronous NORMAL (a commit is durable against a crash of the
// process, the WAL synced at checkpoints; the node's journal has the
// record synced already). PostgreSQL: a private server with its durable
// defaults (fsync, synchronous commit), over its Unix socket.
func BenchmarkPut(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) {
		benchPut(b, filepath.Join(b.TempDir(), "records.db"))
	})
	b.Run("postgres", func(b *testing.B) {
		srv := pgtest.Start(b, pgtest.Durable())
		benchPut(b, srv.NewDatabase(b))
	})
}

func benchPut(b *testing.B, dsn string) {
	ctx := context.Background()
	s, err := Open(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	rs := make([]*records.Record, b.N)
	for i := range rs {
		rs[i] = storetest.FullRecord(fmt.Sprintf("call-%09d", i), storetest.T0)
	}
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.ResetTimer()
	for _, r := range rs {
		if ins, err := s.Put(ctx, r); err != nil || !ins {
			b.Fatalf("Put: %v, %v", ins, err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
	// The process's CPU time per record: on a shared machine the wall
	// clock's figure moves with the others' load, this one much less.
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/record")
}

// cpuTime is the CPU time (user and system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
