package contracttest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/providertest"
)

// The names of the LLM checks, in the order RunLLM runs them.
const (
	CheckStreaming          = "streaming"
	CheckCancel             = "cancel"
	CheckReconnect          = "reconnect"
	CheckErrorMapping       = "error_mapping"
	CheckTimeoutConnect     = "timeout/connect_stalled"
	CheckTimeoutConnectSlow = "timeout/connect_slow"
	CheckTimeoutFirst       = "timeout/first_event_stalled"
	CheckTimeoutFirstSlow   = "timeout/first_event_slow"
	CheckTimeoutIdle        = "timeout/idle"
	CheckWarm               = "warm"
	CheckGoroutineLeak      = "no_goroutine_leak"
)

// llmChecks is the LLM suite, in order.
func llmChecks() []check[*llmRun] {
	return []check[*llmRun]{
		{CheckStreaming, (*llmRun).streaming, false},
		{CheckCancel, (*llmRun).cancel, false},
		{CheckReconnect, (*llmRun).reconnect, true},
		{CheckErrorMapping, (*llmRun).errorMapping, true},
		{CheckTimeoutConnect, (*llmRun).timeoutConnectStalled, true},
		{CheckTimeoutConnectSlow, (*llmRun).timeoutConnectSlow, true},
		{CheckTimeoutFirst, (*llmRun).timeoutFirstStalled, true},
		{CheckTimeoutFirstSlow, (*llmRun).timeoutFirstSlow, true},
		{CheckTimeoutIdle, (*llmRun).timeoutIdle, true},
		{CheckWarm, (*llmRun).warm, false},
		{CheckGoroutineLeak, (*llmRun).goroutineLeak, false},
	}
}

// LLMCheckNames lists the checks RunLLM runs, in order.
func LLMCheckNames() []string { return checkNames(llmChecks()) }

// RunLLM runs the LLM contract suite against p, scripted through h, and
// reports one CheckResult per check. The error is only for invalid
// arguments; a provider's failures are in the Report. Run it inside a
// testing/synctest bubble (with p, h and everything they start created
// inside it) for virtual time. ctx ends the suite early: the checks then
// fail with its error.
func RunLLM(ctx context.Context, p providers.LLM, h LLMHarness, cfg Config) (Report, error) {
	if err := checkArgs(p == nil || h == nil, "provider or harness", cfg); err != nil {
		return Report{}, err
	}
	ioTimeout := h.IOTimeout()
	if ioTimeout <= 0 {
		return Report{}, fmt.Errorf("%w: harness io timeout %v", ErrInvalidConfig, ioTimeout)
	}
	r := &llmRun{suite: newSuite(ctx, cfg, ioTimeout), p: p, h: h}
	return runChecks("llm", r, llmChecks(), h.Reset, false), nil
}

// llmRun is one run of the suite.
type llmRun struct {
	suite
	p   providers.LLM
	h   LLMHarness
	seq int
}

// request makes a request unique to this point of the suite.
func (r *llmRun) request(what string) *providers.Request {
	r.seq++
	return &providers.Request{Messages: []agent.Message{agent.User(fmt.Sprintf("contract %s #%d", what, r.seq))}}
}

// llmStream is a stream under test with its context and bounds.
type llmStream struct {
	handle[providers.LLMStream]
	r *llmRun
}

// open calls Stream, bounded.
func (r *llmRun) open(what string, req *providers.Request) (*llmStream, error) {
	h, err := openHandle(&r.suite, "Stream", "stream", what,
		func(ctx context.Context) (providers.LLMStream, error) { return r.p.Stream(ctx, req) })
	if err != nil {
		return nil, err
	}
	return &llmStream{handle: h, r: r}, nil
}

// recv reads the next event, bounded. On a hang the stream is closed and
// its context cancelled.
func (st *llmStream) recv() (providers.LLMEvent, error) {
	ev, err := callBounded(fmt.Sprintf("Recv of event %d (%s)", st.n, st.what), st.bound,
		st.s.Recv,
		func() { _ = st.s.Close(); st.cancel() },
		nil)
	if err == nil {
		st.n++
	}
	return ev, err
}

// readToEnd reads the rest of the stream: it must end with Done, then
// io.EOF. It returns the events read (Done included) and the first error
// or breach.
func (st *llmStream) readToEnd() ([]providers.LLMEvent, error) {
	var evs []providers.LLMEvent
	for len(evs) < st.r.cfg.MaxEvents {
		ev, err := st.recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return evs, fmt.Errorf("io.EOF after %d events without Done", len(evs))
			}
			return evs, err
		}
		evs = append(evs, ev)
		if ev.Kind != providers.LLMDone {
			continue
		}
		ev, err = st.recv()
		switch {
		case err == nil:
			return evs, fmt.Errorf("event %+v after Done", ev)
		case !errors.Is(err, io.EOF):
			return evs, fmt.Errorf("after Done: %w, want io.EOF", err)
		}
		return evs, nil
	}
	return evs, fmt.Errorf("no Done after %d events", len(evs))
}

// readTexts reads until n text deltas were read.
func (st *llmStream) readTexts(n int) error {
	for got := 0; got < n; {
		ev, err := st.recv()
		if err != nil {
			return fmt.Errorf("after %d text deltas: %w", got, err)
		}
		switch ev.Kind {
		case providers.LLMText:
			got++
		case providers.LLMDone:
			return fmt.Errorf("the Done event after %d text deltas, want %d", got, n)
		}
	}
	return nil
}

// whole streams a scripted response to its end.
func (r *llmRun) whole(what string) ([]providers.LLMEvent, error) {
	return r.wholeOf(what, r.request(what))
}

// joinText joins the text deltas.
func joinText(evs []providers.LLMEvent) (string, int) {
	var b strings.Builder
	n := 0
	for _, ev := range evs {
		if ev.Kind == providers.LLMText {
			b.WriteString(ev.Text)
			n++
		}
	}
	return b.String(), n
}

// streaming: text deltas join to the text, tool-call fragments join to the
// JSON and the first fragment of a call carries its id and name, Done is
// last, then io.EOF.
func (r *llmRun) streaming() error {
	want := Response{
		Text: "The contract suite reads every delta of this answer.",
		Calls: []Call{
			{ID: "call_1", Name: "lookup_weather", Args: `{"city":"Zürich","days":3}`},
			{ID: "call_2", Name: "book_table", Args: `{"guests":4,"time":"19:30","note":"window seat"}`},
		},
	}
	r.h.Script(want)
	evs, err := r.whole("streaming")
	if err != nil {
		return err
	}
	if text, _ := joinText(evs); text != want.Text {
		return fmt.Errorf("text deltas join to %q, want %q", text, want.Text)
	}
	type call struct {
		id, name string
		args     strings.Builder
	}
	calls := map[int]*call{}
	for i, ev := range evs {
		if ev.Kind != providers.LLMToolCall {
			continue
		}
		c, ok := calls[ev.Index]
		if !ok {
			if ev.ID == "" || ev.Name == "" {
				return fmt.Errorf("event %d: the first fragment of call %d has id %q and name %q", i, ev.Index, ev.ID, ev.Name)
			}
			c = &call{id: ev.ID, name: ev.Name}
			calls[ev.Index] = c
		}
		c.args.WriteString(ev.Args)
	}
	if len(calls) != len(want.Calls) {
		return fmt.Errorf("%d tool calls, want %d", len(calls), len(want.Calls))
	}
	for i, w := range want.Calls {
		c, ok := calls[i]
		switch {
		case !ok:
			return fmt.Errorf("no tool call with index %d", i)
		case c.id != w.ID || c.name != w.Name:
			return fmt.Errorf("call %d is %s %s, want %s %s", i, c.id, c.name, w.ID, w.Name)
		case c.args.String() != w.Args:
			return fmt.Errorf("call %d: fragments join to %q, want %q", i, c.args.String(), w.Args)
		}
	}
	return nil
}

// cancel: a control run proves that the harness's events-sent counter is
// live; then a long response dropped mid-stream (context cancelled and
// stream closed) must stop: the counter advanced by at least the deltas
// read, and at most CancelSlackEvents more events within CancelPrompt.
func (r *llmRun) cancel() error {
	r.h.Script(Response{Text: words("c", 3)})
	before := r.h.EventsSent()
	if _, err := r.whole("cancel control"); err != nil {
		return fmt.Errorf("control run: %w", err)
	}
	if n := r.h.EventsSent() - before; n < 4 {
		return fmt.Errorf("events sent counted %d for 3 deltas and Done, want >= 4: the harness's counter is not live", n)
	}

	r.h.Script(Response{Text: words("l", r.cfg.LongResponseWords)})
	before = r.h.EventsSent()
	st, err := r.open("cancel", r.request("cancel"))
	if err != nil {
		return err
	}
	const read = 2
	if err := st.readTexts(read); err != nil {
		st.close()
		return err
	}
	st.cancel()
	if err := st.close(); err != nil {
		return fmt.Errorf("close at the drop: %w", err)
	}
	atDrop := r.h.EventsSent()
	if atDrop-before < read {
		return fmt.Errorf("events sent advanced by %d while %d deltas were read", atDrop-before, read)
	}
	time.Sleep(r.cfg.CancelPrompt)
	if n := r.h.EventsSent() - atDrop; n > r.cfg.CancelSlackEvents {
		return fmt.Errorf("%d response events produced within %v after the drop, want <= %d", n, r.cfg.CancelPrompt, r.cfg.CancelSlackEvents)
	}
	return nil
}

// reconnect: a mid-stream drop surfaces as *providers.Disconnected, the
// stream ends, and a retry of the same request gets a working stream.
func (r *llmRun) reconnect() error {
	r.h.Script(Response{Text: words("r", 10)})
	r.h.Inject(providertest.Fault{Kind: providertest.FaultDisconnect, BeforeEvent: 3})
	req := r.request("reconnect")
	st, err := r.open("reconnect drop", req)
	if err != nil {
		return err
	}
	defer st.close()
	evs, err := st.readToEnd()
	var disc *providers.Disconnected
	switch {
	case err == nil:
		return fmt.Errorf("dropped stream ended normally after %d events", len(evs))
	case !errors.As(err, &disc):
		return fmt.Errorf("drop after %d events surfaced as %v, want *providers.Disconnected", len(evs), err)
	case len(evs) == 0:
		return errors.New("drop surfaced before any event: not mid-stream")
	}
	if ev, err := st.recv(); err == nil {
		return fmt.Errorf("event %+v after Disconnected: the stream did not end", ev)
	}
	st.close()

	r.h.Script(Response{Text: words("n", 5)})
	evs, err = r.wholeOf("reconnect retry", req)
	if err != nil {
		return fmt.Errorf("retry after the drop: %w", err)
	}
	if _, n := joinText(evs); n == 0 {
		return errors.New("retry after the drop: no text")
	}
	return nil
}

// wholeOf streams req to its end.
func (r *llmRun) wholeOf(what string, req *providers.Request) ([]providers.LLMEvent, error) {
	st, err := r.open(what, req)
	if err != nil {
		return nil, err
	}
	defer st.close()
	return st.readToEnd()
}

// errorMapping: refusals 401/429/500/503 map to *providers.Rejected with
// the status (from Stream, or from the first Recv of an adapter that
// connects lazily), a protocol violation to *providers.Protocol, a drop to
// *providers.Disconnected. Every case is tried; all breaches are reported.
func (r *llmRun) errorMapping() error {
	return checkErrorMapping(func(status int, what string) error {
		r.h.Reset()
		r.h.Script(Response{Text: words("e", 3)})
		r.h.Inject(providertest.Fault{Kind: providertest.FaultReject, Status: status})
		st, err := r.open(what, r.request(what))
		if err != nil {
			return err
		}
		_, err = st.recv()
		st.close()
		return err
	}, func(c mappedFault) error {
		r.h.Reset()
		r.h.Script(Response{Text: words("e", 5)})
		r.h.Inject(providertest.Fault{Kind: c.kind, BeforeEvent: 1})
		_, err := r.whole(c.what)
		return err
	})
}

// timeoutConnectStalled: a connect stalled for an hour fails with Timeout
// at the deadline.
func (r *llmRun) timeoutConnectStalled() error {
	r.h.Script(Response{Text: words("t", 3)})
	r.h.Inject(providertest.Fault{Kind: providertest.FaultConnectStall, Duration: stall})
	start := time.Now()
	st, err := r.open("stalled connect", r.request("stalled connect"))
	elapsed := time.Since(start)
	if st != nil {
		st.close()
	}
	return r.judgeTimeout(err, elapsed)
}

// timeoutConnectSlow: a connect slow by half the deadline succeeds and its
// response arrives to the end.
func (r *llmRun) timeoutConnectSlow() error {
	r.h.Script(Response{Text: words("t", 3)})
	r.h.Inject(providertest.Fault{Kind: providertest.FaultConnectStall, Duration: r.io / 2})
	_, err := r.whole("slow connect")
	return err
}

// timeoutFirstStalled: a first event stalled for an hour fails with
// Timeout at the deadline, counted from Stream's return.
func (r *llmRun) timeoutFirstStalled() error {
	r.h.Script(Response{Text: words("t", 3)})
	r.h.Inject(providertest.Fault{Kind: providertest.FaultStall, BeforeEvent: 0, Duration: stall})
	st, err := r.open("stalled first event", r.request("stalled first event"))
	if err != nil {
		return err
	}
	defer st.close()
	start := time.Now()
	_, err = st.recv()
	return r.judgeTimeout(err, time.Since(start))
}

// timeoutFirstSlow: a first event late by half the deadline is delivered
// and the response arrives to the end.
func (r *llmRun) timeoutFirstSlow() error {
	r.h.Script(Response{Text: words("t", 3)})
	r.h.Inject(providertest.Fault{Kind: providertest.FaultDelay, BeforeEvent: 0, Duration: r.io / 2})
	_, err := r.whole("slow first event")
	return err
}

// timeoutIdle: a gap of an hour after the second event fails with Timeout
// at the deadline, counted from the read of the last event delivered: a
// deadline armed only for the first event is caught. (The gap follows the
// second event, not the first, so that an adapter that loses an event is
// still judged on its deadline here; streaming catches the loss.)
func (r *llmRun) timeoutIdle() error {
	r.h.Script(Response{Text: words("t", 5)})
	r.h.Inject(providertest.Fault{Kind: providertest.FaultStall, BeforeEvent: 2, Duration: stall})
	st, err := r.open("idle gap", r.request("idle gap"))
	if err != nil {
		return err
	}
	defer st.close()
	for {
		start := time.Now()
		ev, err := st.recv()
		if err == nil && ev.Kind != providers.LLMDone {
			continue
		}
		if st.n == 0 {
			return fmt.Errorf("no event before the gap: %v", err)
		}
		return r.judgeTimeout(err, time.Since(start))
	}
}

// timeToFirst streams a scripted response to its end and returns the time
// from the Stream call to the first event.
func (r *llmRun) timeToFirst(what string) (time.Duration, error) {
	r.h.Script(Response{Text: words("w", 3)})
	start := time.Now()
	st, err := r.open(what, r.request(what))
	if err != nil {
		return 0, err
	}
	defer st.close()
	if _, err := st.recv(); err != nil {
		return 0, err
	}
	first := time.Since(start)
	if _, err := st.readToEnd(); err != nil {
		return 0, err
	}
	return first, nil
}

// warm: Warm succeeds twice, and the stream after it is not slower to its
// first event than a cold one plus WarmSlack.
func (r *llmRun) warm() error {
	return r.checkWarm(r.p.Warm, r.timeToFirst, "stream", "first event")
}

// goroutineLeak: no goroutine started since the baseline outlives, by
// LeakBound, a finished stream or one abandoned mid-way through a long
// response (its context cancelled, never closed); see checkNoLeak.
func (r *llmRun) goroutineLeak() error {
	return r.checkNoLeak("stream", func() error {
		r.h.Script(Response{Text: words("f", 5)})
		if _, err := r.whole("finished stream"); err != nil {
			return fmt.Errorf("finished stream: %w", err)
		}
		return nil
	}, func() error {
		r.h.Script(Response{Text: words("a", r.cfg.LongResponseWords)})
		st, err := r.open("abandoned stream", r.request("abandoned stream"))
		if err != nil {
			return fmt.Errorf("abandoned stream: %w", err)
		}
		if err := st.readTexts(2); err != nil {
			st.close()
			return fmt.Errorf("abandoned stream: %w", err)
		}
		st.cancel()
		return nil
	})
}
