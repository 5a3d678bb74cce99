package contracttest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/brisvox/brisvox/providers"
)

// The broken TTS doubles. Each wraps a conformant providers.TTS (the
// reference: TTSWithDeadlines over the mock) and breaks one behaviour;
// LeadingSilence and ConnectsOnFirstPush change behaviour within the
// contract and must pass.

// CancelDelay is how late DelayedCancel's cancels reach the provider.
const CancelDelay = time.Second

// LeadingSilenceOffset is how late LeadingSilence reports every word.
const LeadingSilenceOffset = 80 * time.Millisecond

// relayTTSSession is a session whose events pass through a relay.
type relayTTSSession struct {
	providers.TTSSession
	r *relay[providers.TTSEvent]
}

func newRelayTTS(s providers.TTSSession, step relayStep[providers.TTSEvent]) *relayTTSSession {
	return &relayTTSSession{TTSSession: s, r: newRelay(s.Events(), step)}
}

func (s *relayTTSSession) Events() <-chan providers.TTSEvent { return s.r.out }

func (s *relayTTSSession) Close() error { return s.r.halt(s.TTSSession.Close) }

// ttsSessions is the TTS kind of the generic doubles.
func ttsSessions() sessionKind[providers.TTSSession, providers.TTSEvent] {
	return sessionKind[providers.TTSSession, providers.TTSEvent]{
		relay: func(s providers.TTSSession, step relayStep[providers.TTSEvent]) providers.TTSSession {
			return newRelayTTS(s, step)
		},
		errOf:   func(ev providers.TTSEvent) error { return ev.Err },
		withErr: func(ev providers.TTSEvent, err error) providers.TTSEvent { ev.Err = err; return ev },
	}
}

// wrapTTS makes a TTS whose sessions are made by wrap from p's.
func wrapTTS(p providers.TTS, wrap func(providers.TTSSession) providers.TTSSession) providers.TTS {
	return &wrapSessions[providers.TTSSession]{p, wrap}
}

// DeadCancel fails every Cancel, as an adapter whose cancel receiver was
// dropped: the send fails loudly.
func DeadCancel(p providers.TTS) providers.TTS {
	return wrapTTS(p, func(s providers.TTSSession) providers.TTSSession { return deadCancel{s} })
}

type deadCancel struct{ providers.TTSSession }

func (deadCancel) Cancel(string) error {
	return fmt.Errorf("%w: the cancel receiver was dropped", ErrBroken)
}

// IgnoresCancel accepts every Cancel into a channel nothing reads: the
// barge-in is lost, the context goes on.
func IgnoresCancel(p providers.TTS) providers.TTS {
	return wrapTTS(p, func(s providers.TTSSession) providers.TTSSession { return ignoresCancel{s} })
}

type ignoresCancel struct{ providers.TTSSession }

func (ignoresCancel) Cancel(string) error { return nil }

// DelayedCancel hands every Cancel to the provider CancelDelay late.
func DelayedCancel(p providers.TTS) providers.TTS {
	return wrapTTS(p, func(s providers.TTSSession) providers.TTSSession { return &delayedCancel{TTSSession: s} })
}

type delayedCancel struct {
	providers.TTSSession
	mu     sync.Mutex
	timers []*time.Timer
}

func (d *delayedCancel) Cancel(id string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.timers = append(d.timers, time.AfterFunc(CancelDelay, func() { _ = d.TTSSession.Cancel(id) }))
	return nil
}

func (d *delayedCancel) Close() error {
	d.mu.Lock()
	for _, t := range d.timers {
		t.Stop()
	}
	d.mu.Unlock()
	return d.TTSSession.Close()
}

// AckThenKeepsStreaming acknowledges every Cancel at once and never tells
// the provider: the cancelled context keeps streaming after its ack.
func AckThenKeepsStreaming(p providers.TTS) providers.TTS {
	return wrapTTS(p, func(s providers.TTSSession) providers.TTSSession {
		return &ackKeeps{newRelayTTS(s, passTTS)}
	})
}

// passTTS relays every event unchanged.
func passTTS(ev providers.TTSEvent, emit func(providers.TTSEvent) bool) bool { return emit(ev) }

type ackKeeps struct{ *relayTTSSession }

func (a *ackKeeps) Cancel(id string) error {
	a.r.inject(providers.TTSEvent{Kind: providers.TTSCancelled, ContextID: id})
	return nil
}

// DiesAfterCancel ends the session with the ack of a cancel: the events
// close after the Cancelled event, so no later context is served.
func DiesAfterCancel(p providers.TTS) providers.TTS {
	return wrapTTS(p, func(s providers.TTSSession) providers.TTSSession {
		return newRelayTTS(s, func(ev providers.TTSEvent, emit func(providers.TTSEvent) bool) bool {
			return emit(ev) && ev.Kind != providers.TTSCancelled
		})
	})
}

// Stragglers puts n audio events of the cancelled context between every
// Cancel and its ack. The contract allows CancelSlackEvents of them.
func Stragglers(p providers.TTS, n int) providers.TTS {
	return wrapTTS(p, func(s providers.TTSSession) providers.TTSSession {
		st := &stragglers{n: n, pending: map[string]bool{}}
		st.relayTTSSession = newRelayTTS(s, st.step)
		return st
	})
}

type stragglers struct {
	*relayTTSSession
	n       int
	mu      sync.Mutex
	pending map[string]bool // cancelled, not yet acknowledged
	rate    int             // of the last audio, relay goroutine only
}

func (s *stragglers) Cancel(id string) error {
	s.mu.Lock()
	s.pending[id] = true
	s.mu.Unlock()
	return s.relayTTSSession.Cancel(id)
}

func (s *stragglers) step(ev providers.TTSEvent, emit func(providers.TTSEvent) bool) bool {
	if ev.Kind == providers.TTSAudio {
		s.rate = ev.Rate
	}
	if ev.Kind == providers.TTSCancelled {
		s.mu.Lock()
		due := s.pending[ev.ContextID]
		delete(s.pending, ev.ContextID)
		s.mu.Unlock()
		for i := 0; due && i < s.n; i++ {
			rate := max(s.rate, 16000)
			if !emit(providers.TTSEvent{Kind: providers.TTSAudio, ContextID: ev.ContextID, Rate: rate, PCM: make([]int16, rate/50)}) {
				return false
			}
		}
	}
	return emit(ev)
}

// Truncated delivers only the first audio chunk of every context; its
// words and Flushed still come.
func Truncated(p providers.TTS) providers.TTS {
	return wrapTTS(p, func(s providers.TTSSession) providers.TTSSession {
		seen := map[string]bool{} // relay goroutine only
		return newRelayTTS(s, func(ev providers.TTSEvent, emit func(providers.TTSEvent) bool) bool {
			if ev.Kind == providers.TTSAudio {
				if seen[ev.ContextID] {
					return true
				}
				seen[ev.ContextID] = true
			}
			return emit(ev)
		})
	})
}

// LateAudio delivers the last audio chunk of every context after its
// Flushed.
func LateAudio(p providers.TTS) providers.TTS {
	return wrapTTS(p, func(s providers.TTSSession) providers.TTSSession {
		var held *providers.TTSEvent // relay goroutine only
		return newRelayTTS(s, func(ev providers.TTSEvent, emit func(providers.TTSEvent) bool) bool {
			switch {
			case ev.Kind == providers.TTSAudio:
				prev := held
				held = &ev
				return prev == nil || emit(*prev)
			case ev.Kind == providers.TTSFlushed && held != nil && held.ContextID == ev.ContextID:
				last := *held
				held = nil
				return emit(ev) && emit(last)
			case held != nil:
				last := *held
				held = nil
				return emit(last) && emit(ev)
			}
			return emit(ev)
		})
	})
}

// LeadingSilence reports every word LeadingSilenceOffset late, as a
// service that aligns words after leading silence: conformant.
func LeadingSilence(p providers.TTS) providers.TTS {
	return wrapTTS(p, func(s providers.TTSSession) providers.TTSSession {
		return newRelayTTS(s, func(ev providers.TTSEvent, emit func(providers.TTSEvent) bool) bool {
			if ev.Kind == providers.TTSWord {
				ev.Offset += LeadingSilenceOffset
			}
			return emit(ev)
		})
	})
}

// DeclaresNoWords is h saying that its service has no word times while
// the provider under test emits them: the emits-words-false branches of
// audio_and_words and flush must catch the made-up words.
func DeclaresNoWords(h TTSHarness) TTSHarness { return declaresNoWords{h} }

type declaresNoWords struct{ TTSHarness }

func (declaresNoWords) EmitsWords() bool { return false }

// FlushOwesOnly wraps p with the deadlines d as TTSWithDeadlines does,
// except that a Push owes nothing until the context's Flush: an adapter
// that holds text on the service without probing it. With a harness that
// holds text (HoldsText) it fails exactly timeout/held_text_stalled.
func FlushOwesOnly(p providers.TTS, d Deadlines) (providers.TTS, error) {
	if err := checkArgs(p == nil, "provider", d); err != nil {
		return nil, err
	}
	return &deadlineTTS{p: p, d: d, flushOnly: true}, nil
}

// HoldsText is h saying that its adapter holds text on the service
// unflushed (TTSHoldsText), which adds the held-text checks. Over the
// reference (TTSWithDeadlines, whose Push owes an answer) the slow-LLM
// check fails: the deadline cuts the pause of the LLM off.
func HoldsText(h TTSHarness) TTSHarness { return holdsText{h} }

type holdsText struct{ TTSHarness }

var _ TTSHoldsText = holdsText{}

func (holdsText) HoldsText() bool { return true }

// OpensNothingAtConnect is h saying that its adapter opens nothing at
// Connect (TTSHarness.FaultsAtConnect false), for ConnectsOnFirstPush.
func OpensNothingAtConnect(h TTSHarness) TTSHarness { return opensNothing{h} }

type opensNothing struct{ TTSHarness }

func (opensNothing) FaultsAtConnect() bool { return false }

// MisMappedTTS turns a refusal with status 429 into a *providers.Protocol,
// from Connect and in the events.
func MisMappedTTS(p providers.TTS) providers.TTS {
	return &misMappedConnector[providers.TTSSession, providers.TTSEvent]{p, ttsSessions()}
}

// WarmFailsTTS fails every Warm.
func WarmFailsTTS(p providers.TTS) providers.TTS {
	return &warmReplacedConnector[providers.TTSSession]{p, warmFailing}
}

// WarmHangsTTS never returns from Warm until its context ends.
func WarmHangsTTS(p providers.TTS) providers.TTS {
	return &warmReplacedConnector[providers.TTSSession]{p, warmHanging}
}

// WarmSlowsTTS makes the first Connect after a Warm WarmSlowdown slower.
func WarmSlowsTTS(p providers.TTS) providers.TTS {
	return &warmSlowsConnector[providers.TTSSession]{connector: p}
}

// ConnectHangsTTS enforces d for the first event and idle gaps but none
// for the connect: a stalled connect is waited out.
func ConnectHangsTTS(p providers.TTS, d time.Duration) (providers.TTS, error) {
	return TTSWithDeadlines(p, Deadlines{FirstEvent: d, Idle: d})
}

// NoIdleTimeoutTTS enforces d for the connect and the first event only: a
// stall after the first event is waited out.
func NoIdleTimeoutTTS(p providers.TTS, d time.Duration) (providers.TTS, error) {
	return TTSWithDeadlines(p, Deadlines{Connect: d, FirstEvent: d})
}

// LeakyTTS leaves a goroutine behind for every session, alive for Linger
// or until Release.
type LeakyTTS struct {
	providers.TTS
	*lingerers
}

// NewLeakyTTS wraps p into a LeakyTTS.
func NewLeakyTTS(p providers.TTS) *LeakyTTS { return &LeakyTTS{TTS: p, lingerers: newLingerers()} }

// Connect leaves a goroutine behind and connects p.
func (l *LeakyTTS) Connect(ctx context.Context) (providers.TTSSession, error) {
	l.leave()
	return l.TTS.Connect(ctx)
}

// StaleSessionTTS hands out a dead session again: after a session failed
// with *providers.Disconnected, the next Connect returns that session.
func StaleSessionTTS(p providers.TTS) providers.TTS {
	return &staleConnector[providers.TTSSession, providers.TTSEvent]{connector: p, kind: ttsSessions()}
}
