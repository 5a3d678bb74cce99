package signal

import (
	"log/slog"

	"github.com/brisvox/brisvox/sip/validate"
	"github.com/rs/zerolog"
)

// sipgoLogHandler is the slog handler sipgo logs through. sipgo logs
// whole messages and headers; sip/validate's handler keeps none of them.
func sipgoLogHandler(log zerolog.Logger) slog.Handler { return validate.NewSlogHandler(log) }
