package webrtctest

import (
	"github.com/pion/logging"
	"github.com/rs/zerolog"
)

// loggers adapts zerolog to pion's LoggerFactory (as media/webrtc does).
type loggers struct{ log zerolog.Logger }

func (f loggers) NewLogger(scope string) logging.LeveledLogger {
	return logger{log: f.log.With().Str("pion", scope).Str("side", "caller").Logger()}
}

type logger struct{ log zerolog.Logger }

func (l logger) Trace(msg string)                  { l.log.Trace().Msg(msg) }
func (l logger) Tracef(format string, args ...any) { l.log.Trace().Msgf(format, args...) }
func (l logger) Debug(msg string)                  { l.log.Debug().Msg(msg) }
func (l logger) Debugf(format string, args ...any) { l.log.Debug().Msgf(format, args...) }
func (l logger) Info(msg string)                   { l.log.Debug().Msg(msg) }
func (l logger) Infof(format string, args ...any)  { l.log.Debug().Msgf(format, args...) }
func (l logger) Warn(msg string)                   { l.log.Warn().Msg(msg) }
func (l logger) Warnf(format string, args ...any)  { l.log.Warn().Msgf(format, args...) }
func (l logger) Error(msg string)                  { l.log.Error().Msg(msg) }
func (l logger) Errorf(format string, args ...any) { l.log.Error().Msgf(format, args...) }
