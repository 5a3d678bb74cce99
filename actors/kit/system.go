package kit

import (
	"context"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"
)

// System is an actor system with our logging and a dead-letter count, and,
// when made WithWorkers, the Workers its actors' mailboxes run on.
type System struct {
	*actor.ActorSystem
	deadLetters atomic.Uint64
	// lastDeadLetter is when the newest dead letter came (UnixNano).
	lastDeadLetter atomic.Int64
	workers        *Workers
	shutdown       sync.Once
}

// SystemOption configures NewSystem.
type SystemOption func(*systemOptions)

type systemOptions struct {
	workers int
}

// WithWorkers gives the system a pool of at most n long-lived workers
// (Workers) for the actors whose props name SystemWorkers; Shutdown stops
// them and waits for them. n < 1 means DefaultWorkers.
func WithWorkers(n int) SystemOption {
	return func(o *systemOptions) {
		if n < 1 {
			n = DefaultWorkers()
		}
		o.workers = n
	}
}

// DefaultWorkers is the pool size WithWorkers(0) gives: 64 per processor
// (runtime.GOMAXPROCS). A parked worker costs its stack and nothing else;
// the headroom is for Receives that wait on a cgo call or a write, and
// past it a run gets a goroutine of its own (Workers.Overflow).
func DefaultWorkers() int { return 64 * runtime.GOMAXPROCS(0) }

// NewSystem makes an actor system whose own log lines go to log (at warn
// level and above: protoactor logs every recovered panic at info) and that
// counts dead letters, which protoactor only logs, throttled, at debug.
func NewSystem(log zerolog.Logger, opts ...SystemOption) *System {
	var o systemOptions
	for _, opt := range opts {
		opt(&o)
	}
	s := &System{}
	s.ActorSystem = actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(&slogToZerolog{log: log.With().Str("component", "protoactor").Logger()})
	}))
	if o.workers > 0 {
		s.workers = NewWorkers(o.workers)
		s.Extensions.Register(workersExt{w: s.workers})
	}
	s.EventStream.Subscribe(func(m any) {
		if _, ok := m.(*actor.DeadLetterEvent); ok {
			s.deadLetters.Add(1)
			s.lastDeadLetter.Store(time.Now().UnixNano())
		}
	})
	return s
}

// DeadLetters counts messages sent to actors that were gone.
func (s *System) DeadLetters() uint64 { return s.deadLetters.Load() }

// Workers is the system's pool, nil when it was made without WithWorkers.
func (s *System) Workers() *Workers { return s.workers }

// Shutdown shuts protoactor's system down, stops the workers and waits for
// them (Workers.Close), and waits for protoactor's dead-letter throttle:
// the first dead letter of a period starts a goroutine that ends a period
// (Config.DeadLetterThrottleInterval, 1 s) later, so Shutdown returns at
// the earliest that long after the newest dead letter. Stop the actors
// first (a mailbox run after Shutdown gets a goroutine of its own). It may
// be called more than once.
func (s *System) Shutdown() {
	s.shutdown.Do(s.ActorSystem.Shutdown)
	if s.workers != nil {
		s.workers.Close()
	}
	period := s.Config.DeadLetterThrottleInterval + throttleSlack
	for range 3 { // a dead letter while waiting moves the end once more
		last := s.lastDeadLetter.Load()
		if last == 0 {
			return
		}
		wait := time.Until(time.Unix(0, last).Add(period))
		if wait <= 0 {
			return
		}
		time.Sleep(wait)
	}
}

// throttleSlack is how long after its period the throttle's goroutine is
// given to end.
const throttleSlack = 50 * time.Millisecond

// slogToZerolog forwards protoactor's slog records to zerolog.
type slogToZerolog struct {
	log   zerolog.Logger
	attrs []slog.Attr
}

func (h *slogToZerolog) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (h *slogToZerolog) Handle(_ context.Context, r slog.Record) error {
	ev := h.log.WithLevel(zerologLevel(r.Level))
	for _, a := range h.attrs {
		ev = ev.Str(a.Key, a.Value.String())
	}
	r.Attrs(func(a slog.Attr) bool {
		ev = ev.Str(a.Key, a.Value.String())
		return true
	})
	ev.Msg(r.Message)
	return nil
}

func (h *slogToZerolog) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &slogToZerolog{log: h.log, attrs: append(append([]slog.Attr(nil), h.attrs...), attrs...)}
}

func (h *slogToZerolog) WithGroup(string) slog.Handler { return h }

func zerologLevel(l slog.Level) zerolog.Level {
	switch {
	case l >= slog.LevelError:
		return zerolog.ErrorLevel
	case l >= slog.LevelWarn:
		return zerolog.WarnLevel
	case l >= slog.LevelInfo:
		return zerolog.InfoLevel
	}
	return zerolog.DebugLevel
}
