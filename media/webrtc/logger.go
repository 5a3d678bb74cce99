package webrtc

import (
	"github.com/pion/logging"
	"github.com/rs/zerolog"
)

// pionLoggers adapts zerolog to pion's LoggerFactory: every pion scope
// (ice, dtls, pc, ...) becomes a field of a child logger, which carries the
// call id when the factory was made for a call. Pion's info lines are state
// changes and go out at debug; its warnings and errors keep their level.
type pionLoggers struct{ log zerolog.Logger }

var _ logging.LoggerFactory = pionLoggers{}

// NewLogger returns the logger of one pion scope.
func (f pionLoggers) NewLogger(scope string) logging.LeveledLogger {
	return pionLogger{log: f.log.With().Str("pion", scope).Logger()}
}

type pionLogger struct{ log zerolog.Logger }

var _ logging.LeveledLogger = pionLogger{}

func (l pionLogger) Trace(msg string)                  { l.log.Trace().Msg(msg) }
func (l pionLogger) Tracef(format string, args ...any) { l.log.Trace().Msgf(format, args...) }
func (l pionLogger) Debug(msg string)                  { l.log.Debug().Msg(msg) }
func (l pionLogger) Debugf(format string, args ...any) { l.log.Debug().Msgf(format, args...) }
func (l pionLogger) Info(msg string)                   { l.log.Debug().Msg(msg) }
func (l pionLogger) Infof(format string, args ...any)  { l.log.Debug().Msgf(format, args...) }
func (l pionLogger) Warn(msg string)                   { l.log.Warn().Msg(msg) }
func (l pionLogger) Warnf(format string, args ...any)  { l.log.Warn().Msgf(format, args...) }
func (l pionLogger) Error(msg string)                  { l.log.Error().Msg(msg) }
func (l pionLogger) Errorf(format string, args ...any) { l.log.Error().Msgf(format, args...) }
