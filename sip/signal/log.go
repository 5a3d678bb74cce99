package signal

import (
	"context"
	"log/slog"

	"github.com/brisvox/brisvox/sip/validate"
	"github.com/rs/zerolog"
)

// sipgoLogHandler is the slog handler sipgo logs through. sipgo logs
// whole messages and headers; sip/validate's handler keeps none of them.
// sipgo drops a message it cannot parse with no other trace than its
// "failed to parse" line: drop counts it (cause "unparseable"), whatever
// the log level.
func sipgoLogHandler(log zerolog.Logger, drop func(cause string)) slog.Handler {
	return countingHandler{Handler: validate.NewSlogHandler(log), drop: drop}
}

// countingHandler counts sipgo's parse failures on their way to the
// privacy handler.
type countingHandler struct {
	slog.Handler
	drop func(cause string)
}

// sipgoParseFailure is sipgo's message for a datagram or stream chunk it
// could not parse (transport_udp.go, transport_tcp.go).
const sipgoParseFailure = "failed to parse"

// Enabled is always true for errors, so a parse failure is counted even
// when the log would not show it.
func (h countingHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelError || h.Handler.Enabled(ctx, l)
}

// Handle counts a parse failure, then logs through the privacy handler
// (which writes nothing below its level).
func (h countingHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == sipgoParseFailure {
		h.drop("unparseable")
	}
	if !h.Handler.Enabled(ctx, r.Level) {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

// WithAttrs keeps the counting.
func (h countingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return countingHandler{Handler: h.Handler.WithAttrs(attrs), drop: h.drop}
}

// WithGroup keeps the counting.
func (h countingHandler) WithGroup(name string) slog.Handler {
	return countingHandler{Handler: h.Handler.WithGroup(name), drop: h.drop}
}
