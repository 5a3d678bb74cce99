package chaostest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"runtime/metrics"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/brisvox/brisvox/cmd/internal/serve"
	"github.com/brisvox/brisvox/media/carrier/pcmws"
	"github.com/brisvox/brisvox/messages"
)

// Report is what a run found.
type Report struct {
	Calls    int           `json:"calls"` // callers at once
	Hold     time.Duration `json:"hold_ns"`
	Seed     uint64        `json:"seed"`
	Faults   bool          `json:"faults"`
	Placed   int           `json:"placed"`    // calls placed
	Ended    int           `json:"ended"`     // calls whose end the server reported
	PeakLive int           `json:"peak_live"` // most calls live at once
	// ByFault counts the calls per fault ("" is healthy).
	ByFault map[string]int `json:"by_fault"`
	// Restarts counts the stage restarts over all calls.
	Restarts map[messages.Stage]int `json:"restarts"`
	// Violations are the broken invariants, one line per call ("name
	// (fault): what").
	Violations []string `json:"violations"`
	// Disturbed are the healthy calls whose conversation did not go as
	// scripted because the machine was too slow (check.go's disturbed):
	// one line each.
	Disturbed []string `json:"disturbed"`
	// Healthy are the engine-added latencies of the healthy calls'
	// turns, by call index (the same index is the same call in a run
	// with and without faults).
	Healthy map[int][]time.Duration `json:"healthy_ns"`
	// Goroutines and heap (live bytes after a collection) before the
	// calls (after a warm-up round on a server of its own) and after
	// the run, once the server and the callers were gone.
	GoroutinesBefore int           `json:"goroutines_before"`
	GoroutinesAfter  int           `json:"goroutines_after"`
	HeapBefore       uint64        `json:"heap_before_bytes"`
	HeapAfter        uint64        `json:"heap_after_bytes"`
	HeapPerCall      float64       `json:"heap_per_call_bytes"` // (after - before) / placed
	Elapsed          time.Duration `json:"elapsed_ns"`
}

// HealthyLatencies is every healthy turn's engine-added latency, of the
// calls with the given indexes (all when nil), sorted.
func (r *Report) HealthyLatencies(only map[int]bool) []time.Duration {
	var out []time.Duration
	for i, ds := range r.Healthy {
		if only == nil || only[i] {
			out = append(out, ds...)
		}
	}
	slices.Sort(out)
	return out
}

// Quantile is the q-quantile (nearest rank) of sorted durations; 0 for
// none.
func Quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	k := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(k, 0), len(sorted)-1)]
}

// Run places the calls of cfg and checks every call; the error is for a
// run that could not be carried out (a broken invariant is a line of
// Report.Violations, not an error).
func Run(ctx context.Context, cfg Config) (Report, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return Report{}, err
	}
	began := time.Now()
	// A warm-up round on a server of its own, every caller placing one
	// short call: what the calls make once is not counted against them
	// (pools, the HTTP stack's and the actor library's state, and the
	// runtime's goroutine descriptors, which it keeps for reuse once the
	// goroutines are gone: about 0.5 KB each, up to the peak count).
	warm := cfg
	warm.NoFaults = true
	if _, err := runPhase(ctx, warm, true); err != nil {
		return Report{}, fmt.Errorf("warm-up: %w", err)
	}
	gBefore, hBefore := settle(0, 0)
	rep, err := runPhase(ctx, cfg, false)
	if err != nil {
		return rep, err
	}
	rep.GoroutinesBefore, rep.HeapBefore = gBefore, hBefore
	rep.GoroutinesAfter, rep.HeapAfter = settle(gBefore, 10*time.Second)
	if rep.Placed > 0 {
		rep.HeapPerCall = (float64(rep.HeapAfter) - float64(rep.HeapBefore)) / float64(rep.Placed)
	}
	rep.Elapsed = time.Since(began)
	return rep, nil
}

// settle waits up to wait for the goroutines to come down to want, then
// collects garbage and reads the goroutines and the live heap.
func settle(want int, wait time.Duration) (goroutines int, heap uint64) {
	deadline := time.Now().Add(wait)
	for runtime.NumGoroutine() > want && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	runtime.GC()
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return runtime.NumGoroutine(), s[0].Value.Uint64()
}

// runPhase serves one round of calls on a fresh server and listener and
// returns when the server and every caller are gone. warmup cuts each
// call short (a hang-up after the first answer began) and checks nothing.
func runPhase(ctx context.Context, cfg Config, warmup bool) (Report, error) {
	rep := Report{
		Calls: cfg.Calls, Hold: cfg.Hold, Seed: cfg.Seed, Faults: !cfg.NoFaults,
		ByFault: map[string]int{}, Restarts: map[messages.Stage]int{}, Healthy: map[int][]time.Duration{},
	}
	ag := newChaosAgent()
	srv, err := serve.New(serve.Config{
		MaxCalls: cfg.Calls + 8, DrainTimeout: 5 * time.Second, ClosingTimeout: 2 * time.Second,
		IdleFree: -1, Log: *cfg.Log, Observe: ag.observe, ObserveEnd: ag.observeEnd,
	}, ag)
	if err != nil {
		return rep, fmt.Errorf("%w: %w", ErrRun, err)
	}
	h, err := pcmws.New(pcmws.Config{OnCall: func(c *pcmws.Call) { srv.Start(c) }, Admit: srv.Admit, Logger: *cfg.Log})
	if err != nil {
		return rep, fmt.Errorf("%w: %w", ErrRun, err)
	}
	srv.Handle("/pcm", h, "pcm", h.Stats, h.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return rep, fmt.Errorf("%w: %w", ErrRun, err)
	}
	sctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	served := make(chan error, 1)
	go func() { served <- srv.Serve(sctx, ln) }()
	transport := &http.Transport{DisableKeepAlives: true}
	client := &http.Client{Transport: transport}
	url := "ws://" + ln.Addr().String() + "/pcm?rate=16000&call="

	var mu sync.Mutex
	var runErrs []error
	rounds := cfg.rounds()
	if warmup {
		rounds = 1
	}
	start := time.Now()
	var wg sync.WaitGroup
	for s := range cfg.Calls {
		wg.Go(func() {
			offset := startSpread * time.Duration(s) / time.Duration(cfg.Calls)
			for k := range rounds {
				if !sleepUntil(ctx, start.Add(offset+time.Duration(k)*Period)) {
					return
				}
				i := k*cfg.Calls + s
				p := newPlan(cfg.Seed, i, fmt.Sprintf("c%04d-%d", s, k), !cfg.NoFaults)
				if warmup {
					p.hangupAt = 4 * time.Second
				}
				sum, err := placeCall(ctx, ag, p, url, client)
				mu.Lock()
				if err != nil {
					runErrs = append(runErrs, err)
				}
				if !warmup {
					rep.add(p, sum)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	stop()
	err = <-served
	transport.CloseIdleConnections()
	rep.PeakLive = ag.peak()
	if err != nil {
		runErrs = append(runErrs, fmt.Errorf("%w: serve: %w", ErrRun, err))
	}
	sort.Strings(rep.Violations)
	sort.Strings(rep.Disturbed)
	return rep, errors.Join(runErrs...)
}

func sleepUntil(ctx context.Context, t time.Time) bool {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// summary is what a run keeps of a call once it is checked: the records
// are dropped at once, so that the heap after the run holds none.
type summary struct {
	ended     bool
	restarts  map[messages.Stage]int
	err       error
	disturbed string
	added     []time.Duration
}

func (r *Report) add(p *plan, s summary) {
	r.Placed++
	r.ByFault[p.fault]++
	if s.ended {
		r.Ended++
	}
	for st, n := range s.restarts {
		r.Restarts[st] += n
	}
	if s.err != nil {
		r.Violations = append(r.Violations, fmt.Sprintf("%s: %v", p, s.err))
	}
	if s.disturbed != "" {
		r.Disturbed = append(r.Disturbed, fmt.Sprintf("%s: %s", p, s.disturbed))
	}
	if p.fault == "" && len(s.added) > 0 {
		r.Healthy[p.index] = s.added
	}
}

// startSpread is the window over which the callers place their first
// calls: short, so that all of them are live together for most of a
// Period (the scripts take 20.5-21.5 s of its 24), and spread, so that the
// starts are not one burst.
const startSpread = 4 * time.Second

// endWait bounds the wait for the server's report of a call's end after
// its websocket closed.
const endWait = 10 * time.Second

// placeCall runs one call and checks it.
func placeCall(ctx context.Context, ag *chaosAgent, p *plan, url string, client *http.Client) (summary, error) {
	st, err := newCallState(p)
	if err != nil {
		return summary{}, err
	}
	ag.register(st)
	defer ag.forget(st)
	rec := &callRecord{Name: p.name, Fault: p.fault, Tool: p.tool}
	c := &caller{plan: p, url: url + p.name, client: client}
	runErr := c.run(ctx, rec, &st.started)
	var sum summary
	timer := time.NewTimer(endWait)
	defer timer.Stop()
	select {
	case e := <-st.ended:
		rec.Ended = &e
		sum.ended, sum.restarts = true, e.Restarts
	case <-timer.C:
	case <-ctx.Done():
	}
	rec.Clears = st.clears.clears()
	rec.Words = st.stamps.spokenWords()
	st.mu.Lock()
	rec.Events = slices.Clone(st.events)
	st.mu.Unlock()
	rec.Requests = st.llm.requests()
	rec.Runs = st.runs.list()
	sum.err = checkCall(rec)
	if runErr != nil {
		sum.err = errors.Join(runErr, sum.err)
	}
	if p.fault == "" {
		sum.disturbed = disturbed(rec)
		// Every healthy call's turns, those of a call that broke an
		// invariant too: they are the slow ones, the tail.
		sum.added = engineAdded(rec, p)
	}
	return sum, nil
}
