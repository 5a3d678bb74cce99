package sim

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/actors/kit"
	"github.com/brisvox/brisvox/actors/llm"
	"github.com/brisvox/brisvox/actors/session"
	"github.com/brisvox/brisvox/actors/switchboard"
	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/rs/zerolog"
)

// ErrCallFailed marks a simulated call that did not run to its end.
var ErrCallFailed = errors.New("sim: call failed")

// Call is one simulated call: a scripted caller, the mock providers and
// the production actor tree between them.
type Call struct {
	Scenario *Scenario
	// Linger is how long the call goes on after the script ends, before
	// the caller hangs up (the bot's last answer plays out).
	Linger time.Duration
	STT    *providertest.MockSTT
	LLM    *providertest.MockLLM
	TTS    *providertest.MockTTS
	// Provider, when set, is the call's LLM instead of LLM: a real adapter
	// talking to its vendor-format mock (the tool suite over each
	// adapter). Cleanup, when set, runs once the call has ended (it closes
	// the adapter and its mock, so nothing outlives a synctest bubble).
	Provider providers.LLM
	Cleanup  func()
	Tools    *agent.Registry
	// Configure adjusts the session config (turn, pacer, llm, supervision)
	// before the call starts.
	Configure func(*session.Config)
	Loopback  LoopbackConfig
	// WrapConn, when set, puts something between the engine and the
	// loopback client (a broken transport, for the suite's own tests).
	WrapConn func(*Loopback) conn.Conn
	// During runs inside the call at the given offsets (operator actions).
	During []Action
	Log    zerolog.Logger
}

// Action is something done to a live call at an offset from its start.
type Action struct {
	At time.Duration
	Do func(h *Handle)
}

// Handle reaches a live call (for Actions).
type Handle struct {
	System *kit.System
	Board  *actor.PID
	Call   messages.CallID
	Conn   *Loopback
}

// Request sends msg to the call's session through the switchboard and
// waits for the answer.
func (h *Handle) Request(msg any) (any, error) {
	return h.System.Root.RequestFuture(h.Board, &switchboard.ToCall{Call: h.Call, Msg: msg}, 5*time.Second).Result()
}

// Result is what a simulated call produced.
type Result struct {
	Start     time.Time
	Records   []Record
	Dropped   int
	Context   *agent.Context
	Timelines []session.Timeline
	Stats     *session.Stats
	Tree      *messages.Description
	Words     map[messages.Epoch][]providertest.Word
	Ended     messages.CallEnded
	// PlayoutDelay is the client's (LoopbackConfig.PlayoutDelay): a frame
	// plays that long after its record's At.
	PlayoutDelay time.Duration
	Spoken       []string // text pieces the TTS received
	// FramesIn is how many caller frames the client had sent at the probe.
	FramesIn                 int
	STTConnects, TTSConnects int
	DeadLetters              uint64
	// LayoutErr says where the tts stage's audio of an epoch with filler
	// clips was out of order (clips.go); nil without clips.
	LayoutErr error
}

// Run plays the call to its end and collects the result. Inside a
// testing/synctest bubble it runs in virtual time; every goroutine of the
// call has ended when it returns (the bubble checks).
func (c *Call) Run() (*Result, error) {
	rs, errs := RunTogether(c)
	return rs[0], errs[0]
}

// RunTogether plays several calls at once on one actor system and one
// switchboard, as a node holds them, and returns each call's result and
// error (by index). Calls are told apart by their scenario names and their
// index, so two calls may share a script.
func RunTogether(calls ...*Call) ([]*Result, []error) {
	results, errs := make([]*Result, len(calls)), make([]error, len(calls))
	for i, c := range calls {
		if err := c.Scenario.Validate(); err != nil {
			errs[i] = err
		}
	}
	if errors.Join(errs...) != nil {
		return results, errs
	}
	sys := kit.NewSystem(calls[0].Log, kit.WithWorkers(0))
	board, err := sys.Root.SpawnNamed(switchboard.Props(), "switchboard")
	if err == nil {
		var wg sync.WaitGroup
		for i, c := range calls {
			id := "sim-" + messages.CallID(c.Scenario.Name)
			if len(calls) > 1 {
				id += messages.CallID("-" + strconv.Itoa(i))
			}
			wg.Go(func() { results[i], errs[i] = c.run(sys, board, id) })
		}
		wg.Wait()
		// Stop the switchboard and wait for it.
		err = sys.Root.StopFuture(board).Wait()
	}
	// Shutdown stops the workers and waits out protoactor's dead-letter
	// throttle, so no goroutine of the system outlives the calls.
	sys.Shutdown()
	if err != nil {
		for i := range errs {
			errs[i] = errors.Join(errs[i], fmt.Errorf("%w: switchboard: %w", ErrCallFailed, err))
		}
	}
	for _, r := range results {
		if r != nil {
			r.DeadLetters = sys.DeadLetters()
		}
	}
	return results, errs
}

// run plays one call on a shared system.
func (c *Call) run(sys *kit.System, board *actor.PID, id messages.CallID) (*Result, error) {
	start := time.Now()
	lb := NewLoopback(c.Loopback, c.Scenario, start)
	endedCh := make(chan messages.CallEnded, 1)
	var engineConn conn.Conn = lb
	if c.WrapConn != nil {
		engineConn = c.WrapConn(lb)
	}
	cfg := session.Config{
		Call: id, Conn: engineConn,
		STT: c.STT, LLM: c.LLM, TTS: c.TTS, Tools: c.Tools, Log: c.Log,
		OnEnd: func(e messages.CallEnded) { endedCh <- e },
	}
	if c.Provider != nil {
		cfg.LLM = c.Provider
	}
	if c.Cleanup != nil {
		defer c.Cleanup()
	}
	if c.Configure != nil {
		c.Configure(&cfg)
	}
	var clips *clipTap
	if cfg.FillerClips != nil {
		if cfg.Taps[messages.StagePacer] != nil {
			return nil, fmt.Errorf("%w: filler clips and a pacer tap together", ErrCallFailed)
		}
		clips = newClipTap(cfg.FillerClips, c.TTS)
		taps := map[messages.Stage]actor.ReceiverMiddleware{messages.StagePacer: clips.middleware}
		for k, v := range cfg.Taps {
			taps[k] = v
		}
		cfg.Taps = taps
	}
	sprops, err := session.Props(cfg)
	if err != nil {
		return nil, err
	}
	res, err := sys.Root.RequestFuture(board, &switchboard.StartCall{Call: cfg.Call, Props: sprops}, 5*time.Second).Result()
	if err != nil {
		return nil, fmt.Errorf("%w: start: %w", ErrCallFailed, err)
	}
	started := res.(*switchboard.CallStarted)
	if started.Err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCallFailed, started.Err)
	}
	h := &Handle{System: sys, Board: board, Call: cfg.Call, Conn: lb}
	out := &Result{Start: start, PlayoutDelay: c.Loopback.PlayoutDelay}
	// wait sleeps until t; false when the call ended first (a stage gave
	// up): then it is not there to probe.
	ended := false
	wait := func(t time.Time) bool {
		timer := time.NewTimer(time.Until(t))
		defer timer.Stop()
		select {
		case <-timer.C:
			return true
		case out.Ended = <-endedCh:
			ended = true
			return false
		}
	}
	for _, a := range c.During {
		if !wait(start.Add(a.At)) {
			break
		}
		a.Do(h)
	}
	// Probe half a frame off the input grid: a probe at the instant a frame
	// is due would race it and make the counters differ between runs.
	if !ended && wait(start.Add(c.Scenario.Duration()+c.Linger+messages.FrameDuration/2)) {
		probe := func(pid *actor.PID, msg any) (any, error) {
			return sys.Root.RequestFuture(pid, msg, 5*time.Second).Result()
		}
		llmPID := kit.NewPeers(cfg.Call, started.PID).LLM
		if v, err := probe(llmPID, &llm.GetContext{}); err == nil {
			out.Context, _ = v.(*agent.Context)
		}
		if v, err := probe(started.PID, &session.GetTimelines{}); err == nil {
			out.Timelines, _ = v.([]session.Timeline)
		}
		if v, err := probe(started.PID, &session.GetStats{}); err == nil {
			out.Stats, _ = v.(*session.Stats)
		}
		out.FramesIn = lb.FramesDelivered()
		if v, err := probe(started.PID, &messages.Describe{}); err == nil {
			out.Tree, _ = v.(*messages.Description)
		}
		lb.HangUp()
		select {
		case out.Ended = <-endedCh:
		case <-time.After(30 * time.Second):
			return nil, fmt.Errorf("%w: the call did not end after the hang-up", ErrCallFailed)
		}
	}
	out.Records, out.Dropped = lb.Records()
	out.Words = c.TTS.WordLog()
	if clips != nil {
		out.Words, out.LayoutErr = clips.words(c.TTS.ContextWords(), out.Words)
	}
	out.Spoken = c.TTS.Texts()
	out.STTConnects, out.TTSConnects = c.STT.Connects(), c.TTS.Connects()
	if ended {
		return out, fmt.Errorf("%w: the call ended before its script did (%s): %v", ErrCallFailed, out.Ended.Reason, out.Ended.Err)
	}
	if out.Context == nil {
		return out, fmt.Errorf("%w: no context could be read", ErrCallFailed)
	}
	return out, nil
}
