package signal

import (
	"log/slog"

	"github.com/rs/zerolog"
)

// sipgoLogHandler is the slog handler sipgo logs through. sipgo logs
// whole messages and headers; nothing of them may reach our log, so it
// discards everything.
func sipgoLogHandler(zerolog.Logger) slog.Handler { return slog.DiscardHandler }
