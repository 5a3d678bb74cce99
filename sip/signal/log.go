package signal

import (
	"context"
	"github.com/emiago/sipgo/sip"
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

// init lifts sipgo's UDP write bound. sipgo refuses to write any UDP
// message over 1300 bytes (UDPMTUSize - 200), responses too, and the
// refusal is silent: the 200 to an INVITE that came through a few proxies
// (its Vias and Record-Routes echoed) was never sent, and the call died at
// the ACK timeout. RFC 3261 18.1.1 moves large requests to TCP; a response
// goes back on the request's transport (18.2.2), fragmented by IP when it
// must. The bound becomes the UDP datagram's. It is written once, before
// any goroutine of this package runs.
func init() { sip.UDPMTUSize = 65507 + 200 }
