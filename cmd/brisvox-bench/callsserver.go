package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/brisvox/brisvox/actors/pacer"
	"github.com/brisvox/brisvox/actors/session"
	"github.com/brisvox/brisvox/actors/vad"
	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/cmd/internal/agentbuild"
	"github.com/brisvox/brisvox/cmd/internal/serve"
	"github.com/brisvox/brisvox/media/carrier/pcmws"
	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers/providertest"
)

// The server's side of `brisvox-bench calls`: the agent that gives each
// call the mocks of its caller's script, and the observer of every
// call's live events (the turn timelines the bench joins with what the
// callers measured).

// errNoCaller is a call whose URL names no caller of the run.
var errNoCaller = errors.New("calls: the call's URL names no caller (?caller=N)")

// serverTurn is a user turn as the server saw it.
type serverTurn struct {
	epoch messages.Epoch
	// heard: the transcript was the script's utterance of its turn.
	heard bool
}

// serverCall is what the observer keeps of one call.
type serverCall struct {
	caller int
	script callScript
	texts  []string // the utterances, for the transcript check

	mu    sync.Mutex
	turns []serverTurn
	// ordinal is each user turn's index in turns, by epoch.
	ordinal map[messages.Epoch]int
	// marks are the timelines of the latency events, by epoch.
	marks map[messages.Epoch]map[messages.MarkKind]time.Time
	// toolRuns counts the runs of each tool call (its id).
	toolRuns map[string]int
	ended    string
}

// callsObserver keeps every call's record, by call and by caller.
type callsObserver struct {
	mu       sync.Mutex
	calls    map[messages.CallID]*serverCall
	byCaller map[int]*serverCall
	ended    int
	// early counts the ends before hangups (zero: none yet) by reason:
	// calls the server ended on its own.
	hangups time.Time
	early   map[string]int
	// forget drops a call's record at its end (the soak: records would
	// grow with the churn).
	forget bool
}

func newCallsObserver() *callsObserver {
	return &callsObserver{calls: map[messages.CallID]*serverCall{}, byCaller: map[int]*serverCall{}}
}

func (o *callsObserver) call(id messages.CallID) *serverCall {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.calls[id]
}

// observe is serve.Config.Observe: it records and returns.
func (o *callsObserver) observe(id messages.CallID, e messages.CallEvent) {
	c := o.call(id)
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch e.Kind {
	case messages.EventUserTurn:
		k := len(c.turns)
		c.ordinal[e.Epoch] = k
		c.turns = append(c.turns, serverTurn{epoch: e.Epoch, heard: k < len(c.texts) && e.Text == c.texts[k]})
	case messages.EventLatency:
		if e.Marks != nil {
			c.marks[e.Epoch] = e.Marks // a copy, ours to keep
		}
	}
}

// observeEnd is serve.Config.ObserveEnd.
func (o *callsObserver) observeEnd(e messages.CallEnded) {
	c := o.call(e.Call)
	o.mu.Lock()
	o.ended++
	// The callers hang up only at the end: a hang-up is never early (the
	// "hangup" line may be read after the first of them ended).
	if o.hangups.IsZero() && e.Reason != conn.ReasonHangup {
		if o.early == nil {
			o.early = map[string]int{}
		}
		o.early[e.Reason]++
	}
	if o.forget && c != nil {
		delete(o.calls, e.Call)
		delete(o.byCaller, c.caller)
	}
	o.mu.Unlock()
	if c == nil {
		return
	}
	c.mu.Lock()
	c.ended = e.Reason
	c.mu.Unlock()
}

// callsAgent gives each call its caller's script: the mock STT hears the
// caller's utterances, the mock LLM answers with the script's answers
// and tool calls at its first-token times, the mock TTS speaks in real
// time after its first byte.
type callsAgent struct {
	seed  uint64
	turns int
	fx    callFixture
	// vad is every call's model VAD (Silero); nil: the energy VAD.
	vad *vad.Model
	// rate is the mock TTS's rate (0: its default, 16 kHz): the SIP
	// calls' stages speak at 8 kHz.
	rate  int
	obs   *callsObserver
	tools *agent.Registry
}

func newCallsAgent(seed uint64, turns int, fx callFixture, model *vad.Model, obs *callsObserver) (*callsAgent, error) {
	a := &callsAgent{seed: seed, turns: turns, fx: fx, vad: model, obs: obs}
	tool := func(name string, effect agent.Effect) agent.Tool {
		spec := agent.NewSpec(name, "A scripted "+name+".", effect)
		spec.Parameters = json.RawMessage(`{"type":"object","properties":{"turn":{"type":"integer"}},"required":["turn"]}`)
		spec.FillerAfter = -1 // no filler phrase on the measured path
		return agent.NewFuncTool(spec, func(ctx context.Context, args json.RawMessage, info agent.CallInfo) (agent.Output, error) {
			return a.runTool(ctx, args, info)
		})
	}
	reg, err := agent.NewRegistry(tool("lookup_order", agent.ReadOnly), tool("book_slot", agent.SideEffect))
	if err != nil {
		return nil, err
	}
	a.tools = reg
	return a, nil
}

// runTool takes the turn's scripted time and counts the run.
func (a *callsAgent) runTool(ctx context.Context, args json.RawMessage, info agent.CallInfo) (agent.Output, error) {
	var in struct{ Turn int }
	if err := json.Unmarshal(args, &in); err != nil {
		return agent.Output{}, err
	}
	c := a.obs.call(messages.CallID(info.Session))
	if c == nil || in.Turn < 0 || in.Turn >= len(c.script.Turns) {
		return agent.Output{}, fmt.Errorf("calls: no scripted turn %d for this call", in.Turn)
	}
	c.mu.Lock()
	c.toolRuns[info.CallID]++
	c.mu.Unlock()
	select {
	case <-time.After(c.script.Turns[in.Turn].ToolDur):
	case <-ctx.Done():
		return agent.Output{}, ctx.Err()
	}
	return agent.Output{Content: `{"status":"ok"}`, Summary: "done"}, nil
}

func (*callsAgent) Name() string { return "calls" }

func (a *callsAgent) Session(env serve.CallEnv) (session.Config, error) {
	var i int
	if pc, ok := env.Conn.(*pcmws.Call); ok {
		v, err := strconv.Atoi(pc.Query().Get("caller"))
		if err != nil || v < 0 {
			return session.Config{}, errNoCaller
		}
		i = v
	} else {
		v, err := sipCallOf(env.Conn) // callssip.go: the caller's own source address
		if err != nil {
			return session.Config{}, err
		}
		i = v
	}
	script := newCallScript(a.seed, i, len(a.fx.Texts), a.turns)
	utts := script.utterances(a.fx)
	sc := &serverCall{caller: i, script: script, texts: utts, ordinal: map[messages.Epoch]int{},
		marks: map[messages.Epoch]map[messages.MarkKind]time.Time{}, toolRuns: map[string]int{}}
	a.obs.mu.Lock()
	a.obs.calls[env.ID], a.obs.byCaller[i] = sc, sc
	a.obs.mu.Unlock()
	return session.Config{
		STT: providertest.NewMockSTT(providertest.STTConfig{FinalLatency: script.STTFinal}, utts),
		LLM: providertest.NewMockLLM(providertest.LLMConfig{TokenInterval: script.TokenGap, Unrecorded: true}, script.responses()...),
		// Real-time audio 200 ms ahead, as a streaming synthesizer sends.
		TTS: providertest.NewMockTTS(providertest.TTSConfig{Rate: a.rate, FirstByte: script.TTSFirst, Paced: true, Chunk: 100 * time.Millisecond,
			PacedLead: 200 * time.Millisecond, Unrecorded: true}),
		Tools: a.tools,
		// The production tree's settings for the call's transport
		// (agentbuild): a mark every 100 ms of audio for a client that
		// echoes them (the PCM websocket's), the lead margin and the
		// start lead for an output that prebuffers (SIP's).
		Pacer:    agentbuild.PacerFor(env.Conn, pacer.Config{}),
		VADModel: a.vad,
	}, nil
}

// stampListener notes when each connection's second read with data came
// (the first is the HTTP request; the client sends audio only after the
// upgrade's answer): the arrival of the call's frame 0, which the PCM
// websocket's inbox takes for the end of frame 0's capture (its t0 is
// that time less 20 ms). By the peer's port.
type stampListener struct {
	net.Listener
	mu     sync.Mutex
	second map[int]time.Time
}

func newStampListener(ln net.Listener) *stampListener {
	return &stampListener{Listener: ln, second: map[int]time.Time{}}
}

func (l *stampListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	port := 0
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		port = a.Port
	}
	return &stampConn{Conn: c, l: l, port: port}, nil
}

// frame0 is the arrival of the caller at port's frame 0.
func (l *stampListener) frame0(port int) (time.Time, bool) {
	if l == nil {
		return time.Time{}, false // SIP: the SIP server reads the RTP
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	t, ok := l.second[port]
	return t, ok
}

type stampConn struct {
	net.Conn
	l     *stampListener
	port  int
	reads int
}

func (c *stampConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 && c.reads < 2 {
		c.reads++
		if c.reads == 2 {
			now := time.Now()
			c.l.mu.Lock()
			c.l.second[c.port] = now
			c.l.mu.Unlock()
		}
	}
	return n, err
}

// callsServer is serve with the PCM websocket at /pcm on a loopback
// listener (ln, stamping the bot's frames when the caller wants it).
type callsServer struct {
	srv    *serve.Server
	ln     net.Listener
	addr   string
	cancel context.CancelFunc
	served chan error
	once   sync.Once
	// sipStats are the SIP server's counters (nil: the PCM websocket).
	sipStats func() map[string]uint64
}

// startCallsServer serves agent under cfg on 127.0.0.1; wrap, when set,
// wraps the listener (the run's stamping one).
func startCallsServer(cfg serve.Config, agent serve.Agent, wrap func(net.Listener) net.Listener) (*callsServer, error) {
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	var ln net.Listener = tcp
	if wrap != nil {
		ln = wrap(tcp)
	}
	srv, err := serve.New(cfg, agent)
	if err != nil {
		_ = ln.Close()
		return nil, err
	}
	h, err := pcmws.New(pcmws.Config{OnCall: func(c *pcmws.Call) { srv.Start(c) }, Admit: srv.Admit})
	if err != nil {
		_ = ln.Close()
		return nil, err
	}
	srv.Handle("/pcm", h, "pcm", h.Stats, h.Close)
	ctx, cancel := context.WithCancel(context.Background())
	s := &callsServer{srv: srv, ln: ln, addr: tcp.Addr().String(), cancel: cancel, served: make(chan error, 1)}
	go func() { s.served <- srv.Serve(ctx, ln) }()
	return s, nil
}

// windDown waits up to 30 s for the live calls to end (every call ends
// with its hang-up), stops the server and waits, within the same 30 s,
// for the process's goroutines to be back to base: the calls still live
// and the goroutines left over.
func (s *callsServer) windDown(base int) (live, left int) {
	deadline := time.Now().Add(30 * time.Second)
	for len(s.srv.Live()) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	live = len(s.srv.Live())
	s.stop()
	for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	return live, max(0, runtime.NumGoroutine()-base)
}

// stop ends the server and waits for Serve to return; again: nothing.
func (s *callsServer) stop() {
	s.once.Do(func() {
		s.cancel()
		<-s.served
	})
}
