package serve

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"sort"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/actors/kit"
	"github.com/brisvox/brisvox/actors/session"
	"github.com/brisvox/brisvox/actors/switchboard"
	"github.com/brisvox/brisvox/cmd/internal/admit"
	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/messages"
	"github.com/rs/zerolog"
)

//go:embed page
var pageFiles embed.FS

// Conn is a served call's connection, as the transports make it.
type Conn interface {
	conn.Conn
	// ID is the call's id, unique in the process (it becomes the call id).
	ID() string
	// Hangup ends the call from the server's side; kind says how (a
	// websocket's close code).
	Hangup(kind conn.EndKind, reason string)
}

// publisher is a connection that can carry live events to its caller
// (the WebRTC page, the PCM websocket). An error (the queue is gone with
// the call) drops the event: the page is told nothing more of a call
// that ended.
type publisher interface{ Publish(v any) error }

// CallEnv is what the agent gets to build a call's session.
type CallEnv struct {
	ID   messages.CallID
	Conn conn.Conn
	// Ender ends a call after its current answer (the end_call tool).
	Ender *Server
	// Dial is the operator's request of a call we placed (its
	// variables, whether to wait for the callee); nil for a call that
	// came in.
	Dial *DialRequest
}

// Agent turns a new call into a session config.
type Agent interface {
	// Name is shown on the page.
	Name() string
	// Session returns the call's config: providers, prompt, tools, turn
	// and VAD settings. Call, Conn, Log, OnEnd and OnEvent are the
	// server's (a zero zerolog.Logger from the agent would log nothing,
	// and cannot be told from a chosen one).
	Session(env CallEnv) (session.Config, error)
}

// Guide is what the page tells a caller about the agent (GET /agent):
// what it can do, phrases to try, the tools it has.
type Guide struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Examples    []string `json:"examples,omitempty"`
	Tools       []string `json:"tools,omitempty"`
}

// Guider is an Agent with more to say on its page than its name.
type Guider interface {
	Guide() Guide
}

// Config tunes the server.
type Config struct {
	// MaxCalls is the admission limit. Default 20.
	MaxCalls int
	// DrainTimeout is how long live calls may go on after a shutdown
	// began, before they are ended with ClosingLine. Default 30 s.
	DrainTimeout time.Duration
	// ClosingLine is spoken to calls still live at the drain deadline;
	// ClosingTimeout bounds it, then they are hung up. Defaults: a short
	// apology, 5 s.
	ClosingLine    string
	ClosingTimeout time.Duration
	// StartTimeout bounds the switchboard's answer to a new call. Default 5 s.
	StartTimeout time.Duration
	// RetryAfter is what a refusal tells the caller to wait before trying
	// again (Retry-After). Default 5 s.
	RetryAfter time.Duration
	Log        zerolog.Logger
	// IdleFree is how long the server waits, once its last call ended,
	// before it returns the Go heap's free memory to the OS
	// (debug.FreeOSMemory): after a burst the runtime would otherwise
	// keep it until its next collection, minutes away on an idle server.
	// Default 5 s; negative: never.
	IdleFree time.Duration
	// LogContent turns on every call's debug switch
	// (session.Config.LogContent): transcripts and tool arguments in the
	// debug log. Off by default.
	LogContent bool
	// Meter, when set, admits calls from their measured cost as well as
	// MaxCalls: a call that would take the meter's estimate of the load
	// past its ceiling is refused (conn.RefusedOverloaded). Serve feeds it
	// the process's CPU time (CPUTime, default getrusage) and the live
	// count every Meter.Config().Period. nil: MaxCalls alone.
	Meter *admit.Meter
	// CPUTime reads the process's CPU time for the Meter (default
	// admit.ProcessCPU).
	CPUTime admit.CPUTime
	// Node names this server in the operator API (its calls, its node
	// entry). Default: the host's name.
	Node string
	// MachineTimes reads the machine's CPU times for the Meter, so what
	// other processes take counts against the ceiling (default
	// admit.ProcStat).
	MachineTimes admit.MachineTimes
	// Observe, when set, receives every call's live events after the
	// server's own handling (metrics, the call's page), on the session's
	// goroutine: it must only hand them on and never block. The events
	// carry transcripts and EventLatency's timeline marks: for in-process
	// observers (load and chaos runs, call records), never for logs.
	Observe func(messages.CallID, messages.CallEvent)
	// ObserveEnd, when set, receives every call's end after the server
	// recorded it (same rules as Observe).
	ObserveEnd func(messages.CallEnded)
	// Keeper, when set, follows every call for its record, recording and
	// trace (keeper.go).
	Keeper Keeper
	// Records, when set, serves the node's call records, their
	// recordings and erasures on the operator API (operator_records.go;
	// RecordParts joins records.Service and the recorder). nil: those
	// routes answer 501.
	Records RecordKeeper
}

func (c Config) withDefaults() Config {
	if c.MaxCalls == 0 {
		c.MaxCalls = 20
	}
	if c.DrainTimeout == 0 {
		c.DrainTimeout = 30 * time.Second
	}
	if c.ClosingLine == "" {
		c.ClosingLine = "Sorry, this service is restarting and has to end the call now. Goodbye."
	}
	if c.ClosingTimeout == 0 {
		c.ClosingTimeout = 5 * time.Second
	}
	if c.StartTimeout == 0 {
		c.StartTimeout = 5 * time.Second
	}
	if c.RetryAfter == 0 {
		c.RetryAfter = 5 * time.Second
	}
	if c.IdleFree == 0 {
		c.IdleFree = 5 * time.Second
	}
	if c.CPUTime == nil {
		c.CPUTime = admit.ProcessCPU
	}
	if c.MachineTimes == nil {
		c.MachineTimes = admit.ProcStat
	}
	if c.Node == "" {
		if h, err := os.Hostname(); err == nil && h != "" {
			c.Node = h
		} else {
			c.Node = "brisvox"
		}
	}
	return c
}

// Validate checks a config after defaults.
func (c Config) Validate() error {
	if c.MaxCalls < 0 || c.DrainTimeout < 0 || c.ClosingTimeout < 0 || c.StartTimeout < 0 || c.RetryAfter < 0 {
		return fmt.Errorf("%w: negative limit", ErrInvalidConfig)
	}
	return nil
}

// Server runs the calls of one process.
type Server struct {
	cfg   Config
	agent Agent
	log   zerolog.Logger
	sys   *kit.System
	board *actor.PID
	mux   *http.ServeMux

	mu   sync.Mutex
	live map[messages.CallID]*callInfo
	// opDrain is an operator's drain of this node (nil: none); draining
	// and shutdown are the shutdown's.
	opDrain  *drainInfo
	shutdown *drainInfo
	// fleet is the deployment's other nodes (JoinFleet), nil alone.
	fleet Fleet
	// quit is closed when the shutdown's drain is over: the operator's
	// event streams end.
	quit chan struct{}
	// ended remembers the last calls' ends for the operator's event
	// stream (endedRing of them).
	recent endedRing
	born   time.Time
	// reserved counts the slots admitted and not yet started or released:
	// admission holds reserved + len(live) under MaxCalls.
	reserved int
	draining bool
	// skip[0] cuts the drain's wait short, skip[1] the closing line's
	// (Force); forced counts how many are closed.
	skip    [2]chan struct{}
	forced  int
	changed chan struct{} // closed and replaced when live changes
	stats   kit.Counters
	sources map[string]func() map[string]uint64
	// readiness are the transports' details on /readyz, by name.
	readiness map[string]func() any
	closers   []func()
	// idle frees memory once the server is idle (IdleFree). Guarded
	// by mu.
	idle    *time.Timer
	wg      sync.WaitGroup
	metrics *metrics
}

// New makes a server for agent. Mount the transports' handlers with
// Handle, then run it with Serve.
func New(cfg Config, agent Agent) (*Server, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if agent == nil {
		return nil, fmt.Errorf("%w: no agent", ErrInvalidConfig)
	}
	sys := kit.NewSystem(cfg.Log, kit.WithWorkers(0))
	board, err := sys.Root.SpawnNamed(switchboard.Props(), "switchboard")
	if err != nil {
		return nil, fmt.Errorf("serve: switchboard: %w", err)
	}
	s := &Server{
		cfg: cfg, agent: agent, log: cfg.Log, sys: sys, board: board, mux: http.NewServeMux(),
		live: map[messages.CallID]*callInfo{}, born: time.Now(), quit: make(chan struct{}), changed: make(chan struct{}), stats: kit.Counters{},
		skip:      [2]chan struct{}{make(chan struct{}), make(chan struct{})},
		sources:   map[string]func() map[string]uint64{},
		readiness: map[string]func() any{},
	}
	s.metrics = newMetrics(agent.Name(), func() int {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.live)
	})
	s.mux.Handle("GET /metrics", s.metrics.handler())
	page, _ := fs.Sub(pageFiles, "page")
	s.mux.Handle("/", http.FileServerFS(page))
	s.mux.HandleFunc("GET /agent", func(w http.ResponseWriter, _ *http.Request) {
		g := Guide{Name: agent.Name()}
		if gd, ok := agent.(Guider); ok {
			g = gd.Guide()
		}
		writeJSON(w, http.StatusOK, g)
	})
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	s.mux.HandleFunc("GET /readyz", s.readyz)
	s.mux.HandleFunc("GET /stats", s.statsz)
	if err := s.meterMetrics(); err != nil {
		return nil, err
	}
	if err := s.workerMetrics(); err != nil {
		return nil, err
	}
	return s, nil
}

// DispatcherWorkers is how many workers the call trees' dispatcher runs,
// busy or idle (kit.Workers: they start on demand up to its Max and
// stay), 0 without the pool. A soak judges the goroutines without them.
func (s *Server) DispatcherWorkers() int {
	if w := kit.WorkersOf(s.sys.ActorSystem); w != nil {
		return w.Started()
	}
	return 0
}

// workerMetrics exports the call trees' dispatcher (kit.Workers): how
// many workers run, the most it starts, and the runs that found them all
// busy and got a goroutine of their own (a rising count says the actors'
// Receives block, or the machine is short of cores).
func (s *Server) workerMetrics() error {
	w := kit.WorkersOf(s.sys.ActorSystem)
	if w == nil {
		return nil
	}
	return errors.Join(
		s.GaugeFunc("brisvox_actor_workers", "Workers the call trees' dispatcher runs (busy or idle).", nil,
			func() float64 { return float64(w.Started()) }),
		s.GaugeFunc("brisvox_actor_workers_max", "The most workers the dispatcher starts.", nil,
			func() float64 { return float64(w.Max()) }),
		s.CounterFunc("brisvox_actor_worker_overflow_total", "Mailbox runs that found every worker busy and got a goroutine of their own.", nil,
			func() float64 { return float64(w.Overflow()) }),
	)
}

// Handle mounts a transport's handler (its signaling or websocket) at
// pattern; stats, when set, is shown under name on /stats, and closer,
// when set, is called at shutdown once the calls have ended (it must wait
// for the transport's goroutines).
func (s *Server) Handle(pattern string, h http.Handler, name string, stats func() map[string]uint64, closer func()) {
	s.mux.Handle(pattern, h)
	s.Attach(name, stats, closer)
}

// Attach adds a transport that serves outside HTTP (SIP): its stats under
// name on /stats, and its closer called at shutdown once the calls have
// ended, as Handle's.
func (s *Server) Attach(name string, stats func() map[string]uint64, closer func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if stats != nil {
		s.sources[name] = stats
	}
	if closer != nil {
		s.closers = append(s.closers, closer)
	}
}

// Handler is the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s.mux }

// Admit reserves a slot for a new call (conn.Admitter), before any
// upgrade or media set-up: the slot counts against MaxCalls from here, so
// a burst is admitted up to the limit exactly. A refusal is a
// *conn.Refusal (full or draining, with Retry-After).
func (s *Server) Admit() (conn.Admission, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.admitLocked()
}

func (s *Server) admitLocked() (*slot, error) {
	if r := s.drainRefusalLocked(); r != nil {
		s.stats.Inc("refused_draining")
		s.metrics.refused.WithLabelValues("draining").Inc()
		return nil, r
	}
	switch {
	case s.reserved+len(s.live) >= s.cfg.MaxCalls:
		s.stats.Inc("refused_full")
		s.metrics.refused.WithLabelValues("full").Inc()
		return nil, &conn.Refusal{Cause: conn.RefusedFull, Detail: fmt.Sprintf("%d calls", s.cfg.MaxCalls), RetryAfter: s.cfg.RetryAfter}
	}
	if r := s.overloadedLocked(); r != nil {
		return nil, r
	}
	s.reserved++
	return &slot{s: s}, nil
}

// slot is an admitted call's reservation. Its state changes under the
// server's mutex: reserved, then started (the live map holds the call)
// or released; each exactly once.
type slot struct {
	s     *Server
	state slotState
}

type slotState uint8

const (
	slotReserved slotState = iota
	slotStarted
	slotReleased
)

var _ conn.Admission = (*slot)(nil)

// Release gives a reserved slot back; a started or released one is left
// as it is.
func (a *slot) Release() {
	s := a.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if a.state != slotReserved {
		return
	}
	a.state = slotReleased
	s.reserved--
	s.notifyLocked()
}

// Start runs a call that a transport accepted with the slot it carries
// (conn.Admitted; a Conn without one is admitted here). It returns
// at once: the session is started on a goroutine the server owns. The
// call counts as live from here, so a call that ends before its start is
// confirmed is still forgotten.
func (s *Server) Start(c Conn) { s.begin(c, nil, nil) }

// StartDialed runs an outbound call that was answered (the Dialer's),
// with the request that placed it, and waits for its start: nil once
// the session runs, else why not (the call is hung up and closed).
func (s *Server) StartDialed(c Conn, req DialRequest) error {
	res := make(chan error, 1)
	s.begin(c, &req, res)
	return <-res
}

// begin is Start; res, when set, gets the start's result.
func (s *Server) begin(c Conn, dial *DialRequest, res chan<- error) {
	report := func(err error) {
		if res != nil {
			res <- err
		}
	}
	id := messages.CallID(c.ID())
	var a *slot
	if ad, ok := c.(conn.Admitted); ok {
		a, _ = ad.Admission().(*slot)
	}
	s.mu.Lock()
	var refusal error
	if a == nil || a.s != s {
		a, refusal = s.admitLocked()
	}
	_, dup := s.live[id]
	started := refusal == nil && !dup && a.state == slotReserved
	if started {
		a.state = slotStarted
		s.reserved--
		s.live[id] = newCallInfo(c)
		s.notifyLocked()
	}
	s.mu.Unlock()
	switch {
	case dup:
		if a != nil {
			a.Release()
		}
		s.count("refused_duplicate")
		s.metrics.refused.WithLabelValues("duplicate").Inc()
		c.Hangup(conn.EndInternal, "duplicate call id")
		_ = c.Close()
		report(fmt.Errorf("%w: duplicate call id", ErrNotStarted))
		return
	case !started:
		// Full or draining (a Conn that came without a slot), or its
		// slot was released before the call came.
		c.Hangup(conn.EndTryLater, "not admitted")
		_ = c.Close()
		if refusal == nil {
			refusal = fmt.Errorf("%w: its slot was given back", ErrNotStarted)
		}
		report(refusal)
		return
	}
	s.wg.Go(func() { report(s.start(id, c, dial)) })
}

func (s *Server) start(id messages.CallID, c Conn, dial *DialRequest) error {
	err := s.startCall(id, c, dial)
	s.mu.Lock()
	if err == nil {
		s.stats.Inc("calls")
		s.metrics.calls.WithLabelValues("started").Inc()
	} else {
		s.stats.Inc("start_failures")
		s.metrics.calls.WithLabelValues("start_failed").Inc()
		delete(s.live, id)
		s.notifyLocked()
	}
	s.mu.Unlock()
	if err != nil {
		s.log.Error().Err(err).Str("call_id", string(id)).Msg("call not started")
		kind := conn.EndInternal
		if errors.Is(err, ErrDraining) {
			kind = conn.EndTryLater
		}
		c.Hangup(kind, "the call could not be started")
		_ = c.Close()
		return fmt.Errorf("%w: %w", ErrNotStarted, err)
	}
	s.log.Info().Str("call_id", string(id)).Msg("call started")
	return nil
}

func (s *Server) startCall(id messages.CallID, c Conn, dial *DialRequest) error {
	s.mu.Lock()
	draining := s.drainRefusalLocked() != nil
	s.mu.Unlock()
	if draining {
		return ErrDraining
	}
	cfg, err := s.agent.Session(CallEnv{ID: id, Conn: c, Ender: s, Dial: dial})
	if err != nil {
		return err
	}
	var keep Follower
	if s.cfg.Keeper != nil {
		keep = s.cfg.Keeper.Begin(s.callStart(id, c, dial))
	}
	started := false
	defer func() {
		if keep != nil && !started {
			keep.End(messages.CallEnded{Call: id, Reason: ReasonNotStarted})
		}
	}()
	cfg.Call, cfg.Conn = id, c
	cfg.LogContent = cfg.LogContent || s.cfg.LogContent
	cfg.Log = s.log
	if keep != nil {
		if tap := keep.Tap(); tap != nil {
			cfg.Tap = tap
		}
		if tid := keep.TraceID(); tid != "" {
			cfg.Log = s.log.With().Str("trace_id", tid).Logger()
		}
	}
	m, observe := s.metrics, s.cfg.Observe
	p, publishes := c.(publisher)
	cfg.OnEvent = func(e messages.CallEvent) {
		m.event(e)
		s.follow(id, &e)
		if publishes && forPage(e.Kind) {
			_ = p.Publish(EventOf(e))
		}
		if keep != nil {
			keep.Event(&e)
		}
		if observe != nil {
			observe(id, e)
		}
	}
	cfg.OnEnd = func(e messages.CallEnded) {
		s.ended(e)
		if keep != nil {
			keep.End(e)
		}
	}
	props, err := session.Props(cfg)
	if err != nil {
		return err
	}
	res, err := s.sys.Root.RequestFuture(s.board, &switchboard.StartCall{Call: id, Props: props}, s.cfg.StartTimeout).Result()
	if err != nil {
		return fmt.Errorf("serve: switchboard: %w", err)
	}
	if st, ok := res.(*switchboard.CallStarted); !ok || st.Err != nil {
		if ok {
			return st.Err
		}
		return fmt.Errorf("serve: switchboard answered %T", res)
	}
	started = true
	return nil
}

// ended is a session's OnEnd: it only records and signals.
func (s *Server) ended(e messages.CallEnded) {
	s.mu.Lock()
	var c Conn
	if info := s.live[e.Call]; info != nil {
		c = info.conn
		s.recent.add(e.Call, e.Reason)
	}
	delete(s.live, e.Call)
	s.stats.Inc("ended")
	s.notifyLocked()
	s.armIdleLocked()
	s.mu.Unlock()
	s.metrics.callEnded(e)
	if c != nil {
		kind := conn.EndNormal
		if s.isDraining() {
			kind = conn.EndGoingAway
		}
		c.Hangup(kind, e.Reason)
	}
	if s.cfg.ObserveEnd != nil {
		s.cfg.ObserveEnd(e)
	}
	ev := s.log.Info().Str("call_id", string(e.Call)).Str("reason", e.Reason)
	if e.Err != nil {
		ev = s.log.Warn().Err(e.Err).Str("call_id", string(e.Call)).Str("reason", e.Reason)
	}
	ev.Msg("call ended")
}

// armIdleLocked starts (or restarts) the idle timer when no call is live
// or admitted: a burst that ends frees memory once, IdleFree after its
// last call.
func (s *Server) armIdleLocked() {
	if s.cfg.IdleFree < 0 || len(s.live) > 0 || s.reserved > 0 {
		return
	}
	if s.idle == nil {
		s.idle = time.AfterFunc(s.cfg.IdleFree, s.freeIfIdle)
		return
	}
	s.idle.Reset(s.cfg.IdleFree)
}

// freeIfIdle is the idle timer's: a call that came meanwhile keeps the
// memory.
func (s *Server) freeIfIdle() {
	s.mu.Lock()
	idle := len(s.live) == 0 && s.reserved == 0
	if idle {
		s.stats.Inc("memory_returned")
	}
	s.mu.Unlock()
	if idle {
		debug.FreeOSMemory()
	}
}

func (s *Server) isDraining() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.draining
}

// count adds one to a counter.
func (s *Server) count(name string) {
	s.mu.Lock()
	s.stats.Inc(name)
	s.mu.Unlock()
}

func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// EndCall asks a call to end once its current answer has played (the
// end_call tool).
func (s *Server) EndCall(call, _ string) error {
	id := messages.CallID(call)
	s.mu.Lock()
	_, ok := s.live[id]
	s.mu.Unlock()
	if !ok {
		return fmt.Errorf("%w: %s", ErrUnknownCall, call)
	}
	s.sys.Root.Send(s.board, &switchboard.ToCall{Call: id, Msg: &messages.EndCall{AfterPlayout: true}})
	return nil
}

// Live returns the ids of the live calls, sorted.
func (s *Server) Live() []messages.CallID {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]messages.CallID, 0, len(s.live))
	for id := range s.live {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Serve serves on ln until ctx ends, then shuts down gracefully: it stops
// admitting calls (readyz turns 503), waits up to DrainTimeout for live
// calls to end, speaks ClosingLine to the rest and hangs them up after
// ClosingTimeout, and stops the HTTP server and the actor system. It
// returns when every goroutine it started has ended.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: s.mux, ReadHeaderTimeout: 10 * time.Second}
	if sm := s.startMeter(); sm != nil {
		defer sm.Stop()
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc:
	}
	s.drain()
	close(s.quit)
	s.mu.Lock()
	closers := s.closers
	s.mu.Unlock()
	for _, c := range closers {
		c()
	}
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil {
		_ = srv.Close()
	}
	if serveErr == nil {
		if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
			serveErr = err
		}
	}
	s.wg.Wait()
	s.mu.Lock()
	if s.idle != nil {
		s.idle.Stop()
	}
	s.mu.Unlock()
	_ = s.sys.Root.StopFuture(s.board).Wait()
	s.sys.Shutdown()
	if errors.Is(serveErr, http.ErrServerClosed) {
		serveErr = nil
	}
	return serveErr
}

// Force cuts a shutdown's drain short (a second Ctrl-C or SIGTERM): the
// first call speaks the closing line to the live calls at once, instead
// of waiting for DrainTimeout; a second hangs them up at once, instead of
// waiting for the closing line. Called before the drain, it shortens the
// drain to come. Safe from any goroutine.
func (s *Server) Force() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.forced < len(s.skip) {
		close(s.skip[s.forced])
		s.forced++
	}
}

// drain ends the calls for a shutdown.
func (s *Server) drain() {
	s.mu.Lock()
	s.draining = true
	s.shutdown = &drainInfo{By: "shutdown", Started: time.Now().UTC(), LiveAtStart: len(s.live)}
	s.notifyLocked()
	s.mu.Unlock()
	s.log.Info().Int("live_calls", len(s.Live())).Dur("deadline", s.cfg.DrainTimeout).Msg("shutting down: not admitting calls")
	if s.waitCalls(s.cfg.DrainTimeout, s.skip[0]) {
		return
	}
	for _, id := range s.Live() {
		s.count("closed_at_shutdown")
		s.sys.Root.Send(s.board, &switchboard.ToCall{Call: id, Msg: &messages.EndCall{Line: s.cfg.ClosingLine}})
	}
	if s.waitCalls(s.cfg.ClosingTimeout, s.skip[1]) {
		return
	}
	for _, id := range s.Live() {
		s.count("hung_up_at_shutdown")
		s.sys.Root.Send(s.board, &switchboard.ToCall{Call: id, Msg: &messages.Hangup{Reason: "server shutdown"}})
	}
	s.waitCalls(s.cfg.ClosingTimeout, nil)
}

// waitCalls waits until no call is live (true), or d passed or skip was
// closed (false).
func (s *Server) waitCalls(d time.Duration, skip <-chan struct{}) bool {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		n, ch := len(s.live), s.changed
		s.mu.Unlock()
		if n == 0 {
			return true
		}
		select {
		case <-ch:
		case <-deadline.C:
			return false
		case <-skip:
			return false
		}
	}
}

// AddReadiness shows what detail returns under name in /readyz's
// "details" (a transport's registrations with its carriers): facts for
// the operator, not the readiness itself, which stays the node's
// admission. detail is called at each probe and must not block.
func (s *Server) AddReadiness(name string, detail func() any) {
	s.mu.Lock()
	s.readiness[name] = detail
	s.mu.Unlock()
}

func (s *Server) readyz(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	refusal, live := s.drainRefusalLocked(), len(s.live)
	draining := refusal != nil
	details := make(map[string]func() any, len(s.readiness))
	maps.Copy(details, s.readiness)
	s.mu.Unlock()
	body := map[string]any{"ready": !draining, "live_calls": live, "max_calls": s.cfg.MaxCalls}
	if len(details) > 0 {
		out := make(map[string]any, len(details))
		for name, f := range details {
			out[name] = f()
		}
		body["details"] = out
	}
	if m := s.cfg.Meter; m != nil {
		e := m.Estimate()
		body["admission"] = admissionBody{Estimate: e, Load: e.Load(live)}
	}
	if draining {
		body["reason"] = refusal.Detail
		writeJSON(w, http.StatusServiceUnavailable, body)
		return
	}
	writeJSON(w, http.StatusOK, body)
}

func (s *Server) statsz(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	out := map[string]any{"server": s.stats.Snapshot(), "live_calls": len(s.live)}
	sources := make(map[string]func() map[string]uint64, len(s.sources))
	for k, v := range s.sources {
		sources[k] = v
	}
	s.mu.Unlock()
	for k, f := range sources {
		out[k] = f()
	}
	writeJSON(w, http.StatusOK, out)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
