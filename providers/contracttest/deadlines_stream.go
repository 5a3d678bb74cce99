package contracttest

import (
	"context"
	"time"

	"github.com/brisvox/brisvox/providers"
)

// connectWithin calls connect under d.Connect as WithDeadlines does for
// the LLM: the returned context lives as long as the session (cancel ends
// it); a connect that outlasts the deadline fails with *providers.Timeout.
func connectWithin[S any](ctx context.Context, limit time.Duration, connect func(context.Context) (S, error), closeS func(S)) (S, context.Context, context.CancelFunc, error) {
	sctx, cancel := context.WithCancel(ctx)
	var t *time.Timer
	if limit > 0 {
		t = time.AfterFunc(limit, cancel)
	}
	s, err := connect(sctx)
	var zero S
	if t != nil && !t.Stop() && ctx.Err() == nil {
		if err == nil && any(s) != nil {
			closeS(s)
		}
		cancel()
		return zero, nil, nil, &providers.Timeout{Op: "connect"}
	}
	if err != nil {
		cancel()
		return zero, nil, nil, err
	}
	return s, sctx, cancel, nil
}

// warmWithin calls warm under the connect deadline.
func warmWithin(ctx context.Context, limit time.Duration, warm func(context.Context) error) error {
	if limit <= 0 {
		return warm(ctx)
	}
	wctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	err := warm(wctx)
	if err != nil && ctx.Err() == nil && wctx.Err() != nil {
		return &providers.Timeout{Op: "warm"}
	}
	return err
}

// STTWithDeadlines wraps p so that it enforces d as an STT adapter does,
// the reference behaviour of the STT timeout checks: a Connect (or Warm)
// that has not returned after d.Connect fails with *providers.Timeout;
// once audio or a Finalize was sent and no event came since, the first
// event must come within d.FirstEvent and any later one within d.Idle of
// the first such input after the last event, or the session ends with an
// event carrying *providers.Timeout. (Every input counts as owed an
// answer: fine for the suite, which sends speech only; an adapter for a
// service that says nothing in silence arms on speech only, or probes.)
// Each session runs one relay goroutine, stopped by Close or the end of
// the inner session.
func STTWithDeadlines(p providers.STT, d Deadlines) (providers.STT, error) {
	if err := checkArgs(p == nil, "provider", d); err != nil {
		return nil, err
	}
	return &deadlineSTT{p: p, d: d}, nil
}

type deadlineSTT struct {
	p providers.STT
	d Deadlines
}

var _ providers.STT = (*deadlineSTT)(nil)

func (l *deadlineSTT) Warm(ctx context.Context) error { return warmWithin(ctx, l.d.Connect, l.p.Warm) }

func (l *deadlineSTT) Connect(ctx context.Context) (providers.STTSession, error) {
	s, sctx, cancel, err := connectWithin(ctx, l.d.Connect, l.p.Connect, func(s providers.STTSession) { _ = s.Close() })
	if err != nil {
		return nil, err
	}
	w := newWatchdog(l.d, s.Events(), func() { _ = s.Close() }, sctx, cancel,
		func(providers.STTEvent) (bool, bool) { return true, false },
		func(op string) providers.STTEvent { return providers.STTEvent{Err: &providers.Timeout{Op: op}} })
	return &deadlineSTTSession{s: s, w: w}, nil
}

type deadlineSTTSession struct {
	s providers.STTSession
	w *watchdog[providers.STTEvent]
}

var _ providers.STTSession = (*deadlineSTTSession)(nil)

func (s *deadlineSTTSession) SendAudio(pcm []int16) error {
	if err := s.s.SendAudio(pcm); err != nil {
		return err
	}
	s.w.owe(nil)
	return nil
}

func (s *deadlineSTTSession) Finalize() error {
	if err := s.s.Finalize(); err != nil {
		return err
	}
	s.w.owe(nil)
	return nil
}

func (s *deadlineSTTSession) Events() <-chan providers.STTEvent { return s.w.out }

func (s *deadlineSTTSession) Close() error {
	s.w.close()
	return nil
}

// TTSWithDeadlines wraps p so that it enforces d as a TTS adapter does, the
// reference behaviour of the TTS timeout checks: a Connect (or Warm) that
// has not returned after d.Connect fails with *providers.Timeout; while a
// context is open (pushed or flushed, not yet Flushed or acknowledged) or
// a Cancel is unacknowledged, the first event must come within
// d.FirstEvent and every later one within d.Idle of the last, or the
// session ends with a TTSError event carrying *providers.Timeout. Each
// session runs one relay goroutine, stopped by Close or the end of the
// inner session.
func TTSWithDeadlines(p providers.TTS, d Deadlines) (providers.TTS, error) {
	if err := checkArgs(p == nil, "provider", d); err != nil {
		return nil, err
	}
	return &deadlineTTS{p: p, d: d}, nil
}

type deadlineTTS struct {
	p providers.TTS
	d Deadlines
	// flushOnly: a Push owes nothing (FlushOwesOnly).
	flushOnly bool
}

var _ providers.TTS = (*deadlineTTS)(nil)

func (l *deadlineTTS) Warm(ctx context.Context) error { return warmWithin(ctx, l.d.Connect, l.p.Warm) }

func (l *deadlineTTS) Connect(ctx context.Context) (providers.TTSSession, error) {
	s, sctx, cancel, err := connectWithin(ctx, l.d.Connect, l.p.Connect, func(s providers.TTSSession) { _ = s.Close() })
	if err != nil {
		return nil, err
	}
	ds := &deadlineTTSSession{s: s, flushOnly: l.flushOnly, open: map[string]bool{}, acks: map[string]int{}, cancelled: map[string]bool{}}
	ds.w = newWatchdog(l.d, s.Events(), func() { _ = s.Close() }, sctx, cancel, ds.owesAfterLocked,
		func(op string) providers.TTSEvent {
			return providers.TTSEvent{Kind: providers.TTSError, Err: &providers.Timeout{Op: op}}
		})
	return ds, nil
}

// deadlineTTSSession tracks what the session owes (open contexts and
// unacknowledged cancels) and the cancelled contexts, guarded by the
// watchdog's lock. The relay is a buffer of its own between the service
// and the caller, so it drops what a cancelled context still had in it,
// as an adapter must: the caller is owed at most a couple of events of a
// cancelled context, not a relay's worth.
type deadlineTTSSession struct {
	s         providers.TTSSession
	flushOnly bool
	w         *watchdog[providers.TTSEvent]
	open      map[string]bool
	acks      map[string]int
	cancelled map[string]bool
}

var _ providers.TTSSession = (*deadlineTTSSession)(nil)

func (s *deadlineTTSSession) owesAfterLocked(ev providers.TTSEvent) (keep, owes bool) {
	keep = ev.Kind == providers.TTSCancelled || ev.Kind == providers.TTSError || !s.cancelled[ev.ContextID]
	switch ev.Kind {
	case providers.TTSFlushed:
		delete(s.open, ev.ContextID)
	case providers.TTSCancelled:
		delete(s.open, ev.ContextID)
		if s.acks[ev.ContextID]--; s.acks[ev.ContextID] <= 0 {
			delete(s.acks, ev.ContextID)
		}
	}
	return keep, len(s.open) > 0 || len(s.acks) > 0
}

func (s *deadlineTTSSession) Push(contextID, text string) error {
	if err := s.s.Push(contextID, text); err != nil {
		return err
	}
	if s.flushOnly {
		return nil
	}
	s.w.owe(func() { s.open[contextID] = true })
	return nil
}

func (s *deadlineTTSSession) Flush(contextID string) error {
	if err := s.s.Flush(contextID); err != nil {
		return err
	}
	s.w.owe(func() { s.open[contextID] = true })
	return nil
}

func (s *deadlineTTSSession) Cancel(contextID string) error {
	if err := s.s.Cancel(contextID); err != nil {
		return err
	}
	s.w.owe(func() { s.acks[contextID]++; s.cancelled[contextID] = true })
	return nil
}

func (s *deadlineTTSSession) Events() <-chan providers.TTSEvent { return s.w.out }

func (s *deadlineTTSSession) Close() error {
	s.w.close()
	return nil
}
