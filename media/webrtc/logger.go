package webrtc

import (
	"sync"
	"time"

	"github.com/pion/logging"
	"github.com/rs/zerolog"
)

// Bounds of pion's warning and error lines per call. Some are written per
// packet ("Discarded message from ..., not a valid remote candidate" for
// each datagram from a foreign address), so a flood of packets would be a
// flood of lines: a call writes a burst of pionLineBurst, then one per
// pionLineEvery; the rest are dropped and counted (pion_lines_dropped).
const (
	pionLineBurst = 20
	pionLineEvery = time.Second
)

// lineBudget is a token bucket of log lines, shared by the pion scopes of
// one call.
type lineBudget struct {
	mu      sync.Mutex
	tokens  int
	last    time.Time
	dropped func()
}

func newLineBudget(dropped func()) *lineBudget {
	return &lineBudget{tokens: pionLineBurst, dropped: dropped}
}

// take reports whether a line may be written now.
func (b *lineBudget) take(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.last.IsZero() {
		b.last = now
	}
	if gained := int(now.Sub(b.last) / pionLineEvery); gained > 0 {
		b.tokens = min(pionLineBurst, b.tokens+gained)
		b.last = b.last.Add(time.Duration(gained) * pionLineEvery)
	}
	if b.tokens == 0 {
		if b.dropped != nil {
			b.dropped()
		}
		return false
	}
	b.tokens--
	return true
}

// pionLoggers adapts zerolog to pion's LoggerFactory: every pion scope
// (ice, dtls, pc, ...) becomes a field of a child logger, which carries the
// call id when the factory was made for a call. Pion's info lines are state
// changes and go out at debug; its warnings and errors keep their level,
// within the call's budget.
type pionLoggers struct {
	log    zerolog.Logger
	budget *lineBudget
}

var _ logging.LoggerFactory = pionLoggers{}

// NewLogger returns the logger of one pion scope.
func (f pionLoggers) NewLogger(scope string) logging.LeveledLogger {
	return pionLogger{log: f.log.With().Str("pion", scope).Logger(), budget: f.budget}
}

type pionLogger struct {
	log    zerolog.Logger
	budget *lineBudget
}

var _ logging.LeveledLogger = pionLogger{}

// loud is the event of a warning or error line, nil when over budget.
func (l pionLogger) loud(level zerolog.Level) *zerolog.Event {
	if l.log.GetLevel() > level || (l.budget != nil && !l.budget.take(time.Now())) {
		return nil
	}
	return l.log.WithLevel(level)
}

func (l pionLogger) Trace(msg string)                  { l.log.Trace().Msg(msg) }
func (l pionLogger) Tracef(format string, args ...any) { l.log.Trace().Msgf(format, args...) }
func (l pionLogger) Debug(msg string)                  { l.log.Debug().Msg(msg) }
func (l pionLogger) Debugf(format string, args ...any) { l.log.Debug().Msgf(format, args...) }
func (l pionLogger) Info(msg string)                   { l.log.Debug().Msg(msg) }
func (l pionLogger) Infof(format string, args ...any)  { l.log.Debug().Msgf(format, args...) }
func (l pionLogger) Warn(msg string)                   { l.loud(zerolog.WarnLevel).Msg(msg) }
func (l pionLogger) Warnf(format string, args ...any) {
	l.loud(zerolog.WarnLevel).Msgf(format, args...)
}
func (l pionLogger) Error(msg string) { l.loud(zerolog.ErrorLevel).Msg(msg) }
func (l pionLogger) Errorf(format string, args ...any) {
	l.loud(zerolog.ErrorLevel).Msgf(format, args...)
}
