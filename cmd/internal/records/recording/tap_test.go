package recording_test

import (
	"io"
	"os"
	"path/filepath"
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
// alternate; ns/op is per frame) with the writer writing behind it.
func BenchmarkTap(b *testing.B) {
	for _, rate := range []int{8000, 16000, 48000} {
		b.Run(strconv.Itoa(rate), func(b *testing.B) {
			r, err := recording.New(recording.Config{Dir: b.TempDir(), Log: zerolog.New(io.Discard), Queue: 1 << 16})
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
			}
			b.StopTimer()
			c.Close()
		})
	}
}

// TestManyCalls: 200 calls recorded at once in real time (5 s each, the
// caller throughout, the bot 3 s of it): no frame dropped or late,
// 200 files of the calls' length, and no tap as slow as a frame (on this
// shared machine a tap's worst is the scheduler's: the figure is logged).
func TestManyCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("200 calls in real time: 5 s")
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
	if worst >= frame {
		t.Errorf("a tap took %v", worst)
	}
}
