package contracttest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/providertest"
)

// The names of the TTS checks that the LLM and STT suites do not have.
const (
	CheckAudioAndWords = "audio_and_words"
	CheckFlush         = "flush"
)

// The checks RunTTS adds for a harness whose adapter holds text on the
// service unflushed (TTSHoldsText).
const (
	CheckTimeoutHeldStalled = "timeout/held_text_stalled"
	CheckHeldTextSlowLLM    = "timeout/held_text_slow_llm"
)

// TTSHoldsText is implemented by a TTSHarness whose adapter sends a pushed
// text to a service that may keep it unspoken until the Flush (Deepgram
// Aura flushing per turn): nothing is owed for such text, yet a service
// that hangs meanwhile must be noticed, and a slow LLM must not be cut
// off. When HoldsText is true RunTTS adds two checks:
// timeout/held_text_stalled (a text pushed, not flushed, to a service
// stalled before its first event: Timeout at the deadline counted from
// the Push) and timeout/held_text_slow_llm (a live service: a text
// pushed, twice the deadline without text, then the rest and the Flush:
// the context is spoken whole). The harness's FaultStall must then stall
// everything the service answers, pings included, as a hung server does.
type TTSHoldsText interface {
	HoldsText() bool
}

// TTSInProcess is implemented by a TTSHarness whose engine runs in the
// process (libflite over cgo): there is no service, so nothing to fault
// and no connect or reply deadline. When InProcess is true RunTTS skips
// the checks that fault a service (reconnect, error_mapping, the timeout
// checks, timeout/held_text_stalled) and reports them Skipped, never
// Passed; it never calls the harness's Inject. The other checks run as
// for any adapter; IOTimeout still bounds them.
type TTSInProcess interface {
	InProcess() bool
}

// skipInProcess is the Detail of a check skipped for an in-process engine.
const skipInProcess = "not applicable: in-process engine, no service to fault"

// ttsVocabulary is what the TTS suite says: plain lower-case words, so a
// service has nothing to normalize.
var ttsVocabulary = strings.Fields("the quick contract suite hears every word spoken here and now")

// speechText is n words of the vocabulary, separated by single spaces.
func speechText(n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = ttsVocabulary[i%len(ttsVocabulary)]
	}
	return strings.Join(ws, " ")
}

// ttsChecks is the TTS suite, in order.
func ttsChecks() []check[*ttsRun] {
	return []check[*ttsRun]{
		{CheckAudioAndWords, (*ttsRun).audioAndWords, false},
		{CheckFlush, (*ttsRun).flush, false},
		{CheckCancel, (*ttsRun).cancel, false},
		{CheckReconnect, (*ttsRun).reconnect, true},
		{CheckErrorMapping, (*ttsRun).errorMapping, true},
		{CheckTimeoutConnect, (*ttsRun).timeoutConnectStalled, true},
		{CheckTimeoutConnectSlow, (*ttsRun).timeoutConnectSlow, true},
		{CheckTimeoutFirst, (*ttsRun).timeoutFirstStalled, true},
		{CheckTimeoutFirstSlow, (*ttsRun).timeoutFirstSlow, true},
		{CheckTimeoutIdle, (*ttsRun).timeoutIdle, true},
		{CheckWarm, (*ttsRun).warm, false},
		{CheckGoroutineLeak, (*ttsRun).goroutineLeak, false},
	}
}

// TTSCheckNamesFor lists the checks RunTTS reports with h, in order: the
// held-text checks follow TTSCheckNames when h holds text. The checks
// skipped for an in-process engine are listed too (reported Skipped).
func TTSCheckNamesFor(h TTSHarness) []string { return checkNames(ttsChecksFor(h)) }

// ttsChecksFor is the suite for h.
func ttsChecksFor(h TTSHarness) []check[*ttsRun] {
	checks := ttsChecks()
	if ht, ok := h.(TTSHoldsText); ok && ht.HoldsText() {
		checks = append(checks,
			check[*ttsRun]{CheckTimeoutHeldStalled, (*ttsRun).timeoutHeldStalled, true},
			check[*ttsRun]{CheckHeldTextSlowLLM, (*ttsRun).heldTextSlowLLM, false})
	}
	return checks
}

// TTSCheckNames lists the checks RunTTS runs for a harness that holds no
// text (see TTSCheckNamesFor), in order.
func TTSCheckNames() []string { return checkNames(ttsChecks()) }

// RunTTS runs the TTS contract suite against p, driven through h, and
// reports one CheckResult per check (Skipped for a fault check when h is
// an in-process TTSInProcess). The error is only for invalid
// arguments; a provider's failures are in the Report. Run it inside a
// testing/synctest bubble (with p, h and everything they start created
// inside it) for virtual time. ctx ends the suite early: the checks then
// fail with its error.
func RunTTS(ctx context.Context, p providers.TTS, h TTSHarness, cfg Config) (Report, error) {
	if err := checkArgs(p == nil || h == nil, "provider or harness", cfg); err != nil {
		return Report{}, err
	}
	io := h.IOTimeout()
	if io <= 0 {
		return Report{}, fmt.Errorf("%w: harness io timeout %v", ErrInvalidConfig, io)
	}
	r := &ttsRun{suite: newSuite(ctx, cfg, io), p: p, h: h, words: h.EmitsWords(), atConnect: h.FaultsAtConnect()}
	ip, _ := h.(TTSInProcess)
	inProcess := ip != nil && ip.InProcess()
	return runChecks("tts", r, ttsChecksFor(h), h.Reset, inProcess), nil
}

// ttsRun is one run of the TTS suite.
type ttsRun struct {
	suite
	p         providers.TTS
	h         TTSHarness
	words     bool // the harness's EmitsWords
	atConnect bool // the harness's FaultsAtConnect
	seq       int
}

// contextID names a new context.
func (r *ttsRun) contextID(what string) string {
	r.seq++
	return fmt.Sprintf("%s-%d", strings.ReplaceAll(what, " ", "-"), r.seq)
}

// ttsSess is a session under test with its context and bounds.
type ttsSess struct {
	handle[providers.TTSSession]
	r *ttsRun
}

// connect calls Connect, bounded.
func (r *ttsRun) connect(what string) (*ttsSess, error) {
	h, err := openHandle(&r.suite, "Connect", "session", what, r.p.Connect)
	if err != nil {
		return nil, err
	}
	return &ttsSess{handle: h, r: r}, nil
}

// recv reads the next event within the bound. A TTSError event is
// returned with its error; a closed channel is ErrEnded.
func (ss *ttsSess) recv() (providers.TTSEvent, error) {
	return recvEvent(&ss.handle, ss.failure)
}

// failure is the error a TTSError event reports; nil for the other kinds.
func (ss *ttsSess) failure(ev providers.TTSEvent) error {
	switch {
	case ev.Kind != providers.TTSError:
		return nil
	case ev.Err != nil:
		return ev.Err
	}
	return fmt.Errorf("a TTSError event without Err after %d events (%s)", ss.n, ss.what)
}

// say pushes the pieces into context id and flushes it.
func (ss *ttsSess) say(id string, pieces ...string) error {
	for _, p := range pieces {
		if err := ss.call("Push", func() error { return ss.s.Push(id, p) }); err != nil {
			return err
		}
	}
	return ss.call("Flush", func() error { return ss.s.Flush(id) })
}

// spoken is what a context delivered up to its Flushed.
type spoken struct {
	words   []string
	offsets []time.Duration
	audio   time.Duration // the context's audio, summed over its chunks
	chunks  int
}

// describeTTS says what an event is, for failures.
func describeTTS(ev providers.TTSEvent) string {
	switch ev.Kind {
	case providers.TTSAudio:
		return fmt.Sprintf("audio of %q (%d samples)", ev.ContextID, len(ev.PCM))
	case providers.TTSWord:
		return fmt.Sprintf("a word of %q at %v", ev.ContextID, ev.Offset)
	case providers.TTSFlushed:
		return fmt.Sprintf("Flushed of %q", ev.ContextID)
	case providers.TTSCancelled:
		return fmt.Sprintf("Cancelled of %q", ev.ContextID)
	case providers.TTSError:
		return fmt.Sprintf("a failure (%v)", ev.Err)
	}
	return fmt.Sprintf("an event of unknown kind %d", ev.Kind)
}

// add records an audio or word event of the context being read.
func (sp *spoken) add(ev providers.TTSEvent) error {
	switch ev.Kind {
	case providers.TTSAudio:
		if ev.Rate <= 0 || len(ev.PCM) == 0 {
			return fmt.Errorf("audio event with rate %d and %d samples", ev.Rate, len(ev.PCM))
		}
		sp.audio += time.Duration(len(ev.PCM)) * time.Second / time.Duration(ev.Rate)
		sp.chunks++
	case providers.TTSWord:
		sp.words = append(sp.words, ev.Word)
		sp.offsets = append(sp.offsets, ev.Offset)
	default:
		return fmt.Errorf("%s while the context speaks", describeTTS(ev))
	}
	return nil
}

// untilFlushed reads the events of context id until its Flushed; an event
// of another context fails.
func (ss *ttsSess) untilFlushed(id string) (spoken, error) {
	var sp spoken
	for range ss.r.cfg.MaxEvents {
		ev, err := ss.recv()
		switch {
		case err != nil:
			return sp, err
		case ev.ContextID != id:
			return sp, fmt.Errorf("%s while %q speaks", describeTTS(ev), id)
		case ev.Kind == providers.TTSFlushed:
			return sp, nil
		}
		if err := sp.add(ev); err != nil {
			return sp, err
		}
	}
	return sp, fmt.Errorf("no Flushed of %q after %d events", id, ss.r.cfg.MaxEvents)
}

// speak says the pieces in a new context and reads it to its Flushed.
func (ss *ttsSess) speak(pieces ...string) (spoken, error) {
	id := ss.r.contextID(ss.what)
	if err := ss.say(id, pieces...); err != nil {
		return spoken{}, err
	}
	return ss.untilFlushed(id)
}

// speakAudible says text in a new context and demands audio before its
// Flushed. (The words and their times are audio_and_words' and flush's
// business.)
func (ss *ttsSess) speakAudible(text string) error {
	sp, err := ss.speak(text)
	if err != nil {
		return err
	}
	if sp.chunks == 0 {
		return errors.New("no audio before Flushed")
	}
	return nil
}

// judge checks what a context said against the text: audio, and (when the
// service emits words) the words in order with offsets that do not go
// back (strict: go forward), the audio lasting past the last word's start.
// A service without words must not make any up.
func (r *ttsRun) judge(sp spoken, text string, strict bool) error {
	if sp.chunks == 0 {
		return errors.New("no audio before Flushed")
	}
	if !r.words {
		if len(sp.words) > 0 {
			return fmt.Errorf("%d Word events from a service that declares no word times", len(sp.words))
		}
		return nil
	}
	if want := strings.Fields(text); !slices.Equal(sp.words, want) {
		return fmt.Errorf("words %q, want %q", sp.words, want)
	}
	for i := 1; i < len(sp.offsets); i++ {
		if sp.offsets[i] < sp.offsets[i-1] || strict && sp.offsets[i] == sp.offsets[i-1] {
			return fmt.Errorf("word %d at %v after word %d at %v", i, sp.offsets[i], i-1, sp.offsets[i-1])
		}
	}
	if last := sp.offsets[len(sp.offsets)-1]; sp.audio <= last {
		return fmt.Errorf("%v of audio, the last word starts at %v", sp.audio, last)
	}
	return nil
}

// quiet demands that nothing arrives within the quiet window.
func (ss *ttsSess) quiet(after string) error {
	ev, ok, timedOut := recvWithin(ss.s.Events(), ss.r.cfg.QuietWindow)
	switch {
	case timedOut:
		return nil
	case !ok:
		return fmt.Errorf("the events closed within %v after %s", ss.r.cfg.QuietWindow, after)
	}
	return fmt.Errorf("%s within %v after %s", describeTTS(ev), ss.r.cfg.QuietWindow, after)
}

// audioAndWords: one text in one push: audio, words in order with
// non-decreasing offsets (the first need not be at 0: alignment may come
// after leading silence), the audio lasting past the last word's start,
// and nothing after Flushed within the quiet window.
func (r *ttsRun) audioAndWords() error {
	text := speechText(8)
	ss, err := r.connect("audio and words")
	if err != nil {
		return err
	}
	defer ss.close()
	sp, err := ss.speak(text)
	if err != nil {
		return err
	}
	if err := r.judge(sp, text, false); err != nil {
		return err
	}
	return ss.quiet("Flushed")
}

// flush: a text in three pieces is one context: the words continue across
// the pieces with offsets that go forward, the audio covers them, and
// nothing follows Flushed within the quiet window.
func (r *ttsRun) flush() error {
	pieces := []string{"the contract ", "suite speaks ", "in three pieces"}
	ss, err := r.connect("flush")
	if err != nil {
		return err
	}
	defer ss.close()
	sp, err := ss.speak(pieces...)
	if err != nil {
		return err
	}
	if err := r.judge(sp, strings.Join(pieces, ""), true); err != nil {
		return err
	}
	return ss.quiet("Flushed")
}

// cancel: a long context is cancelled after its first audio and a settle;
// what the channel held by then was handed over and is not counted. The
// Cancelled ack must come within CancelPrompt of the Cancel, at most
// CancelSlackEvents events of the context between, nothing within the
// quiet window after the ack, and the session must then speak a new
// context.
func (r *ttsRun) cancel() error {
	ss, err := r.connect("cancel")
	if err != nil {
		return err
	}
	defer ss.close()
	id := r.contextID("cancel")
	if err := ss.say(id, speechText(40)); err != nil {
		return err
	}
	for {
		ev, err := ss.recv()
		if err != nil {
			return fmt.Errorf("before the first audio: %w", err)
		}
		if ev.ContextID != id || ev.Kind != providers.TTSAudio && ev.Kind != providers.TTSWord {
			return fmt.Errorf("%s before the first audio", describeTTS(ev))
		}
		if ev.Kind == providers.TTSAudio {
			break
		}
	}
	time.Sleep(r.cfg.CancelSettle)
	buffered := len(ss.s.Events())
	start := time.Now()
	if err := ss.call("Cancel", func() error { return ss.s.Cancel(id) }); err != nil {
		return fmt.Errorf("Cancel: %w", err)
	}
	after := 0
	for i := 0; ; i++ {
		ev, ok, timedOut := recvWithin(ss.s.Events(), max(time.Until(start.Add(r.cfg.CancelPrompt)), 0))
		switch {
		case timedOut:
			return fmt.Errorf("no Cancelled ack within %v (%d events of the context after the cancel)", r.cfg.CancelPrompt, after)
		case !ok:
			return errors.New("the events closed before the Cancelled ack")
		case ev.Kind == providers.TTSError:
			return fmt.Errorf("before the Cancelled ack: %s", describeTTS(ev))
		case ev.ContextID != id:
			return fmt.Errorf("%s before the Cancelled ack of %q", describeTTS(ev), id)
		case ev.Kind == providers.TTSCancelled:
			if after > r.cfg.CancelSlackEvents {
				return fmt.Errorf("%d events of the cancelled context after the cancel, want <= %d", after, r.cfg.CancelSlackEvents)
			}
			if err := ss.quiet("the Cancelled ack"); err != nil {
				return err
			}
			if err := ss.speakAudible("the next answer"); err != nil {
				return fmt.Errorf("the context after the cancel: %w", err)
			}
			return nil
		case i >= buffered:
			after++
		}
	}
}

// reconnect: a drop after three events surfaces as
// *providers.Disconnected, the events then close, and a new session
// speaks.
func (r *ttsRun) reconnect() error {
	r.h.Inject(providertest.Fault{Kind: providertest.FaultDisconnect, BeforeEvent: 3})
	ss, err := r.connect("reconnect drop")
	if err != nil {
		return err
	}
	defer ss.close()
	_, err = ss.speak(speechText(20))
	var disc *providers.Disconnected
	switch {
	case err == nil:
		return errors.New("the dropped context was flushed")
	case !errors.As(err, &disc):
		return fmt.Errorf("drop after %d events surfaced as %v, want *providers.Disconnected", ss.n, err)
	case ss.n == 0:
		return errors.New("drop surfaced before any event: not mid-session")
	}
	if ev, err := ss.recv(); !errors.Is(err, ErrEnded) {
		return fmt.Errorf("after Disconnected: %s (%v), want the events closed", describeTTS(ev), err)
	}
	ss.close()

	ss2, err := r.connect("reconnect retry")
	if err != nil {
		return fmt.Errorf("retry after the drop: %w", err)
	}
	defer ss2.close()
	if err := ss2.speakAudible("the retry speaks"); err != nil {
		return fmt.Errorf("retry after the drop: %w", err)
	}
	return nil
}

// connectFault connects under an injected connect fault and returns the
// error it surfaces as: from Connect, or (FaultsAtConnect false) as the
// first event after a text; start is when the wait for it began.
func (r *ttsRun) connectFault(what string) (start time.Time, err error) {
	start = time.Now()
	ss, err := r.connect(what)
	if err != nil {
		if !r.atConnect {
			// %v, not %w: the checks look for the Rejected or Timeout
			// with errors.As, which must not find it in this failure.
			return start, fmt.Errorf("Connect failed (%v), but the harness says the adapter opens nothing at connect", err)
		}
		return start, err
	}
	defer ss.close()
	if r.atConnect {
		return start, errors.New("Connect succeeded")
	}
	id := r.contextID(what)
	if err := ss.say(id, "the first text"); err != nil {
		return start, err
	}
	start = time.Now()
	ev, err := ss.recv()
	if err == nil {
		return start, fmt.Errorf("%s, want the error of the first request", describeTTS(ev))
	}
	return start, err
}

// errorMapping: refusals 401/429/500/503 map to *providers.Rejected with
// the status (from Connect, or as the error event after the first text
// when FaultsAtConnect is false), a protocol violation to
// *providers.Protocol, a drop to *providers.Disconnected. Every case is
// tried; all breaches are reported.
func (r *ttsRun) errorMapping() error {
	return checkErrorMapping(func(status int, what string) error {
		r.h.Reset()
		r.h.Inject(providertest.Fault{Kind: providertest.FaultReject, Status: status})
		_, err := r.connectFault(what)
		return err
	}, func(c mappedFault) error {
		r.h.Reset()
		r.h.Inject(providertest.Fault{Kind: c.kind, BeforeEvent: 1})
		ss, err := r.connect(c.what)
		if err != nil {
			return err
		}
		_, err = ss.speak(speechText(5))
		ss.close()
		return err
	})
}

// timeoutConnectStalled: a connect stalled for an hour fails with Timeout
// at the deadline (FaultsAtConnect false: the first request, counted from
// the first text).
func (r *ttsRun) timeoutConnectStalled() error {
	r.h.Inject(providertest.Fault{Kind: providertest.FaultConnectStall, Duration: stall})
	start, err := r.connectFault("stalled connect")
	return r.judgeTimeout(err, time.Since(start))
}

// whole connects and speaks one text to its Flushed, with audio.
func (r *ttsRun) whole(what string) error {
	ss, err := r.connect(what)
	if err != nil {
		return err
	}
	defer ss.close()
	return ss.speakAudible(speechText(5))
}

// timeoutConnectSlow: a connect slow by half the deadline succeeds and the
// utterance arrives whole.
func (r *ttsRun) timeoutConnectSlow() error {
	r.h.Inject(providertest.Fault{Kind: providertest.FaultConnectStall, Duration: r.io / 2})
	return r.whole("slow connect")
}

// timeoutFirstStalled: a first event stalled for an hour fails with
// Timeout at the deadline, counted from the text pushed and flushed.
func (r *ttsRun) timeoutFirstStalled() error {
	r.h.Inject(providertest.Fault{Kind: providertest.FaultStall, BeforeEvent: 0, Duration: stall})
	return r.firstEventStalls("stalled first event", func(ss *ttsSess, id string) error {
		return ss.say(id, speechText(5))
	})
}

// firstEventStalls connects a session named what to a service that the
// check made stall before its first event, hands it text with input (in
// a new context id), and demands a Timeout at the deadline counted from
// the input.
func (r *ttsRun) firstEventStalls(what string, input func(ss *ttsSess, id string) error) error {
	ss, err := r.connect(what)
	if err != nil {
		return err
	}
	defer ss.close()
	if err := input(ss, r.contextID(what)); err != nil {
		return err
	}
	return ss.timesOut("a stall of the first event")
}

// timeoutHeldStalled: a text pushed and not flushed to a service stalled
// before its first event (pings unanswered) fails with Timeout at the
// deadline, counted from the Push: an adapter that arms nothing for text
// the service holds would wait for good.
func (r *ttsRun) timeoutHeldStalled() error {
	r.h.Inject(providertest.Fault{Kind: providertest.FaultStall, BeforeEvent: 0, Duration: stall})
	return r.firstEventStalls("stalled held text", func(ss *ttsSess, id string) error {
		return ss.call("Push", func() error { return ss.s.Push(id, speechText(5)) })
	})
}

// heldTextSlowLLM: a live service holds a pushed text while the LLM takes
// twice the deadline for the rest; the context, then flushed, is spoken
// whole: an adapter that arms its reply deadline on a held text cuts the
// answer off.
func (r *ttsRun) heldTextSlowLLM() error {
	pieces := []string{"the quick ", "contract suite"}
	ss, err := r.connect("slow llm")
	if err != nil {
		return err
	}
	defer ss.close()
	id := r.contextID("slow llm")
	if err := ss.call("Push", func() error { return ss.s.Push(id, pieces[0]) }); err != nil {
		return err
	}
	time.Sleep(2 * r.io)
	if err := ss.say(id, pieces[1]); err != nil {
		return err
	}
	sp, err := ss.untilFlushed(id)
	if err != nil {
		return err
	}
	return r.judge(sp, strings.Join(pieces, ""), true)
}

// timeoutFirstSlow: a first event late by half the deadline is delivered
// and the utterance arrives whole.
func (r *ttsRun) timeoutFirstSlow() error {
	r.h.Inject(providertest.Fault{Kind: providertest.FaultDelay, BeforeEvent: 0, Duration: r.io / 2})
	return r.whole("slow first event")
}

// timeoutIdle: a gap of an hour after the first event fails with Timeout
// at the deadline, counted from the read of the first event: a deadline
// armed only for the first event is caught.
func (r *ttsRun) timeoutIdle() error {
	r.h.Inject(providertest.Fault{Kind: providertest.FaultStall, BeforeEvent: 1, Duration: stall})
	ss, err := r.connect("idle gap")
	if err != nil {
		return err
	}
	defer ss.close()
	if err := ss.say(r.contextID("idle gap"), speechText(5)); err != nil {
		return err
	}
	if _, err := ss.recv(); err != nil {
		return fmt.Errorf("no event before the gap: %w", err)
	}
	return ss.timesOut("the stall")
}

// timesOut reads the next event, which the stall the check injected
// (through names it in the failure) must turn into a Timeout at the
// deadline, counted from now.
func (ss *ttsSess) timesOut(through string) error {
	start := time.Now()
	ev, err := ss.recv()
	if err == nil {
		return fmt.Errorf("%s came through %s", describeTTS(ev), through)
	}
	return ss.r.judgeTimeout(err, time.Since(start))
}

// timeToAudio connects, says a text and returns the time from the Connect
// call to the first audio, reading the context to its end.
func (r *ttsRun) timeToAudio(what string) (time.Duration, error) {
	start := time.Now()
	ss, err := r.connect(what)
	if err != nil {
		return 0, err
	}
	defer ss.close()
	id := r.contextID(what)
	if err := ss.say(id, speechText(3)); err != nil {
		return 0, err
	}
	// seen, not first == 0: an instant service (no connect latency, in a
	// synctest bubble) has its first audio at 0.
	var first time.Duration
	seen := false
	for range r.cfg.MaxEvents {
		ev, err := ss.recv()
		if err != nil {
			return 0, err
		}
		if ev.Kind == providers.TTSAudio && !seen {
			first, seen = time.Since(start), true
		}
		if ev.Kind == providers.TTSFlushed {
			if !seen {
				return 0, errors.New("no audio before Flushed")
			}
			return first, nil
		}
	}
	return 0, fmt.Errorf("no Flushed after %d events", r.cfg.MaxEvents)
}

// warm: Warm succeeds twice, and the session after it is not slower to its
// first audio than a cold one plus WarmSlack.
func (r *ttsRun) warm() error {
	return r.checkWarm(r.p.Warm, r.timeToAudio, "session", "first audio")
}

// goroutineLeak: no goroutine started since the baseline outlives, by
// LeakBound, a finished session (closed) or one abandoned mid-way through
// a long context (its context cancelled, never closed); see checkNoLeak.
func (r *ttsRun) goroutineLeak() error {
	return r.checkNoLeak("session", func() error {
		if err := r.whole("finished session"); err != nil {
			return fmt.Errorf("finished session: %w", err)
		}
		return nil
	}, func() error {
		ss, err := r.connect("abandoned session")
		if err != nil {
			return err
		}
		if err := ss.say(r.contextID("abandoned"), speechText(40)); err != nil {
			ss.cancel()
			return err
		}
		for {
			ev, err := ss.recv()
			if err != nil {
				ss.cancel()
				return fmt.Errorf("abandoned session: %w", err)
			}
			if ev.Kind == providers.TTSAudio {
				break
			}
		}
		ss.cancel()
		return nil
	})
}
