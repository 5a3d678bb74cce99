package kit

import (
	"context"
	"log/slog"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"
)

// System is an actor system with our logging and a dead-letter count.
type System struct {
	*actor.ActorSystem
	deadLetters atomic.Uint64
}

// NewSystem makes an actor system whose own log lines go to log (at warn
// level and above: protoactor logs every recovered panic at info) and that
// counts dead letters, which protoactor only logs, throttled, at debug.
func NewSystem(log zerolog.Logger) *System {
	s := &System{}
	s.ActorSystem = actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(&slogToZerolog{log: log.With().Str("component", "protoactor").Logger()})
	}))
	s.EventStream.Subscribe(func(m any) {
		if _, ok := m.(*actor.DeadLetterEvent); ok {
			s.deadLetters.Add(1)
		}
	})
	return s
}

// DeadLetters counts messages sent to actors that were gone.
func (s *System) DeadLetters() uint64 { return s.deadLetters.Load() }

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
