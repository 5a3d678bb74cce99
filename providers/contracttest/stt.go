package contracttest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/providertest"
)

// frameDuration is the length of the speech frames the feeder sends, one
// per frameDuration, as a call does.
const frameDuration = 20 * time.Millisecond

// burstDuration is the speech sent at once before a Finalize: shorter than
// the mock's 200 ms interim step, so the mock's first event is the final.
// No check depends on that: a service that also answers the burst with an
// interim (deepgrammock sends one per audio frame) passes as well.
const burstDuration = 100 * time.Millisecond

// feedFor is how long the STT cancel and leak checks stream speech before
// the hang-up, so that the provider is mid-way through an utterance.
const feedFor = 300 * time.Millisecond

// sttChecks is the STT suite, in order.
func sttChecks() []check[*sttRun] {
	return []check[*sttRun]{
		{CheckStreaming, (*sttRun).streaming, false},
		{CheckCancel, (*sttRun).cancel, false},
		{CheckReconnect, (*sttRun).reconnect, true},
		{CheckErrorMapping, (*sttRun).errorMapping, true},
		{CheckTimeoutConnect, (*sttRun).timeoutConnectStalled, true},
		{CheckTimeoutConnectSlow, (*sttRun).timeoutConnectSlow, true},
		{CheckTimeoutFirst, (*sttRun).timeoutFirstStalled, true},
		{CheckTimeoutFirstSlow, (*sttRun).timeoutFirstSlow, true},
		{CheckTimeoutIdle, (*sttRun).timeoutIdle, true},
		{CheckWarm, (*sttRun).warm, false},
		{CheckGoroutineLeak, (*sttRun).goroutineLeak, false},
	}
}

// STTCheckNames lists the checks RunSTT runs, in order.
func STTCheckNames() []string { return checkNames(sttChecks()) }

// RunSTT runs the STT contract suite against p, scripted through h, and
// reports one CheckResult per check. The error is only for invalid
// arguments; a provider's failures are in the Report. Run it inside a
// testing/synctest bubble (with p, h and everything they start created
// inside it) for virtual time. ctx ends the suite early: the checks then
// fail with its error.
func RunSTT(ctx context.Context, p providers.STT, h STTHarness, cfg Config) (Report, error) {
	if err := checkArgs(p == nil || h == nil, "provider or harness", cfg); err != nil {
		return Report{}, err
	}
	io, rate := h.IOTimeout(), h.SampleRate()
	if io <= 0 || rate < 50 {
		return Report{}, fmt.Errorf("%w: harness io timeout %v, rate %d", ErrInvalidConfig, io, rate)
	}
	r := &sttRun{suite: newSuite(ctx, cfg, io), p: p, h: h,
		frame: speechFrame(rate, frameDuration), burst: speechFrame(rate, burstDuration)}
	return runChecks("stt", r, sttChecks(), h.Reset, false), nil
}

// sttRun is one run of the STT suite.
type sttRun struct {
	suite
	p     providers.STT
	h     STTHarness
	frame []int16 // frameDuration of speech
	burst []int16 // burstDuration of speech
}

// sttSess is a session under test with its context and bounds.
type sttSess struct {
	handle[providers.STTSession]
	r *sttRun
}

// connect calls Connect, bounded.
func (r *sttRun) connect(what string) (*sttSess, error) {
	h, err := openHandle(&r.suite, "Connect", "session", what, r.p.Connect)
	if err != nil {
		return nil, err
	}
	return &sttSess{handle: h, r: r}, nil
}

// recv reads the next event within the bound. A failure event is returned
// with its error; a closed channel is ErrEnded.
func (ss *sttSess) recv() (providers.STTEvent, error) {
	return recvEvent(&ss.handle, func(ev providers.STTEvent) error { return ev.Err })
}

// send calls SendAudio, bounded.
func (ss *sttSess) send(pcm []int16) error {
	return ss.call("SendAudio", func() error { return ss.s.SendAudio(pcm) })
}

// finalize calls Finalize, bounded.
func (ss *sttSess) finalize() error {
	return ss.call("Finalize", ss.s.Finalize)
}

// readUntilFinal reads until the final of a Finalize.
func (ss *sttSess) readUntilFinal() (providers.STTEvent, error) {
	for range ss.r.cfg.MaxEvents {
		ev, err := ss.recv()
		if err != nil {
			return ev, err
		}
		if ev.Final && ev.FromFinalize {
			return ev, nil
		}
	}
	return providers.STTEvent{}, fmt.Errorf("no final after %d events (%s)", ss.r.cfg.MaxEvents, ss.what)
}

// sayAndFinalize sends a burst of speech, finalizes and reads until its
// final.
func (ss *sttSess) sayAndFinalize() (providers.STTEvent, error) {
	if err := ss.send(ss.r.burst); err != nil {
		return providers.STTEvent{}, err
	}
	if err := ss.finalize(); err != nil {
		return providers.STTEvent{}, err
	}
	return ss.readUntilFinal()
}

// feeder streams speech into a session, one frame per frameDuration, on
// its own goroutine, as a call does; halt stops it. It stops by itself at
// the first SendAudio error (the session ended).
type feeder struct {
	stop   chan struct{}
	done   chan struct{}
	bound  time.Duration
	abort  func()
	sender string
}

// feed starts a feeder; the first frame goes out at once.
func (ss *sttSess) feed() *feeder {
	f := &feeder{stop: make(chan struct{}), done: make(chan struct{}), bound: ss.bound,
		abort: func() { _ = ss.s.Close() }, sender: "SendAudio (" + ss.what + ")"}
	go func() {
		defer close(f.done)
		t := time.NewTicker(frameDuration)
		defer t.Stop()
		for {
			if ss.s.SendAudio(ss.r.frame) != nil {
				return
			}
			select {
			case <-t.C:
			case <-f.stop:
				return
			}
		}
	}()
	return f
}

// halt stops the feeder and waits for it, bounded: a SendAudio that blocks
// is a hang (the session is closed to free it).
func (f *feeder) halt() error {
	close(f.stop)
	if _, _, timedOut := recvWithin(f.done, f.bound); timedOut {
		f.abort()
		return fmt.Errorf("%w: %s blocked for %v", ErrHang, f.sender, f.bound)
	}
	return nil
}

// describeSTT says what an event is without its text (a transcript is
// not for error messages).
func describeSTT(ev providers.STTEvent) string {
	switch {
	case ev.Err != nil:
		return fmt.Sprintf("a failure (%v)", ev.Err)
	case ev.Final:
		return fmt.Sprintf("a final (%d bytes, from finalize %v)", len(ev.Text), ev.FromFinalize)
	}
	return fmt.Sprintf("an interim (%d bytes)", len(ev.Text))
}

// streaming: the first event, while speech streams in and before any
// Finalize, is a non-empty interim; after the Finalize comes the final
// with FromFinalize and SpeechFinal set and the scripted text.
func (r *sttRun) streaming() error {
	const text = "the contract suite hears every word of this"
	r.h.Script(text)
	ss, err := r.connect("streaming")
	if err != nil {
		return err
	}
	defer ss.close()
	f := ss.feed()
	first, err := ss.recv()
	if herr := f.halt(); herr != nil {
		return herr
	}
	switch {
	case err != nil:
		return fmt.Errorf("first event while speech streams in: %w", err)
	case first.Final:
		return fmt.Errorf("the first event is %s before any Finalize, want an interim", describeSTT(first))
	case first.Text == "":
		return errors.New("the first interim is empty")
	}
	if err := ss.finalize(); err != nil {
		return err
	}
	final, err := ss.readUntilFinal()
	switch {
	case err != nil:
		return fmt.Errorf("after Finalize: %w", err)
	case !final.SpeechFinal:
		return errors.New("the final of the Finalize has SpeechFinal unset")
	case final.Text != text:
		return fmt.Errorf("the final has %d bytes, not the scripted %d (or other words)", len(final.Text), len(text))
	}
	return nil
}

// cancel: speech streams in for a while and a Finalize is owed; after a
// settle, what the channel holds was handed over and is not counted; then
// Close (the hang-up, the context still live) must close the events
// within CancelPrompt with nothing after what was buffered.
func (r *sttRun) cancel() error {
	r.h.Script(words("c", 50))
	ss, err := r.connect("cancel")
	if err != nil {
		return err
	}
	defer ss.cancel()
	f := ss.feed()
	time.Sleep(feedFor)
	if err := f.halt(); err != nil {
		return err
	}
	if err := ss.finalize(); err != nil {
		return err
	}
	time.Sleep(r.cfg.CancelSettle)
	buffered := len(ss.s.Events())
	start := time.Now()
	if err := ss.hangUp(); err != nil {
		return fmt.Errorf("Close at the hang-up: %w", err)
	}
	return expectEnd(ss.s.Events(), buffered, start, r.cfg.CancelPrompt, describeSTT)
}

// expectEnd reads the events buffered at the hang-up (not counted), then
// demands that ch closes within prompt of start with nothing more.
func expectEnd[E any](ch <-chan E, buffered int, start time.Time, prompt time.Duration, describe func(E) string) error {
	for i := 0; ; i++ {
		ev, ok, timedOut := recvWithin(ch, max(time.Until(start.Add(prompt)), 0))
		switch {
		case timedOut:
			return fmt.Errorf("the events did not close within %v of the hang-up", prompt)
		case !ok:
			return nil
		case i >= buffered:
			return fmt.Errorf("%s after the hang-up (%d were buffered before it)", describe(ev), buffered)
		}
	}
}

// reconnect: a drop after the first event surfaces as
// *providers.Disconnected, the events then close, and a new session
// recognizes speech. The drop takes the session's second event: for a
// service that answers the burst with its final alone, an interim of the
// speech streamed after it; for one that also sends an interim for the
// burst, the final itself. Either is a drop mid-session.
func (r *sttRun) reconnect() error {
	r.h.Script("reconnect first utterance")
	r.h.Script("reconnect second utterance")
	r.h.Inject(providertest.Fault{Kind: providertest.FaultDisconnect, BeforeEvent: 1})
	ss, err := r.connect("reconnect drop")
	if err != nil {
		return err
	}
	defer ss.close()
	// A service that answers the burst at once can drop the session before
	// the Finalize (or the burst) is through, which the session then
	// refuses: how the session ended is what its events say.
	if err := ss.send(r.burst); errors.Is(err, ErrHang) {
		return err
	}
	if err := ss.finalize(); errors.Is(err, ErrHang) {
		return err
	}
	if _, err = ss.readUntilFinal(); err == nil {
		f := ss.feed()
		for range r.cfg.MaxEvents {
			if _, err = ss.recv(); err != nil {
				break
			}
		}
		if herr := f.halt(); herr != nil {
			return herr
		}
	}
	if ss.n == 0 {
		return fmt.Errorf("before the drop: no event, got %v", err)
	}
	var disc *providers.Disconnected
	if !errors.As(err, &disc) {
		return fmt.Errorf("drop after %d events surfaced as %v, want *providers.Disconnected", ss.n, err)
	}
	if ev, err := ss.recv(); !errors.Is(err, ErrEnded) {
		return fmt.Errorf("after Disconnected: %s (%v), want the events closed", describeSTT(ev), err)
	}
	ss.close()

	ss2, err := r.connect("reconnect retry")
	if err != nil {
		return fmt.Errorf("retry after the drop: %w", err)
	}
	defer ss2.close()
	final, err := ss2.sayAndFinalize()
	switch {
	case err != nil:
		return fmt.Errorf("retry after the drop: %w", err)
	case final.Text == "":
		return errors.New("retry after the drop: an empty final for speech")
	}
	return nil
}

// errorMapping: refusals 401/429/500/503 map to *providers.Rejected with
// the status (from Connect, or as the first event of an adapter that
// connects lazily), a protocol violation to *providers.Protocol, a drop to
// *providers.Disconnected. Every case is tried; all breaches are reported.
func (r *sttRun) errorMapping() error {
	return checkErrorMapping(func(status int, what string) error {
		r.h.Reset()
		r.h.Script("refused")
		r.h.Inject(providertest.Fault{Kind: providertest.FaultReject, Status: status})
		return r.sayOnce(what)
	}, func(c mappedFault) error {
		r.h.Reset()
		r.h.Script("mapped")
		r.h.Inject(providertest.Fault{Kind: c.kind, BeforeEvent: 0})
		return r.sayOnce(c.what)
	})
}

// sayOnce connects, says a burst and reads its final, and closes: the
// first error on the way.
func (r *sttRun) sayOnce(what string) error {
	ss, err := r.connect(what)
	if err != nil {
		return err
	}
	_, err = ss.sayAndFinalize()
	ss.close()
	return err
}

// timeoutConnectStalled: a connect stalled for an hour fails with Timeout
// at the deadline.
func (r *sttRun) timeoutConnectStalled() error {
	r.h.Script("stalled")
	r.h.Inject(providertest.Fault{Kind: providertest.FaultConnectStall, Duration: stall})
	start := time.Now()
	ss, err := r.connect("stalled connect")
	elapsed := time.Since(start)
	if ss != nil {
		ss.close()
	}
	return r.judgeTimeout(err, elapsed)
}

// timeoutConnectSlow: a connect slow by half the deadline succeeds and
// the session recognizes speech.
func (r *sttRun) timeoutConnectSlow() error {
	r.h.Script("slow connect")
	r.h.Inject(providertest.Fault{Kind: providertest.FaultConnectStall, Duration: r.io / 2})
	ss, err := r.connect("slow connect")
	if err != nil {
		return err
	}
	defer ss.close()
	_, err = ss.sayAndFinalize()
	return err
}

// timeoutFirstStalled: a first event stalled for an hour fails with
// Timeout at the deadline, counted from the speech sent.
func (r *sttRun) timeoutFirstStalled() error {
	r.h.Script("stalled first event")
	r.h.Inject(providertest.Fault{Kind: providertest.FaultStall, BeforeEvent: 0, Duration: stall})
	ss, err := r.connect("stalled first event")
	if err != nil {
		return err
	}
	defer ss.close()
	if err := ss.send(r.burst); err != nil {
		return err
	}
	start := time.Now()
	if err := ss.finalize(); err != nil {
		return err
	}
	ev, err := ss.recv()
	if err == nil {
		return fmt.Errorf("%s came through a stall of the first event", describeSTT(ev))
	}
	return r.judgeTimeout(err, time.Since(start))
}

// timeoutFirstSlow: a first event late by half the deadline is delivered,
// and so is the final.
func (r *sttRun) timeoutFirstSlow() error {
	const text = "slow first event"
	r.h.Script(text)
	r.h.Inject(providertest.Fault{Kind: providertest.FaultDelay, BeforeEvent: 0, Duration: r.io / 2})
	ss, err := r.connect("slow first event")
	if err != nil {
		return err
	}
	defer ss.close()
	final, err := ss.sayAndFinalize()
	if err == nil && final.Text != text {
		return errors.New("the final is not the scripted text")
	}
	return err
}

// timeoutIdle: after the first event, speech streams in and the service
// goes silent for an hour: Timeout at the deadline, counted from the read
// of the last event, so a deadline armed only for the first event is
// caught.
func (r *sttRun) timeoutIdle() error {
	r.h.Script("idle first")
	r.h.Script(words("i", 50))
	r.h.Inject(providertest.Fault{Kind: providertest.FaultStall, BeforeEvent: 1, Duration: stall})
	ss, err := r.connect("idle gap")
	if err != nil {
		return err
	}
	defer ss.close()
	if err := ss.send(r.burst); err != nil {
		return err
	}
	if err := ss.finalize(); err != nil {
		return err
	}
	if _, err := ss.recv(); err != nil {
		return fmt.Errorf("no event before the gap: %w", err)
	}
	f := ss.feed()
	defer f.halt()
	for range r.cfg.MaxEvents {
		start := time.Now()
		if _, err := ss.recv(); err != nil {
			return r.judgeTimeout(err, time.Since(start))
		}
	}
	return fmt.Errorf("%d events through the stall", r.cfg.MaxEvents)
}

// timeToFirst connects, says a burst and finalizes, and returns the time
// from the Connect call to the first event.
func (r *sttRun) timeToFirst(what string) (time.Duration, error) {
	r.h.Script(what)
	start := time.Now()
	ss, err := r.connect(what)
	if err != nil {
		return 0, err
	}
	defer ss.close()
	if err := ss.send(r.burst); err != nil {
		return 0, err
	}
	if err := ss.finalize(); err != nil {
		return 0, err
	}
	if _, err := ss.recv(); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// warm: Warm succeeds twice, and the session after it is not slower to its
// first event than a cold one plus WarmSlack.
func (r *sttRun) warm() error {
	return r.checkWarm(r.p.Warm, r.timeToFirst, "session", "first event")
}

// goroutineLeak: no goroutine started since the baseline outlives, by
// LeakBound, a finished session (closed) or one abandoned while speech
// streams in and a final is owed (its context cancelled, never closed);
// see checkNoLeak.
func (r *sttRun) goroutineLeak() error {
	return r.checkNoLeak("session", func() error {
		r.h.Script("finished")
		r.h.Script(words("a", 50))
		ss, err := r.connect("finished session")
		if err != nil {
			return err
		}
		if _, err := ss.sayAndFinalize(); err != nil {
			ss.close()
			return fmt.Errorf("finished session: %w", err)
		}
		ss.close()
		return nil
	}, func() error {
		ss, err := r.connect("abandoned session")
		if err != nil {
			return err
		}
		f := ss.feed()
		time.Sleep(feedFor)
		if err := f.halt(); err != nil {
			ss.cancel()
			return err
		}
		if err := ss.finalize(); err != nil {
			ss.cancel()
			return err
		}
		ss.cancel()
		return nil
	})
}
