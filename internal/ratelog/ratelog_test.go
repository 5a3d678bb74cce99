package ratelog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/internal/leaktest"
	"github.com/rs/zerolog"
)

// line is one log line as the tests read it.
type line struct {
	At       time.Time
	Level    string            `json:"level"`
	Msg      string            `json:"message"`
	Counts   map[string]uint64 `json:"counts"`
	Interval string            `json:"interval"`
}

// sink keeps each line written with the (bubble's) time it came.
type sink struct {
	t     *testing.T
	mu    sync.Mutex
	lines []line
}

func (s *sink) Write(p []byte) (int, error) {
	var l line
	dec := json.NewDecoder(bytes.NewReader(p))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		s.t.Errorf("not a tally line: %v: %s", err, p)
	}
	l.At = time.Now()
	s.mu.Lock()
	s.lines = append(s.lines, l)
	s.mu.Unlock()
	return len(p), nil
}

func (s *sink) got() []line {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]line(nil), s.lines...)
}

// sum adds the counts of every line.
func sum(lines []line) map[string]uint64 {
	out := map[string]uint64{}
	for _, l := range lines {
		for c, n := range l.Counts {
			out[c] += n
		}
	}
	return out
}

func total(lines []line) uint64 {
	var n uint64
	for _, v := range sum(lines) {
		n += v
	}
	return n
}

// inBubble runs fn with a tally writing to a sink, in a synctest bubble,
// and checks that no goroutine is left once the tally is closed.
func inBubble(t *testing.T, every time.Duration, fn func(tl *Tally, s *sink)) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		base := leaktest.Snapshot()
		s := &sink{t: t}
		tl := New(zerolog.New(s), "refused", every)
		fn(tl, s)
		tl.Close()
		synctest.Wait()
		if n := leaktest.Snapshot().NewSince(base); n != 0 {
			t.Fatalf("%d goroutines left behind", n)
		}
	})
}

// TestFirstEventAtOnce: a single event is written as it happens, not an
// interval later, and a quiet interval writes nothing.
// Mutation caught: arming the timer with t.every instead of 0 in Add
// (the line came a second late; seen failing).
func TestFirstEventAtOnce(t *testing.T) {
	inBubble(t, time.Second, func(tl *Tally, s *sink) {
		start := time.Now()
		tl.Add("full")
		synctest.Wait()
		got := s.got()
		if len(got) != 1 {
			t.Fatalf("%d lines after one event, want 1 at once", len(got))
		}
		l := got[0]
		if !l.At.Equal(start) || l.Level != "warn" || l.Msg != "refused" || l.Interval != "1s" || l.Counts["full"] != 1 || len(l.Counts) != 1 {
			t.Fatalf("line %+v (start %v)", l, start)
		}
		time.Sleep(5 * time.Second)
		if n := len(s.got()); n != 1 {
			t.Fatalf("%d lines after quiet intervals, want 1", n)
		}
		// The spell is over: the next event is again written at once.
		again := time.Now()
		tl.Add("draining")
		synctest.Wait()
		got = s.got()
		if len(got) != 2 || !got[1].At.Equal(again) || got[1].Counts["draining"] != 1 {
			t.Fatalf("after a quiet spell: %+v", got)
		}
	})
}

// TestBurst: 10,000 events from 8 goroutines within an interval write
// at most 2 lines an interval, and the counts add up to 10,000 by cause.
// Mutation caught: not zeroing a written cause in flushLocked (counts
// are written twice: the sum was 20,000; seen failing), and re-arming
// with 0 instead of t.every (a line per event burst; seen failing).
func TestBurst(t *testing.T) {
	const goroutines, each = 8, 1250
	causes := []string{"full", "draining", "rate_limited", "resource"}
	inBubble(t, time.Second, func(tl *Tally, s *sink) {
		start := time.Now()
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Go(func() {
				for i := range each {
					tl.Add(causes[(g+i)%len(causes)])
					if i%100 == 99 {
						time.Sleep(30 * time.Millisecond) // spread over ~4 intervals
					}
				}
			})
		}
		wg.Wait()
		time.Sleep(3 * time.Second)
		got := s.got()
		perInterval := map[int64]int{}
		for _, l := range got {
			perInterval[int64(l.At.Sub(start)/time.Second)]++
		}
		for i, n := range perInterval {
			if n > 2 {
				t.Errorf("interval %d has %d lines, want at most 2", i, n)
			}
		}
		if n := total(got); n != goroutines*each {
			t.Fatalf("counts sum to %d, want %d (%d lines)", n, goroutines*each, len(got))
		}
		want := uint64(goroutines * each / len(causes))
		for c, n := range sum(got) {
			if n != want {
				t.Errorf("cause %s: %d, want %d", c, n, want)
			}
		}
		if len(got) > 2+int(time.Since(start)/time.Second) {
			t.Errorf("%d lines over %v", len(got), time.Since(start))
		}
		t.Logf("%d events over %v: %d lines", goroutines*each, time.Since(start), len(got))
	})
}

// TestSteadyFlood: events all along several intervals write one summary
// per interval after the first line.
func TestSteadyFlood(t *testing.T) {
	inBubble(t, time.Second, func(tl *Tally, s *sink) {
		for range 500 { // 10 s at 50/s
			tl.Add("full")
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(2 * time.Second)
		got := s.got()
		if total(got) != 500 {
			t.Fatalf("sum %d, want 500", total(got))
		}
		// The first at once, then one per second for the ten seconds.
		if len(got) < 10 || len(got) > 12 {
			t.Fatalf("%d lines for 10 s of flood, want about 11", len(got))
		}
		for i := 1; i < len(got); i++ {
			if gap := got[i].At.Sub(got[i-1].At); gap != time.Second {
				t.Errorf("line %d came %v after the one before, want 1s", i, gap)
			}
		}
	})
}

// TestCloseFlushes: what is pending when Close comes is written by
// Close; Adds after it count nothing; Close twice is fine.
// Mutation caught: Close without the final flushLocked (the pending 41
// were lost; seen failing).
func TestCloseFlushes(t *testing.T) {
	inBubble(t, time.Minute, func(tl *Tally, s *sink) {
		tl.Add("full")
		synctest.Wait()
		for range 41 {
			tl.Add("full")
		}
		if got := s.got(); len(got) != 1 || got[0].Counts["full"] != 1 {
			t.Fatalf("before close: %+v", got)
		}
		start := time.Now()
		tl.Close()
		got := s.got()
		if total(got) != 42 {
			t.Fatalf("after Close the counts sum to %d, want 42: %+v", total(got), got)
		}
		if !got[len(got)-1].At.Equal(start) {
			t.Errorf("Close waited for the interval")
		}
		tl.Add("full")
		tl.Close()
		time.Sleep(2 * time.Minute)
		if total(s.got()) != 42 {
			t.Errorf("an Add after Close was written")
		}
	})
}

// TestCloseIdle: closing a tally that never counted writes nothing.
func TestCloseIdle(t *testing.T) {
	inBubble(t, time.Second, func(tl *Tally, s *sink) {
		tl.Close()
		if n := len(s.got()); n != 0 {
			t.Fatalf("%d lines", n)
		}
	})
}

// TestCausesBounded: unbounded distinct causes are held as MaxCauses
// and OtherCause, and none is lost.
func TestCausesBounded(t *testing.T) {
	inBubble(t, time.Second, func(tl *Tally, s *sink) {
		for i := range 1000 {
			tl.Add(fmt.Sprintf("c%03d", i))
		}
		tl.mu.Lock()
		n := len(tl.pending)
		tl.mu.Unlock()
		if n > MaxCauses+1 {
			t.Errorf("%d causes held, want at most %d", n, MaxCauses+1)
		}
		time.Sleep(2 * time.Second)
		got := s.got()
		if total(got) != 1000 {
			t.Fatalf("sum %d", total(got))
		}
		if other := sum(got)[OtherCause]; other != 1000-MaxCauses {
			t.Errorf("other: %d, want %d", other, 1000-MaxCauses)
		}
	})
}

func TestDefaultEvery(t *testing.T) {
	for _, every := range []time.Duration{0, -time.Second} {
		if tl := New(zerolog.Nop(), "x", every); tl.every != DefaultEvery {
			t.Errorf("New(%v): every %v", every, tl.every)
		}
	}
}

// TestAddAllocs pins Add's steady state: no allocation once its cause
// was seen.
func TestAddAllocs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := New(zerolog.New(&bytes.Buffer{}), "refused", time.Hour)
		defer tl.Close()
		tl.Add("full")
		synctest.Wait()
		if a := testing.AllocsPerRun(1000, func() { tl.Add("full") }); a != 0 {
			t.Fatalf("Add allocates %.1f times, want 0", a)
		}
	})
}

func BenchmarkAdd(b *testing.B) {
	tl := New(zerolog.Nop(), "refused", time.Second)
	defer tl.Close()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			tl.Add("full")
		}
	})
}

// TestLevelFiltered: a logger above warn gets nothing, and the tally
// still runs its intervals and stops.
func TestLevelFiltered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := leaktest.Snapshot()
		s := &sink{t: t}
		tl := New(zerolog.New(s).Level(zerolog.ErrorLevel), "refused", time.Second)
		for range 100 {
			tl.Add("full")
			time.Sleep(50 * time.Millisecond)
		}
		tl.Close()
		synctest.Wait()
		if n := len(s.got()); n != 0 {
			t.Fatalf("%d lines below the logger's level", n)
		}
		if n := leaktest.Snapshot().NewSince(base); n != 0 {
			t.Fatalf("%d goroutines left behind", n)
		}
	})
}
