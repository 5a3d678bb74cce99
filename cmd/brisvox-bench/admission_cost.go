package main

import (
	"errors"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brisvox/brisvox/actors/vad"
	"github.com/brisvox/brisvox/media"
	"golang.org/x/sys/unix"
)

// The admission bench's synthetic cost: every call's VAD is a "model"
// whose scorer burns a fixed amount of CPU work every 20 ms of the
// call's life (a xorshift loop of a calibrated number of iterations, on
// a ticker of its own) and scores every window silence at once. Fixed
// work, not a fixed wall time: a call preempted in its loop still owes
// all its iterations, as a real model's inference does. On a clock, not
// per window received: a carrier's 50 packets a second do not slow down
// when this machine is busy, but the media peer that stands in for it
// here does (it shares the cores, niced), and work driven by its packets
// would shrink with the load it is meant to cause. A tick that comes
// while the last one's work still runs is dropped (time.Ticker), so a
// starved call owes at most one tick.

// spin runs n xorshift steps from x; the result is kept (spinSink) so the
// loop is not optimised away.
func spin(x uint64, n int) uint64 {
	for range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

var spinSink atomic.Uint64

// calibrateSpin is the cheapest of five runs of spin, in ns of this
// thread's CPU time per iteration: the cost the meter will see (process
// CPU time), not stretched by the time a busy machine preempts it.
func calibrateSpin() float64 {
	const n = 10_000_000
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	best := math.Inf(1)
	for i := range 5 {
		c := threadCPU()
		spinSink.Add(spin(uint64(i)+1, n))
		best = min(best, float64((threadCPU()-c).Nanoseconds())/n)
	}
	return best
}

// threadCPU is the calling thread's CPU time (RUSAGE_THREAD).
func threadCPU() time.Duration {
	var ru unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_THREAD, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// spinIters is the iterations of one window that cost cores of a core
// (0.1: 10%) over a window of frame, at nsPerIter ns per iteration.
func spinIters(cores float64, frame time.Duration, nsPerIter float64) int {
	if cores <= 0 || nsPerIter <= 0 {
		return 0
	}
	return int(math.Round(cores * float64(frame.Nanoseconds()) / nsPerIter))
}

// errScorerBusy: a window came while one was in flight (the VAD actor
// never does that).
var errScorerBusy = errors.New("admission: a window is in flight")

// costModel hands every call a spinScorer and counts the ticks burned.
type costModel struct {
	window int           // samples of a window (20 ms at the call's rate)
	every  time.Duration // the work's clock (20 ms)
	iters  int
	burned atomic.Uint64
}

// vadModel is the vad.Model of the calls.
func (m *costModel) vadModel() *vad.Model {
	return &vad.Model{
		NewScorer: func() (vad.Scorer, error) { return m.newScorer(), nil },
		NewGate: func() vad.Gate {
			g, _ := media.NewSpeechGate(media.SpeechGateConfig{}) // the defaults are valid
			return g
		},
	}
}

// spinScorer burns the call's cost on its own goroutine every m.every
// and answers windows from it; Close stops and waits for it.
type spinScorer struct {
	m    *costModel
	work chan func(float32, error)
	stop chan struct{}
	once sync.Once
	wg   sync.WaitGroup
}

var _ vad.Scorer = (*spinScorer)(nil)

func (m *costModel) newScorer() *spinScorer {
	s := &spinScorer{m: m, work: make(chan func(float32, error), 1), stop: make(chan struct{})}
	s.wg.Go(func() {
		t := time.NewTicker(m.every)
		defer t.Stop()
		x := uint64(1)
		for {
			select {
			case <-s.stop:
				return
			case done := <-s.work:
				done(0, nil)
			case <-t.C:
				// The result is kept: a loop whose result nobody reads
				// is compiled to an empty count.
				x = spin(x|1, m.iters)
				spinSink.Store(x)
				m.burned.Add(1)
			}
		}
	})
	return s
}

func (s *spinScorer) WindowSamples() int { return s.m.window }

func (s *spinScorer) Score(_ []int16, done func(float32, error)) error {
	select {
	case s.work <- done:
		return nil
	default:
		return errScorerBusy
	}
}

func (s *spinScorer) Close() error {
	s.once.Do(func() { close(s.stop) })
	s.wg.Wait()
	return nil
}

// machineTimes is the first line of /proc/stat: the machine's CPU time
// by kind since boot, in clock ticks.
type machineTimes struct {
	busy, idle, steal uint64
}

// readMachineTimes reads /proc/stat (zero when it cannot).
func readMachineTimes() machineTimes {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return machineTimes{}
	}
	return parseMachineTimes(string(b))
}

// parseMachineTimes reads the "cpu" line: user nice system idle iowait
// irq softirq steal; idle and iowait are idle, steal (the hypervisor
// gave the time to another guest) apart, the rest busy.
func parseMachineTimes(stat string) machineTimes {
	line, _, _ := strings.Cut(stat, "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return machineTimes{}
	}
	var v [8]uint64
	for i := range v {
		v[i], _ = strconv.ParseUint(f[i+1], 10, 64)
	}
	return machineTimes{busy: v[0] + v[1] + v[2] + v[5] + v[6], idle: v[3] + v[4], steal: v[7]}
}

// shares is the machine's busy and stolen time between a and b, each as
// a share of all of its time.
func (b machineTimes) shares(a machineTimes) (busy, steal float64) {
	total := float64((b.busy - a.busy) + (b.idle - a.idle) + (b.steal - a.steal))
	if total <= 0 {
		return 0, 0
	}
	return float64(b.busy-a.busy) / total, float64(b.steal-a.steal) / total
}
