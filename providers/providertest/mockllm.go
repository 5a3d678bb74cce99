package providertest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/providers"
)

// LLMConfig sets the mock LLM's latencies. Zero values take the defaults.
type LLMConfig struct {
	// ConnectLatency is how long Stream takes to return (default 0).
	ConnectLatency time.Duration
	// FirstToken is the time from Stream's return to the first event
	// (default 300ms).
	FirstToken time.Duration
	// TokenInterval is the time between later events (default 30ms).
	TokenInterval time.Duration
	// Unrecorded keeps no copy of the requests (Requests is empty): for
	// load runs, where each request holds the whole conversation so far.
	Unrecorded bool
}

// withDefaults fills the zero fields.
func (c LLMConfig) withDefaults() LLMConfig {
	if c.FirstToken == 0 {
		c.FirstToken = 300 * time.Millisecond
	}
	if c.TokenInterval == 0 {
		c.TokenInterval = 30 * time.Millisecond
	}
	return c
}

// Validate rejects negative durations.
func (c LLMConfig) Validate() error {
	if c.ConnectLatency < 0 || c.FirstToken < 0 || c.TokenInterval < 0 {
		return fmt.Errorf("%w: llm %+v", ErrInvalidConfig, c)
	}
	return nil
}

// ScriptedCall is a tool call of a scripted response. Args is JSON text.
type ScriptedCall struct {
	ID, Name string
	Args     string
}

// Response is one scripted answer of the mock LLM.
type Response struct {
	// Text is streamed word by word, each word with the whitespace after
	// it, so the deltas joined are Text exactly.
	Text string
	// Calls follow the text: per call a first fragment with ID and Name,
	// its arguments split into at most two fragments.
	Calls []ScriptedCall
	// StopReason rides on the Done event (providers.StopLength: the token
	// limit cut the answer).
	StopReason string
	// Err, when set, is what Recv returns at the time of the first event:
	// the response fails instead of answering.
	Err error
	// FirstToken overrides the config's FirstToken for this response when
	// positive.
	FirstToken time.Duration
	// Interleave sends the calls' fragments interleaved (the first
	// fragment of every call, then the second ones), as some providers do
	// for parallel calls; by default each call's fragments come together.
	Interleave bool
}

// events is the response as a stream, Done included.
func (r Response) events() []providers.LLMEvent {
	var evs []providers.LLMEvent
	for _, d := range textDeltas(r.Text) {
		evs = append(evs, providers.LLMEvent{Kind: providers.LLMText, Text: d})
	}
	var seconds []providers.LLMEvent
	for i, call := range r.Calls {
		first, second := splitArgs(call.Args)
		evs = append(evs, providers.LLMEvent{Kind: providers.LLMToolCall, Index: i, ID: call.ID, Name: call.Name, Args: first})
		if second == "" {
			continue
		}
		ev := providers.LLMEvent{Kind: providers.LLMToolCall, Index: i, Args: second}
		if r.Interleave {
			seconds = append(seconds, ev)
		} else {
			evs = append(evs, ev)
		}
	}
	evs = append(evs, seconds...)
	return append(evs, providers.LLMEvent{Kind: providers.LLMDone, StopReason: r.StopReason})
}

// textDeltas cuts text before every word but the first, so each delta is a
// word with the whitespace after it (leading whitespace stays with the first)
// and the deltas joined are text.
func textDeltas(text string) []string {
	var out []string
	start, inWord, hasWord := 0, false, false
	for i, r := range text {
		space := unicode.IsSpace(r)
		if !space && !inWord && hasWord {
			out = append(out, text[start:i])
			start = i
		}
		hasWord = hasWord || !space
		inWord = !space
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}

// splitArgs cuts JSON text in two at a rune boundary near its middle, as a
// streaming model sends arguments in pieces.
func splitArgs(args string) (first, second string) {
	mid := len(args) / 2
	for mid > 0 && !utf8.RuneStart(args[mid]) {
		mid--
	}
	if mid == 0 {
		return args, ""
	}
	return args[:mid], args[mid:]
}

// MockLLM is a scripted chat model: each Stream answers with the next
// Response of its script, on a fixed timetable. Safe for concurrent use.
type MockLLM struct {
	mockBase
	cfg        LLMConfig
	cfgErr     error
	script     []Response
	requests   []providers.Request
	eventsSent int
}

var _ providers.LLM = (*MockLLM)(nil)

// NewMockLLM makes a mock that answers with responses in order. An invalid
// cfg makes every Stream fail with ErrInvalidConfig.
func NewMockLLM(cfg LLMConfig, responses ...Response) *MockLLM {
	return &MockLLM{cfg: cfg.withDefaults(), cfgErr: cfg.Validate(), script: slices.Clone(responses)}
}

// Config is the mock's configuration, defaults filled in.
func (m *MockLLM) Config() LLMConfig { return m.cfg }

// Push appends responses to the script.
func (m *MockLLM) Push(r ...Response) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.script = append(m.script, r...)
}

// Requests returns deep copies of every request received, in order, failed
// Streams included: what the model was shown.
func (m *MockLLM) Requests() []providers.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]providers.Request, len(m.requests))
	for i, r := range m.requests {
		out[i] = copyRequest(&r)
	}
	return out
}

// EventsSent counts the events Recv returned over all streams.
func (m *MockLLM) EventsSent() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.eventsSent
}

// copyRequest copies req down to the bytes, so that neither the caller nor
// a reader of Requests can change what was recorded.
func copyRequest(req *providers.Request) providers.Request {
	var out providers.Request
	if req.Messages != nil {
		out.Messages = make([]agent.Message, len(req.Messages))
		for i, msg := range req.Messages {
			msg.ProviderData = bytes.Clone(msg.ProviderData)
			if msg.ToolCalls != nil {
				calls := slices.Clone(msg.ToolCalls)
				for j := range calls {
					calls[j].Arguments = bytes.Clone(calls[j].Arguments)
				}
				msg.ToolCalls = calls
			}
			out.Messages[i] = msg
		}
	}
	if req.Tools != nil {
		out.Tools = slices.Clone(req.Tools)
		for i := range out.Tools {
			out.Tools[i].Parameters = bytes.Clone(out.Tools[i].Parameters)
		}
	}
	return out
}

// Stream records req, waits ConnectLatency and returns the next scripted
// response as a stream. A rejected or failed Stream does not consume a
// response, so a retry gets it; an empty script fails with
// ErrScriptExhausted.
func (m *MockLLM) Stream(ctx context.Context, req *providers.Request) (providers.LLMStream, error) {
	m.mu.Lock()
	f := m.connectLocked()
	if req != nil && !m.cfg.Unrecorded {
		m.requests = append(m.requests, copyRequest(req))
	}
	cfg, cfgErr := m.cfg, m.cfgErr
	m.mu.Unlock()
	if cfgErr != nil {
		return nil, cfgErr
	}
	if err := connectWait(ctx, cfg.ConnectLatency, f); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.script) == 0 {
		return nil, fmt.Errorf("%w: stream %d", ErrScriptExhausted, m.connects)
	}
	r := m.script[0]
	m.script = m.script[1:]
	first := cfg.FirstToken
	if r.FirstToken > 0 {
		first = r.FirstToken
	}
	st := &llmStream{
		m:        m,
		ctx:      ctx,
		start:    time.Now().Add(first),
		interval: cfg.TokenInterval,
		fault:    sessionFault{f: f},
		closed:   make(chan struct{}),
	}
	if r.Err != nil {
		st.respErr = r.Err
	} else {
		st.events = r.events()
	}
	return st, nil
}

// llmStream is one response of a MockLLM. It has no goroutine: Recv waits
// for each event's due time itself.
type llmStream struct {
	m        *MockLLM
	ctx      context.Context
	start    time.Time // due time of event 0
	interval time.Duration
	events   []providers.LLMEvent
	respErr  error

	mu     sync.Mutex
	next   int
	fault  sessionFault
	failed error // returned by every Recv once set
	closed chan struct{}
	once   sync.Once
}

var _ providers.LLMStream = (*llmStream)(nil)

// Recv waits until the next event is due and returns it; io.EOF after
// Done; the context's error when the Stream's context ends;
// providers.ErrClosed after Close.
func (s *llmStream) Recv() (providers.LLMEvent, error) {
	for {
		ev, retry, err := s.recvOnce()
		if !retry {
			return ev, err
		}
	}
}

// recvOnce waits for the next event; retry is set when another Recv took
// that event meanwhile.
func (s *llmStream) recvOnce() (ev providers.LLMEvent, retry bool, err error) {
	s.mu.Lock()
	if err := s.stoppedLocked(); err != nil {
		s.mu.Unlock()
		return ev, false, err
	}
	n := s.next
	at, forever, fail := s.fault.schedule(n, s.start.Add(time.Duration(n)*s.interval))
	s.mu.Unlock()

	if forever {
		select {
		case <-s.ctx.Done():
			return ev, false, s.ctx.Err()
		case <-s.closed:
			return ev, false, providers.ErrClosed
		}
	}
	if err := sleepCtx(s.ctx, s.closed, time.Until(at)); err != nil {
		return ev, false, err
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.stoppedLocked(); err != nil {
		return ev, false, err
	}
	if s.next != n {
		return ev, true, nil
	}
	switch {
	case fail != nil:
		s.failed = fail
	case s.respErr != nil:
		s.failed = s.respErr
	}
	if s.failed != nil {
		return ev, false, s.failed
	}
	ev = s.events[n]
	s.next++
	s.m.mu.Lock()
	s.m.eventsSent++
	s.m.mu.Unlock()
	return ev, false, nil
}

// stoppedLocked is the error of a stream that cannot deliver any more.
func (s *llmStream) stoppedLocked() error {
	select {
	case <-s.closed:
		return providers.ErrClosed
	default:
	}
	if err := s.ctx.Err(); err != nil {
		return err
	}
	if s.failed != nil {
		return s.failed
	}
	if s.respErr == nil && s.next >= len(s.events) {
		return io.EOF
	}
	return nil
}

// Close ends the stream; a blocked Recv returns providers.ErrClosed.
func (s *llmStream) Close() error {
	s.once.Do(func() { close(s.closed) })
	return nil
}
