package loosetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/brisvox/brisvox/internal/leaktest"
	"io"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers"
)

// The names of the steps, in the order Run runs them.
const (
	StepWarm   = "warm"
	StepText   = "text"
	StepTools  = "tools"
	StepCancel = "cancel"
)

// Defaults of the zero Config fields.
const (
	DefaultStepTimeout  = 60 * time.Second
	DefaultCancelBound  = 2 * time.Second
	DefaultLeakBound    = 5 * time.Second
	DefaultMaxEvents    = 20000
	DefaultMaxTextBytes = 256 << 10
)

// WeatherToolName is the tool offered in the tools step.
const WeatherToolName = "get_weather"

// The conversation. The prompts ask for short answers so a live run is
// cheap; the cancel prompt asks for a long one so there is something to
// cancel.
const (
	systemPrompt = "You are a concise assistant taking part in an automated test. Keep every answer short."
	textPrompt   = "In one short sentence: why is the sky blue?"
	toolsPrompt  = "What is the weather right now in Paris and in Tokyo? Use the get_weather tool for each city, then answer in one short sentence."
	cancelPrompt = "Count from one to three hundred in words, separated by spaces."
	// toolResult answers every call of the tools step.
	toolResult = `{"temperature_c":18,"conditions":"cloudy"}`
	// toolEpoch is the turn epoch the call ids are minted under.
	toolEpoch messages.Epoch = 1
)

// weatherSchema is the JSON schema of get_weather's arguments.
const weatherSchema = `{"type":"object","properties":{"city":{"type":"string","description":"The city, for example Paris"}},"required":["city"]}`

// WeatherTool is the tool definition offered in the tools step.
func WeatherTool() providers.ToolDef {
	return providers.ToolDef{
		Name:        WeatherToolName,
		Description: "Returns the current weather of a city.",
		Parameters:  json.RawMessage(weatherSchema),
	}
}

// Config bounds a Run. The zero value means the defaults.
type Config struct {
	// StepTimeout is each step's own deadline (the context of its
	// requests); 0: DefaultStepTimeout. A stream still open CancelBound
	// after it is closed by a watchdog and the step fails with ErrHang.
	StepTimeout time.Duration
	// CancelBound is how long Recv may take to return after the context is
	// cancelled; 0: DefaultCancelBound.
	CancelBound time.Duration
	// LeakBound is how long the goroutines may take to fall back to their
	// number before the cancelled stream; 0: DefaultLeakBound.
	LeakBound time.Duration
	// MaxEvents and MaxTextBytes bound one stream; 0: the defaults.
	MaxEvents    int
	MaxTextBytes int
}

// Validate rejects negative bounds with ErrInvalidConfig.
func (c Config) Validate() error {
	if c.StepTimeout < 0 || c.CancelBound < 0 || c.LeakBound < 0 || c.MaxEvents < 0 || c.MaxTextBytes < 0 {
		return fmt.Errorf("%w: bounds must not be negative", ErrInvalidConfig)
	}
	return nil
}

// withDefaults fills the zero fields.
func (c Config) withDefaults() Config {
	if c.StepTimeout == 0 {
		c.StepTimeout = DefaultStepTimeout
	}
	if c.CancelBound == 0 {
		c.CancelBound = DefaultCancelBound
	}
	if c.LeakBound == 0 {
		c.LeakBound = DefaultLeakBound
	}
	if c.MaxEvents == 0 {
		c.MaxEvents = DefaultMaxEvents
	}
	if c.MaxTextBytes == 0 {
		c.MaxTextBytes = DefaultMaxTextBytes
	}
	return c
}

// Step is the outcome of one step: counts, never content.
type Step struct {
	Name string
	// Err is nil when the step passed; else it wraps one of the sentinels.
	Err     error
	Elapsed time.Duration
	// FirstEvent is the time from Stream to the first event of the step's
	// first request; 0 when none came.
	FirstEvent time.Duration
	// Requests counts the Stream calls of the step; Events and TextBytes
	// add up over them.
	Requests  int
	Events    int
	TextBytes int
	// Calls counts the tool calls of the tools step's first response.
	Calls int
	// Usage is the last usage reported in the step, if any.
	Usage *providers.Usage
}

// Report is the outcome of a Run, one Step per step in order.
type Report struct {
	Steps []Step
}

// Passed tells whether every step passed.
func (r Report) Passed() bool {
	for _, s := range r.Steps {
		if s.Err != nil {
			return false
		}
	}
	return len(r.Steps) > 0
}

// Step returns the step named name.
func (r Report) Step(name string) (Step, bool) {
	for _, s := range r.Steps {
		if s.Name == name {
			return s, true
		}
	}
	return Step{}, false
}

// String is one line per step: the verdict and the counts.
func (r Report) String() string {
	var b strings.Builder
	for _, s := range r.Steps {
		verdict := "ok"
		if s.Err != nil {
			verdict = "FAIL: " + s.Err.Error()
		}
		fmt.Fprintf(&b, "%s: %s (%d requests, %d events, %d text bytes, %d calls, first event %v, %v", s.Name, verdict, s.Requests, s.Events, s.TextBytes, s.Calls, s.FirstEvent.Round(time.Millisecond), s.Elapsed.Round(time.Millisecond))
		if s.Usage != nil {
			fmt.Fprintf(&b, ", usage in %d out %d cached %d", s.Usage.InputTokens, s.Usage.OutputTokens, s.Usage.CachedInputTokens)
		}
		b.WriteString(")\n")
	}
	return b.String()
}

// Run holds llm to the loose assertions: Warm, a plain question, a
// question that needs a tool (and the follow-up with the results), and a
// cancellation, each under its own deadline. Every step runs, whatever
// the others did. The error is for an invalid cfg only; the verdicts are
// in the Report.
//
// The cancel step compares the goroutines before and after its stream
// (the bubble's inside a synctest bubble, else all of them): outside a
// bubble, run it from a test that is not parallel with others.
func Run(ctx context.Context, llm providers.LLM, cfg Config) (Report, error) {
	if err := cfg.Validate(); err != nil {
		return Report{}, err
	}
	r := &runner{llm: llm, cfg: cfg.withDefaults()}
	steps := []struct {
		name string
		run  func(context.Context, *Step) error
	}{
		{StepWarm, r.warm},
		{StepText, r.text},
		{StepTools, r.tools},
		{StepCancel, r.cancel},
	}
	var rep Report
	for _, st := range steps {
		s := Step{Name: st.name}
		sctx, cancel := context.WithTimeout(ctx, r.cfg.StepTimeout)
		start := time.Now()
		s.Err = st.run(sctx, &s)
		s.Elapsed = time.Since(start)
		cancel()
		rep.Steps = append(rep.Steps, s)
	}
	return rep, nil
}

// runner runs the steps of one Run.
type runner struct {
	llm providers.LLM
	cfg Config
}

func (r *runner) warm(ctx context.Context, _ *Step) error {
	if err := r.llm.Warm(ctx); err != nil {
		return fmt.Errorf("%w: %v", ErrWarm, err)
	}
	return nil
}

func (r *runner) text(ctx context.Context, s *Step) error {
	req := &providers.Request{Messages: []agent.Message{agent.System(systemPrompt), agent.User(textPrompt)}}
	resp, err := r.collect(ctx, s, req)
	if err != nil {
		return err
	}
	if len(resp.Calls) > 0 {
		return fmt.Errorf("%w: %d tool calls, and no tool was offered", ErrCall, len(resp.Calls))
	}
	if strings.TrimSpace(resp.Text) == "" {
		return fmt.Errorf("%w: the answer has no text", ErrText)
	}
	return nil
}

func (r *runner) tools(ctx context.Context, s *Step) error {
	tools := []providers.ToolDef{WeatherTool()}
	conv := agent.NewContext(systemPrompt)
	conv.Append(agent.User(toolsPrompt))
	resp, err := r.collect(ctx, s, &providers.Request{Messages: conv.Messages(), Tools: tools})
	if err != nil {
		return err
	}
	s.Calls = len(resp.Calls)
	if err := checkCalls(resp, tools); err != nil {
		return err
	}
	if len(resp.Calls) == 0 {
		// The model chose to answer without the tool: fine, if it answered.
		if strings.TrimSpace(resp.Text) == "" {
			return fmt.Errorf("%w: neither a tool call nor text", ErrText)
		}
		return nil
	}
	// As the llm actor does: the engine's ids, the provider's kept; the
	// assistant message with every call and its provider data as
	// received; one result per call.
	ids := conv.NextToolCallIDs(toolEpoch, len(resp.Calls))
	for i := range resp.Calls {
		c := &resp.Calls[i].Call
		c.ProviderID, c.ID = c.ID, ids[i]
	}
	msg, _ := resp.AssistantMessage() // there are calls, so there is a message
	conv.Append(msg)
	// Invalid calls are answered with their error results, as the engine
	// does, so only checkCalls above tells a bad call.
	for _, res := range resp.ErrorResults() {
		conv.Append(agent.ToolMessage(res))
	}
	for _, c := range resp.ValidCalls() {
		conv.Append(agent.ToolMessage(messages.ToolResult{CallID: c.ID, Name: c.Name, Content: toolResult}))
	}
	if err := conv.Validate(); err != nil {
		return fmt.Errorf("%w: the follow-up context is invalid: %v", ErrCall, err)
	}
	follow, err := r.collect(ctx, s, &providers.Request{Messages: conv.Messages(), Tools: tools})
	if err != nil {
		return fmt.Errorf("follow-up: %w", err)
	}
	if err := checkCalls(follow, tools); err != nil {
		return fmt.Errorf("follow-up: %w", err)
	}
	if strings.TrimSpace(follow.Text) == "" {
		return fmt.Errorf("%w: the follow-up with the results has no text", ErrText)
	}
	return nil
}

// checkCalls checks that every call assembled (the assembler marks a call
// invalid unless its arguments are a UTF-8 JSON object and it has a name)
// and names an offered tool. Details name the call's index and the kind of
// fault, never the arguments.
func checkCalls(resp *agent.Response, tools []providers.ToolDef) error {
	for _, c := range resp.Calls {
		if c.Invalid != nil {
			return fmt.Errorf("%w: call %d: %s", ErrCall, c.Index, c.Invalid.Kind)
		}
		known := false
		for _, t := range tools {
			known = known || t.Name == c.Call.Name
		}
		if !known {
			return fmt.Errorf("%w: call %d names a tool that was not offered", ErrCall, c.Index)
		}
	}
	return nil
}

func (r *runner) cancel(ctx context.Context, s *Step) error {
	req := &providers.Request{Messages: []agent.Message{agent.System(systemPrompt), agent.User(cancelPrompt)}}
	before := leaktest.Count()
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.Requests++
	start := time.Now()
	st, err := r.llm.Stream(cctx, req)
	if err != nil {
		return fmt.Errorf("%w: Stream: %v", ErrStream, err)
	}
	var hung atomic.Bool
	wd := r.watchdog(ctx, st, &hung)
	ev, err := st.Recv()
	if err != nil {
		wd.Stop()
		_ = st.Close()
		if hung.Load() {
			return fmt.Errorf("%w: no first event", ErrHang)
		}
		return fmt.Errorf("%w: first event: %v", ErrStream, err)
	}
	s.Events++
	s.FirstEvent = time.Since(start)
	if ev.Kind == providers.LLMText {
		s.TextBytes += len(ev.Text)
	}
	wd.Stop()
	if ev.Kind == providers.LLMDone {
		_ = st.Close()
		return fmt.Errorf("%w: the first event ended the answer, nothing was left to cancel", ErrCancel)
	}
	// From here Recv has CancelBound.
	var late atomic.Bool
	bound := time.AfterFunc(r.cfg.CancelBound, func() {
		late.Store(true)
		_ = st.Close()
	})
	cancel()
	t0 := time.Now()
	_, err = st.Recv()
	took := time.Since(t0)
	bound.Stop()
	_ = st.Close()
	switch {
	case late.Load() || took > r.cfg.CancelBound:
		return fmt.Errorf("%w: Recv took %v after the cancel (bound %v)", ErrCancel, took, r.cfg.CancelBound)
	case !errors.Is(err, context.Canceled):
		return fmt.Errorf("%w: Recv after the cancel returned %v, not the context's error", ErrCancel, err)
	}
	if n := settle(before, r.cfg.LeakBound); n > before {
		return fmt.Errorf("%w: %d goroutines %v after the stream closed, %d before it", ErrLeak, n, r.cfg.LeakBound, before)
	}
	return nil
}

// settlePoll is how often the leak check counts goroutines.
const settlePoll = 10 * time.Millisecond

// settle waits up to bound for the goroutine count to fall to baseline
// and returns the last count.
func settle(baseline int, bound time.Duration) int {
	deadline := time.Now().Add(bound)
	for {
		n := leaktest.Count()
		if n <= baseline || !time.Now().Before(deadline) {
			return n
		}
		time.Sleep(settlePoll)
	}
}

// watchdog closes st once the step's deadline is CancelBound past, so a
// Recv that ignores the context still returns; hung records that it did.
func (r *runner) watchdog(ctx context.Context, st providers.LLMStream, hung *atomic.Bool) *time.Timer {
	d := r.cfg.StepTimeout
	if dl, ok := ctx.Deadline(); ok {
		d = time.Until(dl)
	}
	return time.AfterFunc(d+r.cfg.CancelBound, func() {
		hung.Store(true)
		_ = st.Close()
	})
}

// collect streams req and holds the stream to the end-of-stream rules:
// every text piece valid UTF-8, every fragment accepted by the engine's
// assembler, usage reports sane, exactly one LLMDone with a stop reason,
// then io.EOF, which stays. It returns the assembled response.
func (r *runner) collect(ctx context.Context, s *Step, req *providers.Request) (*agent.Response, error) {
	s.Requests++
	start := time.Now()
	st, err := r.llm.Stream(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("%w: Stream: %v", ErrStream, err)
	}
	var hung atomic.Bool
	wd := r.watchdog(ctx, st, &hung)
	defer wd.Stop()
	defer st.Close()
	as, err := agent.NewAssembler(agent.AssemblerConfig{})
	if err != nil {
		return nil, err // unreachable: the zero config is valid
	}
	var (
		events, textBytes int
		done              bool
		stop              string
		usage             *providers.Usage
	)
	defer func() {
		s.Events += events
		s.TextBytes += textBytes
		if usage != nil {
			s.Usage = usage
		}
	}()
	for {
		ev, err := st.Recv()
		if errors.Is(err, io.EOF) {
			if !done {
				return nil, fmt.Errorf("%w: io.EOF after %d events", ErrNoDone, events)
			}
			break
		}
		if err != nil {
			if hung.Load() {
				return nil, fmt.Errorf("%w: after %d events", ErrHang, events)
			}
			return nil, fmt.Errorf("%w: after %d events: %v", ErrStream, events, err)
		}
		if done {
			return nil, fmt.Errorf("%w: an event of kind %d after LLMDone", ErrAfterDone, ev.Kind)
		}
		events++
		if events == 1 && s.FirstEvent == 0 {
			s.FirstEvent = time.Since(start)
		}
		if events > r.cfg.MaxEvents {
			return nil, fmt.Errorf("%w: over %d events", ErrRunaway, r.cfg.MaxEvents)
		}
		switch ev.Kind {
		case providers.LLMText:
			if !utf8.ValidString(ev.Text) {
				return nil, fmt.Errorf("%w: text of event %d is not valid UTF-8", ErrText, events)
			}
			textBytes += len(ev.Text)
			if textBytes > r.cfg.MaxTextBytes {
				return nil, fmt.Errorf("%w: over %d text bytes", ErrRunaway, r.cfg.MaxTextBytes)
			}
			err = as.AppendText(ev.Text)
		case providers.LLMToolCall:
			if err = as.AppendCall(agent.CallFragment{Index: ev.Index, ID: ev.ID, Name: ev.Name, Arguments: ev.Args, ProviderData: ev.ProviderData}); err != nil {
				return nil, fmt.Errorf("%w: the assembler refused fragment %d: %v", ErrCall, events, err)
			}
		case providers.LLMProviderData:
			err = as.SetProviderData(ev.ProviderData)
		case providers.LLMUsage:
			u := ev.Usage
			if u.InputTokens < 0 || u.OutputTokens < 0 || u.CachedInputTokens < 0 {
				return nil, fmt.Errorf("%w: negative count (in %d, out %d, cached %d)", ErrUsage, u.InputTokens, u.OutputTokens, u.CachedInputTokens)
			}
			usage = &u
		case providers.LLMDone:
			done, stop = true, ev.StopReason
		default:
			return nil, fmt.Errorf("%w: kind %d", ErrUnknownKind, ev.Kind)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: the assembler refused event %d: %v", ErrStream, events, err)
		}
	}
	if _, err := st.Recv(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: Recv after io.EOF returned %v", ErrAfterDone, err)
	}
	if stop == "" {
		return nil, ErrNoStopReason
	}
	if usage != nil && (usage.InputTokens <= 0 || usage.OutputTokens <= 0) {
		return nil, fmt.Errorf("%w: in %d, out %d", ErrUsage, usage.InputTokens, usage.OutputTokens)
	}
	resp, err := as.Finish()
	if err != nil {
		return nil, err // unreachable: finished once, never cancelled
	}
	return resp, nil
}
