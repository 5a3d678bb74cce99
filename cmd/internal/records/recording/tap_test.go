package recording_test

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/brisvox/brisvox/cmd/internal/records"
	"github.com/brisvox/brisvox/cmd/internal/records/recording"
	"github.com/brisvox/brisvox/messages"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"
)

// TestTapAllocs: the taps copy a frame each way into pooled buffers and
// queue them with no allocation, while the writer writes them. Mutation
// caught (seen failing): a buffer made per frame instead of taken from the
// pool (1 allocation a frame each way).
func TestTapAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector (its sync.Pool drops buffers on purpose)")
	}
	defer goleak.VerifyNone(t)
	r, _ := newRecorder(t)
	defer r.Close()
	c, err := r.Begin("allocs", 16000, 16000)
	if err != nil {
		t.Fatal(err)
	}
	in := &messages.AudioFrame{Rate: 16000, PCM: make([]int16, 320)}
	out := &messages.OutputAudio{Rate: 16000, PCM: make([]int16, 320)}
	step := func() {
		in.Start = time.Now()
		c.Input(in)
		c.Output(out)
		// The writer takes what the taps queue (a drop would not
		// allocate either, but this measures the steady state).
		time.Sleep(50 * time.Microsecond)
	}
	for range 100 {
		step()
	}
	if n := testing.AllocsPerRun(1000, step); n != 0 {
		t.Fatalf("%v allocations a frame each way, want 0", n)
	}
	if rec := c.Close(); rec == nil {
		t.Fatal("no recording")
	}
}

// BenchmarkTap is the cost of one frame through a tap (Input and Output
// alternate; ns/op is per frame): placing, copying into a pooled buffer,
// queueing. Every 1000 frames the clock stops while the writer empties
// the queue, so no frame is dropped (a drop would be cheaper).
func BenchmarkTap(b *testing.B) {
	for _, rate := range []int{8000, 16000, 48000} {
		b.Run(strconv.Itoa(rate), func(b *testing.B) {
			r, err := recording.New(recording.Config{Dir: b.TempDir(), Log: zerolog.New(io.Discard), Queue: 2000})
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			c, err := r.Begin("bench", rate, rate)
			if err != nil {
				b.Fatal(err)
			}
			in := &messages.AudioFrame{Rate: rate, PCM: make([]int16, rate/50)}
			out := &messages.OutputAudio{Rate: rate, PCM: make([]int16, rate/50)}
			start := time.Now()
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				if i%2 == 0 {
					in.Start = start.Add(time.Duration(i/2) * frame)
					c.Input(in)
				} else {
					c.Output(out)
				}
				i++
				if i%1000 == 0 {
					b.StopTimer()
					for c.Queued() > 0 {
						runtime.Gosched()
					}
					b.StartTimer()
				}
			}
			b.StopTimer()
			if rec := c.Close(); rec == nil || rec.DroppedFrames != 0 {
				b.Fatalf("recording %+v", rec)
			}
		})
	}
}

// TestManyCalls: 200 calls recorded at once in real time (5 s each, the
// caller throughout, the bot 3 s of it): no frame dropped or late,
// 200 files of the calls' length, and 99 frames in 100 through the taps
// in under a millisecond (the figures are logged).
func TestManyCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("200 calls in real time: 5 s")
	}
	if raceEnabled {
		t.Skip("a real-time load test: under the race detector's slowdown it measures the detector")
	}
	defer goleak.VerifyNone(t)
	const calls, frames = 200, 250
	r, dir := newRecorder(t)
	defer r.Close()
	start := time.Now()
	var wg sync.WaitGroup
	recs := make([]*records.Recording, calls)
	taps := make([][]time.Duration, calls) // each frame's time in the taps
	for i := range calls {
		c, err := r.Begin("many-"+strconv.Itoa(i+1), 16000, 16000)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			in := &messages.AudioFrame{Rate: 16000, PCM: make([]int16, 320)}
			out := &messages.OutputAudio{Rate: 16000, PCM: make([]int16, 320)}
			square(in.PCM, 8000)
			square(out.PCM, 8000)
			tick := time.NewTicker(frame)
			defer tick.Stop()
			for n := range frames {
				<-tick.C
				began := time.Now()
				in.Start = began.Add(-frame) // captured over the last 20 ms
				c.Input(in)
				if n%100 < 50 {
					c.Output(out)
				}
				taps[i] = append(taps[i], time.Since(began))
			}
			recs[i] = c.Close()
		})
	}
	wg.Wait()
	var all []time.Duration
	for i, rec := range recs {
		if rec == nil || rec.DroppedFrames != 0 {
			t.Fatalf("call %d: %+v", i+1, rec)
		}
		// 250 frames from when the call's goroutine started (after the
		// Begin of every call), and a late tick or two.
		if rec.DurationMS < 5000 || rec.DurationMS > 5000+float64(time.Since(start)/time.Millisecond) {
			t.Errorf("call %d: %v ms, want 5000", i+1, rec.DurationMS)
		}
		all = append(all, taps[i]...)
	}
	slices.Sort(all)
	worst := all[len(all)-1]
	st := r.Stats()
	if st["dropped_frames"] != 0 || st["late_frames"] != 0 || st["frames"] != calls*(frames+150) {
		t.Fatalf("stats %v, want %d frames written, none dropped or late", st, calls*(frames+150))
	}
	files, err := filepath.Glob(filepath.Join(dir, "*", "*", "*", "*.wav"))
	if err != nil || len(files) != calls {
		t.Fatalf("%d files (%v), want %d", len(files), err, calls)
	}
	for _, f := range files {
		if st, err := os.Stat(f); err != nil || st.Size() < 44+5000*16*4 {
			t.Fatalf("%s: %v %v", f, st, err)
		}
	}
	t.Logf("200 calls: a frame's taps took %v median, %v at p99, %v at most",
		all[len(all)/2], all[len(all)*99/100], worst)
	// The worst is the scheduler's on a shared machine (a goroutine
	// preempted inside a tap); the 99th percentile is the tap's.
	if p99 := all[len(all)*99/100]; p99 >= time.Millisecond {
		t.Errorf("the taps of 1 frame in 100 took %v or more", p99)
	}
}

// BenchmarkWriter is the writer's cost of one slot of a call (20 ms of
// both channels: the taps, the writer's placing, resampling and writing):
// ns/op per 20 ms of call, so 200 calls cost 200·50·ns/op per second.
func BenchmarkWriter(b *testing.B) {
	for _, bc := range []struct {
		name    string
		in, out int
		format  string
	}{
		{"16k", 16000, 16000, "wav"}, {"8k to 16k", 8000, 16000, "wav"}, {"16k to 24k", 16000, 24000, "wav"},
		{"48k", 48000, 48000, "wav"}, {"ogg 8k", 8000, 8000, "ogg"}, {"ogg 16k", 16000, 16000, "ogg"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			if bc.format == "ogg" && !oggBuilt {
				b.Skip("no libopus in this build")
			}
			r, err := recording.New(recording.Config{Dir: b.TempDir(), Format: bc.format, Log: zerolog.New(io.Discard), Queue: 1 << 16})
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			in := &messages.AudioFrame{Rate: bc.in, PCM: make([]int16, bc.in/50)}
			out := &messages.OutputAudio{Rate: bc.out, PCM: make([]int16, bc.out/50)}
			square(in.PCM, 8000)
			square(out.PCM, 8000)
			var c *recording.Call
			var t0 time.Time
			n, calls := 0, 0
			b.ReportAllocs()
			for b.Loop() {
				if n%10000 == 0 { // a call of 200 s; Close waits for its writer
					if c != nil {
						c.Close()
					}
					calls++
					t0 = time.Now()
					if c, err = r.Begin("bench-"+strconv.Itoa(calls), bc.in, bc.out); err != nil {
						b.Fatal(err)
					}
				}
				// Both channels in slot n: the caller by capture time, the
				// bot contiguous from the start (it outruns the clock).
				in.Start = t0.Add(time.Duration(n%10000) * frame)
				c.Input(in)
				c.Output(out)
				n++
			}
			c.Close()
			if st := r.Stats(); st["dropped_frames"] != 0 || st["late_frames"] != 0 {
				b.Fatalf("stats %v", st)
			}
		})
	}
}
