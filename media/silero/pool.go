package silero

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of PoolConfig.
const (
	// DefaultMaxWorkers caps the default worker count (one per core).
	DefaultMaxWorkers = 2
	// DefaultQueueSize bounds the windows waiting for a worker. With two
	// workers at about 60 µs per window in a batch, a full queue of 512 is
	// about 15 ms of work: half a window, so a window queued behind it still
	// comes back well before the next one is due.
	DefaultQueueSize = 512
	// MaxBatchInterval bounds PoolConfig.BatchInterval: what it adds to a
	// window's wait counts against the speech decisions' latency.
	MaxBatchInterval = 10 * time.Millisecond
)

// PoolConfig configures a Pool. Zero values take the defaults.
type PoolConfig struct {
	// RuntimePath and ModelPath locate the native files; empty: see
	// LocateFiles.
	RuntimePath string
	ModelPath   string
	// SampleRate is the rate of the windows Submit takes: Rate16k (default)
	// or Rate8k.
	SampleRate int
	// ModelRate is the rate the model runs at: Rate8k (the default, for
	// both sample rates) or, for a 16 kHz pool, Rate16k. On a 16 kHz pool
	// with the 8 kHz model each window (512 samples) is decimated to 8 kHz
	// (256 samples, the stream's own filter, see decimator) on the worker
	// and the 8 kHz model scores it: 60 % of the 16 kHz model's instructions
	// per window in batches of 64 (66 % with the decimation), the fixtures'
	// speech marked as well
	// (actors/vad's TestSileroThroughTheVADActor runs both). The window's
	// duration (32 ms) is the same at both rates.
	ModelRate int
	// Workers is the number of worker goroutines, each owning one Model
	// (default: one per core, at most DefaultMaxWorkers).
	Workers int
	// MaxBatch is the most waiting windows a worker runs as one batch
	// (default DefaultMaxBatch).
	MaxBatch int
	// QueueSize bounds the windows waiting for a worker (default
	// DefaultQueueSize); Submit refuses a window when it is full.
	QueueSize int
	// BatchInterval is the least time between the starts of one worker's
	// batches (0: none, a worker runs what waits as soon as it is free). A
	// window that comes sooner waits for the interval's end with the others
	// that come meanwhile, so under load the batches grow and the fixed cost
	// of a run is paid at most 1/BatchInterval times a second per worker; a
	// window that comes after a pause runs at once. It adds at most
	// BatchInterval to a window's wait.
	BatchInterval time.Duration
}

func (c PoolConfig) withDefaults() PoolConfig {
	if c.SampleRate == 0 {
		c.SampleRate = Rate16k
	}
	if c.ModelRate == 0 {
		c.ModelRate = Rate8k
	}
	if c.Workers == 0 {
		c.Workers = min(runtime.NumCPU(), DefaultMaxWorkers)
	}
	if c.MaxBatch == 0 {
		c.MaxBatch = DefaultMaxBatch
	}
	if c.QueueSize == 0 {
		c.QueueSize = DefaultQueueSize
	}
	return c
}

// Validate reports a configuration that cannot work.
func (c PoolConfig) Validate() error {
	if err := (ModelConfig{SampleRate: c.SampleRate, MaxBatch: c.MaxBatch}).Validate(); err != nil {
		return err
	}
	in := c.SampleRate
	if in == 0 {
		in = Rate16k
	}
	switch {
	case c.ModelRate != 0 && c.ModelRate != in && (in != Rate16k || c.ModelRate != Rate8k):
		return fmt.Errorf("%w: model rate %d for %d Hz windows (want %d, or %d for 16 kHz windows)", ErrInvalidConfig, c.ModelRate, in, in, Rate8k)
	case c.Workers < 0 || c.Workers > 256:
		return fmt.Errorf("%w: %d workers (want 1..256)", ErrInvalidConfig, c.Workers)
	case c.QueueSize < 0 || c.QueueSize > 1<<20:
		return fmt.Errorf("%w: queue size %d (want 1..%d)", ErrInvalidConfig, c.QueueSize, 1<<20)
	case c.BatchInterval < 0 || c.BatchInterval > MaxBatchInterval:
		return fmt.Errorf("%w: batch interval %v (want 0..%v)", ErrInvalidConfig, c.BatchInterval, MaxBatchInterval)
	}
	return nil
}

// Job is one window of one stream to run.
type Job struct {
	// Stream is the caller's stream; it must have no other window in
	// flight.
	Stream *Stream
	// PCM is the window: exactly WindowSize(rate) samples. Submit copies it,
	// so the caller may reuse the slice at once.
	PCM []int16
	// Seq is the caller's number for the window, echoed in the Result (for
	// instance to find the window's timestamp).
	Seq uint64
	// Deadline, when not zero, is when the window stops being worth
	// running: a window still queued then is answered with ErrDeadline.
	Deadline time.Time
	// Done receives the result exactly once when Submit returned nil; never
	// when it returned an error. It is called on a worker goroutine (or in
	// Close) and must return quickly without blocking: an actor wires it to
	// send itself a message. The stream is free again when Done is called,
	// so Done (or the actor) may submit its next window. Done must not call
	// Close.
	Done func(Result)
}

// Result is the outcome of one submitted window.
type Result struct {
	// Stream and Seq identify the window (copied from the Job).
	Stream *Stream
	Seq    uint64
	// Prob is the speech probability in [0, 1]; valid when Err is nil.
	Prob float32
	// Err is nil, or wraps ErrDeadline, ErrPoolClosed or ErrInference; on
	// error the stream did not change.
	Err error
	// Batch is the size of the batch the window ran in (0 if it did not
	// run).
	Batch int
}

// PoolStats is a snapshot of a pool's counters since NewPool. Every
// accepted window ends as exactly one of Completed, Failed, TimedOut or
// Cancelled; Submitted minus their sum is in flight.
type PoolStats struct {
	// Submitted counts the windows Submit accepted.
	Submitted uint64
	// Refused counts the windows Submit refused with ErrPoolFull.
	Refused uint64
	// Completed counts the windows run and answered with a probability.
	Completed uint64
	// Failed counts the windows of batches that ONNX Runtime failed to run.
	Failed uint64
	// TimedOut counts the windows answered with ErrDeadline.
	TimedOut uint64
	// Cancelled counts the windows answered with ErrPoolClosed by Close.
	Cancelled uint64
	// Batches counts the batches run; Completed+Failed over Batches is the
	// mean batch size.
	Batches uint64
	// Queued is the number of windows waiting now.
	Queued int
}

// MeanBatch is the mean number of windows per batch run (0 before any).
func (s PoolStats) MeanBatch() float64 {
	if s.Batches == 0 {
		return 0
	}
	return float64(s.Completed+s.Failed) / float64(s.Batches)
}

// Pool runs the windows of many streams on a few worker goroutines, each
// owning one Model (one ONNX Runtime session, one thread). Submit never
// blocks: it queues the window or refuses it. A worker takes up to MaxBatch
// waiting windows and runs them as one batch, which costs much less per
// window than running them alone. Results come back through each Job's
// Done callback. Submit and Stats are safe for concurrent use.
type Pool struct {
	cfg    PoolConfig
	window int // samples of a submitted window, at cfg.SampleRate
	queue  chan *Stream
	quit   chan struct{}
	wg     sync.WaitGroup
	models []*Model

	// mu orders Submit (read lock) against Close (write lock), so that no
	// window enters the queue after Close drained it.
	mu     sync.RWMutex
	closed bool

	submitted, refused, completed, failed atomic.Uint64
	timedOut, cancelled, batches          atomic.Uint64
}

// NewPool locates and loads the runtime and model, makes one Model per
// worker, warms every model up (one batch of silence of each power of two
// up to MaxBatch, and MaxBatch) and starts the workers. Errors wrap
// ErrInvalidConfig, ErrRuntimeUnavailable or ErrModelUnavailable. The caller
// must Close the pool.
func NewPool(cfg PoolConfig) (_ *Pool, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	files, err := LocateFiles(cfg.RuntimePath, cfg.ModelPath)
	if err != nil {
		return nil, err
	}
	p := &Pool{
		cfg:    cfg,
		window: WindowSize(cfg.SampleRate),
		queue:  make(chan *Stream, cfg.QueueSize),
		quit:   make(chan struct{}),
	}
	defer func() {
		if err != nil {
			for _, m := range p.models {
				m.Close()
			}
		}
	}()
	// The file check needs the runtime; the first model's reference
	// serves, and each further model takes its own.
	mcfg := ModelConfig{SampleRate: cfg.ModelRate, MaxBatch: cfg.MaxBatch}
	var data []byte
	var spec modelSpec
	for i := range cfg.Workers {
		rt, err := acquireRuntime(files.Runtime)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			data, spec, err = loadModelFile(files.Model)
			if err != nil {
				rt.release()
				return nil, err
			}
		}
		m, err := newModel(rt, files.Model, data, spec, mcfg)
		if err != nil {
			rt.release()
			return nil, err
		}
		p.models = append(p.models, m)
	}
	sizes := warmUpSizes(cfg.MaxBatch)
	for _, m := range p.models {
		if err := m.warmUp(sizes); err != nil {
			return nil, err
		}
	}
	for _, m := range p.models {
		p.wg.Add(1)
		go p.work(m)
	}
	return p, nil
}

// warmUpSizes are 1, 2, 4, ... up to max, and max.
func warmUpSizes(max int) []int {
	var sizes []int
	for n := 1; n < max; n *= 2 {
		sizes = append(sizes, n)
	}
	return append(sizes, max)
}

// NewStream makes a stream for the pool's sample rate (and, when the model
// runs at 8 kHz on 16 kHz windows, with its decimator).
func (p *Pool) NewStream() *Stream {
	s := &Stream{rate: p.cfg.ModelRate, inRate: p.cfg.SampleRate}
	if p.cfg.ModelRate != p.cfg.SampleRate {
		s.down = newDecimator()
	}
	return s
}

// WindowSize is the number of samples of each Job's PCM.
func (p *Pool) WindowSize() int { return p.window }

// Submit queues one window without blocking. It returns nil when the window
// was queued (its Done will be called exactly once), or an error and then
// Done is never called and the stream is unchanged: ErrPoolFull when the
// queue is full (counted as refused), ErrPoolClosed after Close,
// ErrStreamBusy when the stream has a window in flight, ErrInvalidInput for
// a nil stream or callback, a stream of another rate or a window of the
// wrong length. It does not allocate.
func (p *Pool) Submit(j Job) error {
	s := j.Stream
	switch {
	case s == nil || j.Done == nil:
		return fmt.Errorf("%w: job without a stream or a Done callback", ErrInvalidInput)
	case s.inRate != p.cfg.SampleRate || s.rate != p.cfg.ModelRate:
		return fmt.Errorf("%w: stream for %d Hz windows and a %d Hz model, pool for %d Hz and %d Hz (make streams with Pool.NewStream)",
			ErrInvalidInput, s.inRate, s.rate, p.cfg.SampleRate, p.cfg.ModelRate)
	case len(j.PCM) != p.window:
		return fmt.Errorf("%w: window of %d samples, want %d", ErrInvalidInput, len(j.PCM), p.window)
	}
	if !s.busy.CompareAndSwap(false, true) {
		return ErrStreamBusy
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		s.busy.Store(false)
		return ErrPoolClosed
	}
	copy(s.pcm[:], j.PCM)
	s.seq, s.deadline, s.done = j.Seq, j.Deadline, j.Done
	select {
	case p.queue <- s:
		p.submitted.Add(1)
		return nil
	default:
		s.done = nil
		s.busy.Store(false)
		p.refused.Add(1)
		return ErrPoolFull
	}
}

// Stats returns a snapshot of the counters.
func (p *Pool) Stats() PoolStats {
	return PoolStats{
		Submitted: p.submitted.Load(),
		Refused:   p.refused.Load(),
		Completed: p.completed.Load(),
		Failed:    p.failed.Load(),
		TimedOut:  p.timedOut.Load(),
		Cancelled: p.cancelled.Load(),
		Batches:   p.batches.Load(),
		Queued:    len(p.queue),
	}
}

// Close stops the workers after their current batch, waits for them,
// answers every window still queued with ErrPoolClosed and closes the
// models. Later Submits fail with ErrPoolClosed. It is idempotent and must
// not be called from a Done callback.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.mu.Unlock()
	close(p.quit)
	p.wg.Wait()
	for len(p.queue) > 0 {
		s := <-p.queue
		p.cancelled.Add(1)
		finish(s, Result{Err: ErrPoolClosed})
	}
	var errs []error
	for _, m := range p.models {
		if err := m.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	p.models = nil
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// finish frees the stream and calls its Done with r. The callback and
// sequence number are taken before the stream is freed: once free, the
// caller may submit the next window, which overwrites them.
func finish(s *Stream, r Result) {
	done := s.done
	r.Stream, r.Seq = s, s.seq
	s.done = nil
	s.busy.Store(false)
	done(r)
}

// work is one worker: it takes a window, gathers up to MaxBatch-1 more that
// are already waiting, answers the expired ones and runs the rest as one
// batch.
func (p *Pool) work(m *Model) {
	defer p.wg.Done()
	batch := make([]*Stream, 0, p.cfg.MaxBatch)
	pcm := make([][]int16, 0, p.cfg.MaxBatch)
	probs := make([]float32, p.cfg.MaxBatch)
	// pace holds the worker until BatchInterval after its last batch
	// began; its timer is made once and reset.
	var pace *time.Timer
	var next time.Time
	if p.cfg.BatchInterval > 0 {
		pace = time.NewTimer(time.Hour)
		pace.Stop()
		defer pace.Stop()
	}
	for {
		// Quitting wins over waiting windows, so that once Close began no
		// further batch starts and Close answers what is queued.
		select {
		case <-p.quit:
			return
		default:
		}
		var first *Stream
		select {
		case <-p.quit:
			return
		case first = <-p.queue:
		}
		now := time.Now()
		if pace != nil {
			if wait := next.Sub(now); wait > 0 {
				pace.Reset(wait)
				select {
				case <-p.quit:
					// Close answers what is queued; first is no longer.
					p.cancelled.Add(1)
					finish(first, Result{Err: ErrPoolClosed})
					return
				case <-pace.C:
					now = time.Now()
				}
			}
			next = now.Add(p.cfg.BatchInterval)
		}
		batch, pcm = batch[:0], pcm[:0]
		for s := first; s != nil; {
			if !s.deadline.IsZero() && now.After(s.deadline) {
				p.timedOut.Add(1)
				finish(s, Result{Err: ErrDeadline})
			} else {
				batch = append(batch, s)
				pcm = append(pcm, s.modelWindow(p.window))
			}
			s = nil
			if len(batch) < cap(batch) {
				select {
				case s = <-p.queue:
				default:
				}
			}
		}
		if len(batch) == 0 {
			continue
		}
		p.run(m, batch, pcm, probs)
	}
}

// run runs one batch and answers its windows.
func (p *Pool) run(m *Model, batch []*Stream, pcm [][]int16, probs []float32) {
	n := len(batch)
	err := m.Run(batch, pcm, probs)
	p.batches.Add(1)
	if err != nil {
		p.failed.Add(uint64(n))
	} else {
		p.completed.Add(uint64(n))
	}
	for i, s := range batch {
		r := Result{Batch: n, Err: err}
		if err == nil {
			r.Prob = probs[i]
		}
		finish(s, r)
		batch[i] = nil
	}
}
