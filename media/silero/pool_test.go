//go:build cgo

package silero

import (
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
)

func TestPoolConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  PoolConfig
		ok   bool
	}{
		{"zero takes defaults", PoolConfig{}, true},
		{"16 kHz model", PoolConfig{ModelRate: Rate16k}, true},
		{"8 kHz", PoolConfig{SampleRate: Rate8k}, true},
		{"8 kHz model on 16 kHz windows", PoolConfig{SampleRate: Rate16k, ModelRate: Rate8k}, true},
		{"8 kHz model, default rate", PoolConfig{ModelRate: Rate8k}, true},
		{"16 kHz model on 8 kHz windows", PoolConfig{SampleRate: Rate8k, ModelRate: Rate16k}, false},
		{"model at 44.1 kHz", PoolConfig{ModelRate: 44100}, false},
		{"44.1 kHz", PoolConfig{SampleRate: 44100}, false},
		{"negative workers", PoolConfig{Workers: -1}, false},
		{"too many workers", PoolConfig{Workers: 257}, false},
		{"negative batch", PoolConfig{MaxBatch: -1}, false},
		{"batch above max", PoolConfig{MaxBatch: MaxMaxBatch + 1}, false},
		{"negative queue", PoolConfig{QueueSize: -1}, false},
		{"batch interval", PoolConfig{BatchInterval: 2 * time.Millisecond}, true},
		{"negative batch interval", PoolConfig{BatchInterval: -1}, false},
		{"batch interval above max", PoolConfig{BatchInterval: MaxBatchInterval + 1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.ok != (err == nil) || (err != nil && !errors.Is(err, ErrInvalidConfig)) {
				t.Fatalf("Validate = %v", err)
			}
			if !tt.ok {
				if _, err := NewPool(tt.cfg); !errors.Is(err, ErrInvalidConfig) {
					t.Fatalf("NewPool = %v, want ErrInvalidConfig", err)
				}
			}
		})
	}
}

// blocker holds a pool's only worker inside the Done of a window, so that
// the test can queue windows behind it deterministically.
type blocker struct {
	entered chan struct{}
	release chan struct{}
	result  Result
}

func block(t *testing.T, p *Pool) *blocker {
	t.Helper()
	b := &blocker{entered: make(chan struct{}), release: make(chan struct{})}
	err := p.Submit(Job{Stream: p.NewStream(), PCM: make([]int16, p.WindowSize()), Done: func(r Result) {
		b.result = r
		close(b.entered)
		<-b.release
	}})
	if err != nil {
		t.Fatalf("Submit blocker: %v", err)
	}
	<-b.entered
	return b
}

// collector gathers results by Seq.
type collector struct {
	mu      sync.Mutex
	results map[uint64][]Result
	wg      sync.WaitGroup
}

func newCollector() *collector { return &collector{results: map[uint64][]Result{}} }

func (c *collector) submit(t *testing.T, p *Pool, s *Stream, seq uint64, deadline time.Time) {
	t.Helper()
	c.wg.Add(1)
	err := p.Submit(Job{Stream: s, PCM: noise(p.WindowSize(), uint32(seq)), Seq: seq, Deadline: deadline, Done: func(r Result) {
		c.mu.Lock()
		c.results[r.Seq] = append(c.results[r.Seq], r)
		c.mu.Unlock()
		c.wg.Done()
	}})
	if err != nil {
		c.wg.Done()
		t.Fatalf("Submit %d: %v", seq, err)
	}
}

// one returns the single result of seq.
func (c *collector) one(t *testing.T, seq uint64) Result {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := len(c.results[seq]); n != 1 {
		t.Fatalf("window %d answered %d times, want once", seq, n)
	}
	return c.results[seq][0]
}

// TestPoolBatchesWaitingWindows: windows that wait while the worker is busy
// run together, up to MaxBatch per batch.
func TestPoolBatchesWaitingWindows(t *testing.T) {
	p := newTestPool(t, PoolConfig{Workers: 1, MaxBatch: 4})
	b := block(t, p)
	c := newCollector()
	streams := make([]*Stream, 6)
	for i := range streams {
		streams[i] = p.NewStream()
		c.submit(t, p, streams[i], uint64(i), time.Time{})
	}
	close(b.release)
	c.wg.Wait()
	// Mutation: a worker that runs one window per batch (no draining) or
	// ignores MaxBatch fails here.
	for i, want := range []int{4, 4, 4, 4, 2, 2} {
		if r := c.one(t, uint64(i)); r.Err != nil || r.Batch != want || r.Stream != streams[i] {
			t.Errorf("window %d: %+v, want batch %d", i, r, want)
		}
	}
	if st := p.Stats(); st.Batches != 3 || st.Completed != 7 || st.MeanBatch() != 7.0/3 {
		t.Errorf("stats %+v (mean %v), want 3 batches of 7 windows", st, st.MeanBatch())
	}
}

// TestPoolMatchesModel: windows run through the pool (batched as they
// come) give the same probabilities as the streams run alone on a model.
func TestPoolMatchesModel(t *testing.T) {
	const rate = Rate16k
	m := newTestModel(t, rate, 1)
	p := newTestPool(t, PoolConfig{ModelRate: Rate16k, Workers: 2, MaxBatch: 8})
	a, _, _ := utterance(t, "I need to change my delivery address please.", rate, 70)
	b, _, _ := utterance(t, "Is anybody there?", rate, 80)
	audio := [][]int16{a, b, concat(noise(700, 1), a), noise(len(a), 90)}
	w := p.WindowSize()
	steps := len(b) / w
	alone := make([][]float32, len(audio))
	streams := make([]*Stream, len(audio))
	for k, pcm := range audio {
		alone[k] = runAlone(t, m, windows(pcm[:steps*w], w))
		streams[k] = p.NewStream()
	}
	results := make(chan Result, len(audio))
	done := func(r Result) { results <- r }
	for step := range steps {
		for k := range audio {
			if err := p.Submit(Job{Stream: streams[k], PCM: audio[k][step*w : (step+1)*w], Seq: uint64(k), Done: done}); err != nil {
				t.Fatalf("step %d stream %d: %v", step, k, err)
			}
		}
		for range audio {
			r := <-results
			if r.Err != nil {
				t.Fatalf("step %d stream %d: %v", step, r.Seq, r.Err)
			}
			if d := math.Abs(float64(r.Prob - alone[r.Seq][step])); d > 1e-4 {
				t.Fatalf("step %d stream %d: pool %.6f, alone %.6f", step, r.Seq, r.Prob, alone[r.Seq][step])
			}
		}
	}
	t.Logf("stats %+v, mean batch %.2f", p.Stats(), p.Stats().MeanBatch())
}

// TestPoolEightKModelOnSixteenKWindows: a 16 kHz pool running the 8 kHz
// model takes 512-sample windows and gives, window for window, what the 8
// kHz model gives alone on the audio decimated by a decimator of its own
// (the stream's keeps its history across windows, batches and the other
// streams); speech and line noise are still told apart as at 8 kHz
// (TestModelSpeechAndSilence's bounds). Streams of the wrong kind are
// refused. (Mutations seen failing: the worker passing the 16 kHz samples'
// first half instead of the decimated window — the first window differs
// from the model's alone; Reset keeping the decimator's history — the stream after Reset differs
// from a fresh one.)
func TestPoolEightKModelOnSixteenKWindows(t *testing.T) {
	m := newTestModel(t, Rate8k, 1)
	p := newTestPool(t, PoolConfig{SampleRate: Rate16k, ModelRate: Rate8k, Workers: 2, MaxBatch: 8})
	if w := p.WindowSize(); w != 512 {
		t.Fatalf("window %d samples, want 512 at 16 kHz", w)
	}
	a, from, to := utterance(t, "Hello, I would like to change my delivery address please.", Rate16k, 1)
	b, _, _ := utterance(t, "Is anybody there?", Rate16k, 80)
	audio := [][]int16{a, b, noise(len(a), 90)}
	w := p.WindowSize()
	steps := len(b) / w
	alone := make([][]float32, len(audio))
	streams := make([]*Stream, len(audio))
	for k, pcm := range audio {
		low := make([]int16, steps*w/2)
		d := newDecimator()
		for i := range steps {
			d.decimate(low[i*w/2:(i+1)*w/2], pcm[i*w:(i+1)*w])
		}
		alone[k] = runAlone(t, m, windows(low, w/2))
		streams[k] = p.NewStream()
	}
	results := make(chan Result, len(audio))
	done := func(r Result) { results <- r }
	got := make([][]float32, len(audio))
	for step := range steps {
		for k := range audio {
			if err := p.Submit(Job{Stream: streams[k], PCM: audio[k][step*w : (step+1)*w], Seq: uint64(k), Done: done}); err != nil {
				t.Fatalf("step %d stream %d: %v", step, k, err)
			}
		}
		for range audio {
			r := <-results
			if r.Err != nil {
				t.Fatalf("step %d stream %d: %v", step, r.Seq, r.Err)
			}
			if d := math.Abs(float64(r.Prob - alone[r.Seq][step])); d > 1e-4 {
				t.Fatalf("step %d stream %d: pool %.6f, 8 kHz model alone %.6f", step, r.Seq, r.Prob, alone[r.Seq][step])
			}
			got[r.Seq] = append(got[r.Seq], r.Prob)
		}
	}
	var maxSpeech float32
	var speechWindows, high int
	for i, pr := range got[0] {
		start, end := i*w, (i+1)*w
		switch {
		case end <= from, start >= to+Rate16k/2:
			if pr >= 0.1 {
				t.Errorf("window %d is line noise but has probability %.3f, want < 0.1", i, pr)
			}
		case start >= from && end <= to:
			speechWindows++
			maxSpeech = max(maxSpeech, pr)
			if pr > 0.5 {
				high++
			}
		}
	}
	if maxSpeech <= 0.8 || high < speechWindows*6/10 {
		t.Errorf("speech: max %.3f, %d of %d windows above 0.5; want > 0.8 and at least 60%%", maxSpeech, high, speechWindows)
	}
	// After Reset the stream is a fresh one: the first window of b scores
	// as on a new stream.
	if err := streams[1].Reset(); err != nil {
		t.Fatal(err)
	}
	for k, s := range []*Stream{streams[1], p.NewStream()} {
		if err := p.Submit(Job{Stream: s, PCM: b[:w], Seq: uint64(k), Done: done}); err != nil {
			t.Fatal(err)
		}
		if r := <-results; r.Err != nil || r.Prob != alone[1][0] {
			t.Errorf("stream %d after reset: %v, %.6f; a fresh stream's first window %.6f", k, r.Err, r.Prob, alone[1][0])
		}
	}
	// Streams of another kind are refused.
	plain, _ := NewStream(Rate8k)
	wide, _ := NewStream(Rate16k)
	for _, s := range []*Stream{plain, wide} {
		if err := p.Submit(Job{Stream: s, PCM: a[:w], Done: done}); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("a stream of NewStream(%d): %v, want ErrInvalidInput", s.Rate(), err)
		}
	}
}

// TestPoolAnswersEveryJobOnce hammers a small queue from many goroutines:
// every accepted window is answered exactly once, every refused one never,
// and the counters agree.
func TestPoolAnswersEveryJobOnce(t *testing.T) {
	defer goleak.VerifyNone(t)
	p := newTestPool(t, PoolConfig{Workers: 2, MaxBatch: 4, QueueSize: 4})
	const submitters, perSubmitter, rounds = 8, 4, 40
	type streamLog struct {
		s       *Stream
		free    chan struct{}
		answers [rounds]atomic.Int32
		refused [rounds]bool
	}
	var wg sync.WaitGroup
	logs := make([]*streamLog, submitters*perSubmitter)
	for i := range logs {
		l := &streamLog{s: p.NewStream(), free: make(chan struct{}, 1)}
		logs[i] = l
	}
	pcm := noise(p.WindowSize(), 5)
	for g := range submitters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := logs[g*perSubmitter : (g+1)*perSubmitter]
			for round := range rounds {
				var accepted []*streamLog
				for _, l := range mine {
					err := p.Submit(Job{Stream: l.s, PCM: pcm, Seq: uint64(round), Done: func(r Result) {
						l.answers[r.Seq].Add(1)
						l.free <- struct{}{}
					}})
					switch {
					case err == nil:
						accepted = append(accepted, l)
					case errors.Is(err, ErrPoolFull):
						l.refused[round] = true
					default:
						t.Errorf("Submit: %v", err)
					}
				}
				for _, l := range accepted {
					<-l.free
				}
			}
		}()
	}
	wg.Wait()
	var accepted, refused uint64
	for i, l := range logs {
		for round := range rounds {
			n := l.answers[round].Load()
			switch {
			case l.refused[round] && n != 0:
				t.Errorf("stream %d window %d refused but answered %d times", i, round, n)
			case !l.refused[round] && n != 1:
				t.Errorf("stream %d window %d accepted, answered %d times", i, round, n)
			}
			if l.refused[round] {
				refused++
			} else {
				accepted++
			}
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	st := p.Stats()
	if st.Submitted != accepted || st.Refused != refused || st.Completed+st.Failed+st.TimedOut+st.Cancelled != accepted {
		t.Errorf("stats %+v, want %d accepted and %d refused", st, accepted, refused)
	}
	// The queue of 4 is far smaller than the 32 streams: some windows must
	// have been refused, or the test did not test refusal.
	if refused == 0 {
		t.Errorf("no window was refused")
	}
	t.Logf("stats %+v, mean batch %.2f", st, st.MeanBatch())
}

// TestPoolDeadline: a window whose deadline passes while it waits is
// answered with ErrDeadline without running; the others of the batch run.
// TestPoolBatchInterval (virtual time): with a batch interval a worker
// runs a window that comes after a pause at once, holds those that come
// sooner than the interval after its last batch began and runs them as one
// batch at the interval's end, never later; Close while it holds one
// answers it once with ErrPoolClosed. (Mutations seen failing: no pacing,
// and the next start set only after a wait rather than after every batch:
// both answer the windows of 1-3 ms before the interval's end.)
func TestPoolBatchInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const interval = 5 * time.Millisecond
		p := newTestPool(t, PoolConfig{Workers: 1, MaxBatch: 8, BatchInterval: interval})
		t0 := time.Now()
		type answer struct {
			r  Result
			at time.Duration
		}
		answers := make(chan answer, 16)
		done := func(r Result) { answers <- answer{r, time.Since(t0)} }
		submit := func(seq uint64) {
			t.Helper()
			if err := p.Submit(Job{Stream: p.NewStream(), PCM: noise(p.WindowSize(), uint32(seq)), Seq: seq, Done: done}); err != nil {
				t.Fatal(err)
			}
		}
		// at submits seq at virtual time at.
		at := func(d time.Duration, seq uint64) {
			time.Sleep(d - time.Since(t0))
			submit(seq)
		}
		expect := func(seq uint64, batch int, when time.Duration) {
			t.Helper()
			a := <-answers
			if a.r.Seq != seq || a.r.Err != nil || a.r.Batch != batch || a.at != when {
				t.Errorf("got window %d (batch %d, err %v) at %v; want window %d in a batch of %d at %v", a.r.Seq, a.r.Batch, a.r.Err, a.at, seq, batch, when)
			}
		}
		at(0, 0)
		expect(0, 1, 0) // the first runs at once
		at(time.Millisecond, 1)
		at(2*time.Millisecond, 2)
		at(3*time.Millisecond, 3)
		synctest.Wait()
		if len(answers) != 0 {
			t.Fatalf("%d windows answered before the interval's end", len(answers))
		}
		time.Sleep(interval - time.Since(t0))
		synctest.Wait()
		// The one taken at 1 ms, then the two that waited, all at 5 ms.
		got := map[uint64]bool{}
		for range 3 {
			a := <-answers
			got[a.r.Seq] = true
			if a.r.Batch != 3 || a.at != interval {
				t.Errorf("window %d: batch %d at %v, want a batch of 3 at %v", a.r.Seq, a.r.Batch, a.at, interval)
			}
		}
		if len(got) != 3 {
			t.Errorf("windows %v, want 1, 2 and 3", got)
		}
		// After a pause (the last batch began at 5 ms): at once.
		at(21*time.Millisecond, 4)
		expect(4, 1, 21*time.Millisecond)
		// Sooner than the interval: held, then Close answers it once.
		at(22*time.Millisecond, 5)
		synctest.Wait()
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		a := <-answers
		if a.r.Seq != 5 || !errors.Is(a.r.Err, ErrPoolClosed) {
			t.Errorf("held window at Close: %+v", a.r)
		}
		synctest.Wait()
		if len(answers) != 0 {
			t.Errorf("%d more answers", len(answers))
		}
		if st := p.Stats(); st.Submitted != 6 || st.Completed != 5 || st.Cancelled != 1 || st.Batches != 3 {
			t.Errorf("stats %+v", st)
		}
	})
}

func TestPoolDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newTestPool(t, PoolConfig{Workers: 1, MaxBatch: 8})
		b := block(t, p)
		c := newCollector()
		late, soon, later, never := p.NewStream(), p.NewStream(), p.NewStream(), p.NewStream()
		now := time.Now()
		c.submit(t, p, late, 1, now.Add(-time.Millisecond)) // already late
		c.submit(t, p, soon, 2, now.Add(10*time.Millisecond))
		c.submit(t, p, later, 3, now.Add(time.Hour))
		c.submit(t, p, never, 4, time.Time{})
		time.Sleep(20 * time.Millisecond)
		close(b.release)
		c.wg.Wait()
		// Mutation: without the deadline check the late windows run.
		for seq, s := range map[uint64]*Stream{1: late, 2: soon} {
			if r := c.one(t, seq); !errors.Is(r.Err, ErrDeadline) || r.Batch != 0 || s.Windows() != 0 {
				t.Errorf("window %d: %+v, stream ran %d windows; want ErrDeadline unrun", seq, r, s.Windows())
			}
		}
		for seq, s := range map[uint64]*Stream{3: later, 4: never} {
			if r := c.one(t, seq); r.Err != nil || r.Batch != 2 || s.Windows() != 1 {
				t.Errorf("window %d: %+v, want run in a batch of 2", seq, r)
			}
		}
		if st := p.Stats(); st.TimedOut != 2 || st.Completed != 3 {
			t.Errorf("stats %+v, want 2 timed out and 3 completed", st)
		}
		// An expired stream is free again: its next window runs.
		c.submit(t, p, soon, 5, time.Time{})
		c.wg.Wait()
		if r := c.one(t, 5); r.Err != nil || soon.Windows() != 1 {
			t.Errorf("next window of the expired stream: %+v", r)
		}
	})
}

// TestPoolCloseAnswersQueued: Close waits for the running batch, answers
// the queued windows with ErrPoolClosed, refuses new ones and leaves no
// goroutine.
func TestPoolCloseAnswersQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newTestPool(t, PoolConfig{Workers: 1})
		b := block(t, p)
		c := newCollector()
		queued := []*Stream{p.NewStream(), p.NewStream()}
		for i, s := range queued {
			c.submit(t, p, s, uint64(i), time.Time{})
		}
		closed := make(chan error)
		go func() { closed <- p.Close() }()
		synctest.Wait() // Close waits for the worker, held by the blocker
		if err := p.Submit(Job{Stream: p.NewStream(), PCM: make([]int16, p.WindowSize()), Done: func(Result) {
			t.Error("Done called for a refused window")
		}}); !errors.Is(err, ErrPoolClosed) {
			t.Errorf("Submit during Close = %v, want ErrPoolClosed", err)
		}
		close(b.release)
		if err := <-closed; err != nil {
			t.Fatalf("Close: %v", err)
		}
		c.wg.Wait()
		// Mutation: a Close that does not drain the queue leaves these
		// unanswered (c.wg.Wait hangs and synctest reports the deadlock).
		for i, s := range queued {
			if r := c.one(t, uint64(i)); !errors.Is(r.Err, ErrPoolClosed) || s.Windows() != 0 {
				t.Errorf("queued window %d: %+v", i, r)
			}
		}
		if b.result.Err != nil {
			t.Errorf("the running window: %v", b.result.Err)
		}
		if st := p.Stats(); st.Cancelled != 2 || st.Completed != 1 || st.Submitted != 3 {
			t.Errorf("stats %+v", st)
		}
		if err := p.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})
}

func TestPoolSubmitRefusals(t *testing.T) {
	p := newTestPool(t, PoolConfig{Workers: 1, QueueSize: 1})
	w := p.WindowSize()
	noop := func(Result) {}
	s8, _ := NewStream(Rate8k)
	tests := []struct {
		name string
		job  Job
		want error
	}{
		{"nil stream", Job{PCM: make([]int16, w), Done: noop}, ErrInvalidInput},
		{"nil done", Job{Stream: p.NewStream(), PCM: make([]int16, w)}, ErrInvalidInput},
		{"short window", Job{Stream: p.NewStream(), PCM: make([]int16, w-1), Done: noop}, ErrInvalidInput},
		{"stream of another rate", Job{Stream: s8, PCM: make([]int16, 256), Done: noop}, ErrInvalidInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := p.Submit(tt.job); !errors.Is(err, tt.want) {
				t.Fatalf("Submit = %v, want %v", err, tt.want)
			}
		})
	}
	// With the worker held and the queue (of one) full: a second window of
	// a queued stream is busy, a window of another stream is refused.
	b := block(t, p)
	c := newCollector()
	s := p.NewStream()
	c.submit(t, p, s, 1, time.Time{})
	// Mutation: without the busy flag the stream is queued twice and its
	// second answer calls the cleared callback: the test crashes.
	if err := p.Submit(Job{Stream: s, PCM: make([]int16, w), Done: noop}); !errors.Is(err, ErrStreamBusy) {
		t.Errorf("second window of a busy stream: %v, want ErrStreamBusy", err)
	}
	if err := s.Reset(); !errors.Is(err, ErrStreamBusy) {
		t.Errorf("Reset of a busy stream: %v, want ErrStreamBusy", err)
	}
	other := p.NewStream()
	if err := p.Submit(Job{Stream: other, PCM: make([]int16, w), Done: noop}); !errors.Is(err, ErrPoolFull) {
		t.Errorf("window into a full queue: %v, want ErrPoolFull", err)
	}
	close(b.release)
	c.wg.Wait()
	if st := p.Stats(); st.Refused != 1 || other.busy.Load() {
		t.Errorf("after a refusal: stats %+v, stream busy %v", st, other.busy.Load())
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Submit(Job{Stream: other, PCM: make([]int16, w), Done: noop}); !errors.Is(err, ErrPoolClosed) {
		t.Errorf("Submit after Close = %v, want ErrPoolClosed", err)
	}
}

func TestPoolSubmitAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	p := newTestPool(t, PoolConfig{Workers: 1})
	s := p.NewStream()
	pcm := noise(p.WindowSize(), 9)
	results := make(chan Result, 1)
	job := Job{Stream: s, PCM: pcm, Done: func(r Result) { results <- r }}
	allocs := testing.AllocsPerRun(50, func() {
		if err := p.Submit(job); err != nil {
			t.Fatal(err)
		}
		if r := <-results; r.Err != nil {
			t.Fatal(r.Err)
		}
	})
	// Mutation: wrapping the job's callback in a closure in Submit (or
	// queueing a fresh job struct) allocates per window and fails here.
	if allocs != 0 {
		t.Errorf("%v allocations per window through the pool, want 0", allocs)
	}
}
