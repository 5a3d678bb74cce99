package chaostest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/actors/pacer"
	"github.com/brisvox/brisvox/actors/session"
	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/cmd/internal/agentbuild"
	"github.com/brisvox/brisvox/cmd/internal/serve"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/providertest"
)

// bookTool is the SideEffect tool of the booking calls.
const bookTool = "book_table"

// callState is a call's server side: its mock providers and taps, and
// what the server reported of it. The caller registers it before it
// dials; the agent finds it by the URL's "call" parameter.
type callState struct {
	plan    *plan
	stt     *providertest.MockSTT
	llm     *llmLog
	tts     *providertest.MockTTS
	tools   *agent.Registry
	stamps  *stamper
	clears  *clearLog
	runs    *toolRuns
	started time.Time // when the caller began streaming (the script's zero)

	mu     sync.Mutex
	id     messages.CallID
	events []messages.CallEvent
	ended  chan messages.CallEnded // one value, from ObserveEnd
}

func newCallState(p *plan) (*callState, error) {
	st := &callState{
		plan:   p,
		stt:    providertest.NewMockSTT(providertest.STTConfig{FinalLatency: p.sttFinal}, p.script.utterances()),
		llm:    &llmLog{MockLLM: providertest.NewMockLLM(providertest.LLMConfig{FirstToken: p.llmFirst}, p.answers...)},
		tts:    providertest.NewMockTTS(providertest.TTSConfig{FirstByte: p.ttsFirst, Paced: true}),
		stamps: &stamper{frame: rate / 50},
		clears: &clearLog{},
		runs:   &toolRuns{},
		ended:  make(chan messages.CallEnded, 1),
	}
	for _, f := range p.sttFaults {
		st.stt.Inject(f)
	}
	for _, f := range p.llmFaults {
		st.llm.MockLLM.Inject(f)
	}
	for _, f := range p.ttsFaults {
		st.tts.Inject(f)
	}
	spec := agent.NewSpec(bookTool, "Books a table.", agent.SideEffect)
	spec.Parameters = json.RawMessage(`{"type":"object","properties":{"day":{"type":"string"},"people":{"type":"integer"}},"required":["day","people"]}`)
	reg, err := agent.NewRegistry(agent.NewFuncTool(spec, st.runs.book))
	if err != nil {
		return nil, err
	}
	st.tools = reg
	return st, nil
}

// sessionConfig is the call's session: the production tree with the
// mocks, the energy VAD, the pacer's playback confirmations as serve's
// agents set them for a carrier that echoes marks, and the taps.
func (st *callState) sessionConfig() session.Config {
	p := st.plan
	taps := map[messages.Stage]actor.ReceiverMiddleware{
		messages.StagePacer:     st.stamps.middleware,
		messages.StageTransport: st.clears.middleware,
	}
	switch p.panicStage {
	case messages.StageVAD:
		t := &panicTap{n: p.panicN, match: func(m any) bool { _, ok := m.(*messages.AudioFrame); return ok }}
		taps[messages.StageVAD] = chain(t.middleware, taps[messages.StageVAD])
	case messages.StageTTS:
		t := &panicTap{n: p.panicN, match: func(m any) bool { _, ok := m.(*messages.TextDelta); return ok }}
		taps[messages.StageTTS] = chain(t.middleware, taps[messages.StageTTS])
	}
	return session.Config{
		STT: st.stt, LLM: st.llm, TTS: st.tts, Tools: st.tools,
		Pacer:       pacer.Config{ConfirmEvery: agentbuild.ConfirmEvery},
		Supervision: session.Supervision{Seed: uint64(p.index) + 1},
		Taps:        taps,
	}
}

func (st *callState) event(e messages.CallEvent) {
	st.mu.Lock()
	st.events = append(st.events, e)
	st.mu.Unlock()
}

// llmLog is the call's model: the mock LLM, with the time of each request
// (a tool's result must reach every request made after it finished).
type llmLog struct {
	*providertest.MockLLM
	mu    sync.Mutex
	times []time.Time
}

var _ providers.LLM = (*llmLog)(nil)

func (l *llmLog) Stream(ctx context.Context, req *providers.Request) (providers.LLMStream, error) {
	l.mu.Lock()
	l.times = append(l.times, time.Now())
	l.mu.Unlock()
	return l.MockLLM.Stream(ctx, req)
}

// requests pairs the mock's recorded requests with their times.
func (l *llmLog) requests() []request {
	rs := l.MockLLM.Requests()
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]request, len(rs))
	for i, r := range rs {
		out[i] = request{Messages: r.Messages}
		if i < len(l.times) {
			out[i].At = l.times[i]
		}
	}
	return out
}

// toolRuns records every execution of the booking tool.
type toolRuns struct {
	mu   sync.Mutex
	runs []toolRun
}

func (t *toolRuns) book(ctx context.Context, args json.RawMessage, info agent.CallInfo) (agent.Output, error) {
	select {
	case <-time.After(400 * msec):
	case <-ctx.Done():
		return agent.Output{}, ctx.Err()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	ref := fmt.Sprintf("BK-%04d", 1001+len(t.runs))
	t.runs = append(t.runs, toolRun{Name: bookTool, Args: string(args), CallID: info.CallID, Key: keyOf(info.IdempotencyKey), Result: ref, Done: time.Now()})
	return agent.Output{Content: fmt.Sprintf(`{"booking":%q}`, ref), Summary: "reference " + ref}, nil
}

func (t *toolRuns) list() []toolRun {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]toolRun(nil), t.runs...)
}

// chaosAgent is the server's agent: each call's session from its plan.
type chaosAgent struct {
	mu      sync.Mutex
	pending map[string]*callState // registered by the callers, by name
	byID    map[messages.CallID]*callState
	// live counts the calls between their session's start and end; max
	// is its peak.
	live, max int
}

var _ serve.Agent = (*chaosAgent)(nil)

func newChaosAgent() *chaosAgent {
	return &chaosAgent{pending: map[string]*callState{}, byID: map[messages.CallID]*callState{}}
}

func (a *chaosAgent) Name() string { return "chaos" }

// register makes st the call the next websocket naming it gets.
func (a *chaosAgent) register(st *callState) {
	a.mu.Lock()
	a.pending[st.plan.name] = st
	a.mu.Unlock()
}

// forget drops a call's state from the agent (after its end, or when its
// caller gave up).
func (a *chaosAgent) forget(st *callState) {
	a.mu.Lock()
	delete(a.pending, st.plan.name)
	st.mu.Lock()
	id := st.id
	st.mu.Unlock()
	if id != "" {
		delete(a.byID, id)
	}
	a.mu.Unlock()
}

func (a *chaosAgent) Session(env serve.CallEnv) (session.Config, error) {
	q, ok := env.Conn.(interface{ Query() url.Values })
	if !ok {
		return session.Config{}, fmt.Errorf("%w: call %s has no query", ErrRun, env.ID)
	}
	name := q.Query().Get("call")
	a.mu.Lock()
	st := a.pending[name]
	delete(a.pending, name)
	if st != nil {
		a.byID[env.ID] = st
		a.live++
		a.max = max(a.max, a.live)
	}
	a.mu.Unlock()
	if st == nil {
		return session.Config{}, fmt.Errorf("%w: no call named %q", ErrRun, name)
	}
	st.mu.Lock()
	st.id = env.ID
	st.mu.Unlock()
	return st.sessionConfig(), nil
}

func (a *chaosAgent) lookup(id messages.CallID) *callState {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.byID[id]
}

// observe is serve.Config.Observe: it only hands the event on.
func (a *chaosAgent) observe(id messages.CallID, e messages.CallEvent) {
	if st := a.lookup(id); st != nil {
		st.event(e)
	}
}

// observeEnd is serve.Config.ObserveEnd.
func (a *chaosAgent) observeEnd(e messages.CallEnded) {
	if st := a.lookup(e.Call); st != nil {
		a.mu.Lock()
		a.live--
		a.mu.Unlock()
		select {
		case st.ended <- e:
		default:
		}
	}
}

// peak is the most calls that were live at once.
func (a *chaosAgent) peak() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.max
}

// keyOf is an idempotency key as text ("" for none: a ReadOnly call).
func keyOf(k agent.IdempotencyKey) string {
	if k == (agent.IdempotencyKey{}) {
		return ""
	}
	return k.String()
}
