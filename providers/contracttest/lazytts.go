package contracttest

import (
	"context"
	"sync"

	"github.com/brisvox/brisvox/providers"
)

// ConnectsOnFirstPush is a conformant adapter shape that opens nothing at
// Connect, as a request-scoped TTS (one HTTP request per text) does:
// Connect returns at once, and p is connected on the session's first
// Push, Flush or Cancel, which are queued meanwhile and replayed in order.
// A failed connect (a refusal, a Timeout of p's deadline) is the session's
// error event. Its harness must say FaultsAtConnect false
// (OpensNothingAtConnect); under the default the error_mapping and
// timeout/connect_stalled checks fail, as they should. One goroutine per
// session connects and relays, stopped by Close or the context.
func ConnectsOnFirstPush(p providers.TTS) providers.TTS { return &lazyTTS{p} }

type lazyTTS struct{ providers.TTS }

func (l *lazyTTS) Connect(ctx context.Context) (providers.TTSSession, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancel(ctx)
	return &lazySession{
		connect: func() (providers.TTSSession, error) { return l.TTS.Connect(sctx) },
		ended:   sctx.Done(),
		cancel:  cancel,
		out:     make(chan providers.TTSEvent, relayBuffer),
		exited:  make(chan struct{}),
	}, nil
}

// lazySession connects on first use; its fields below mu are guarded by it.
type lazySession struct {
	connect func() (providers.TTSSession, error)
	ended   <-chan struct{}
	cancel  context.CancelFunc
	out     chan providers.TTSEvent
	exited  chan struct{} // closed when the goroutine is done (or never ran)
	once    sync.Once

	mu      sync.Mutex
	started bool
	closed  bool
	inner   providers.TTSSession
	queued  []func(providers.TTSSession) error
}

var _ providers.TTSSession = (*lazySession)(nil)

// do runs op on the inner session, or queues it and starts the connect.
func (s *lazySession) do(op func(providers.TTSSession) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return providers.ErrClosed
	}
	if s.inner != nil {
		return op(s.inner)
	}
	s.queued = append(s.queued, op)
	if !s.started {
		s.started = true
		go s.run()
	}
	return nil
}

// run connects, replays what was queued and relays the events.
func (s *lazySession) run() {
	defer close(s.exited)
	defer close(s.out)
	inner, err := s.connect()
	if err != nil {
		select {
		case s.out <- providers.TTSEvent{Kind: providers.TTSError, Err: err}:
		case <-s.ended:
		}
		return
	}
	defer inner.Close()
	s.mu.Lock()
	for _, op := range s.queued {
		if err := op(inner); err != nil {
			s.mu.Unlock()
			select {
			case s.out <- providers.TTSEvent{Kind: providers.TTSError, Err: err}:
			case <-s.ended:
			}
			return
		}
	}
	s.queued, s.inner = nil, inner
	s.mu.Unlock()
	for {
		select {
		case ev, ok := <-inner.Events():
			if !ok {
				return
			}
			select {
			case s.out <- ev:
			case <-s.ended:
				return
			}
		case <-s.ended:
			return
		}
	}
}

func (s *lazySession) Push(id, text string) error {
	return s.do(func(in providers.TTSSession) error { return in.Push(id, text) })
}

func (s *lazySession) Flush(id string) error {
	return s.do(func(in providers.TTSSession) error { return in.Flush(id) })
}

func (s *lazySession) Cancel(id string) error {
	return s.do(func(in providers.TTSSession) error { return in.Cancel(id) })
}

func (s *lazySession) Events() <-chan providers.TTSEvent { return s.out }

// Close ends the session and waits for its goroutine.
func (s *lazySession) Close() error {
	s.once.Do(func() {
		s.mu.Lock()
		s.closed = true
		started := s.started
		s.mu.Unlock()
		s.cancel()
		if !started {
			close(s.out)
			close(s.exited)
		}
	})
	<-s.exited
	return nil
}
