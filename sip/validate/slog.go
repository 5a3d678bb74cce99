package validate

import (
	"context"
	"log/slog"
	"sync/atomic"

	"github.com/rs/zerolog"
)

// SlogHandler is the slog.Handler sipgo logs through. sipgo puts message
// contents in attributes: "data" (a whole unparseable datagram, at
// ERROR), "req" and "res" (start lines: the Request-URI is a phone
// number), "msg" (Request.Short: the URI and the source), "error" (parse
// errors quote header lines), "callid", "raddr", "host", "tx" (keys
// made of branch and host). The handler writes none of them: it keeps
// the level and, when sipgo's message is one of its constant ones, that
// message ("failed to parse"); every attribute, group and With is
// dropped and counted.
type SlogHandler struct {
	log     zerolog.Logger
	pending int // attributes given to WithAttrs, dropped at each Handle
	dropped *atomic.Uint64
}

var _ slog.Handler = (*SlogHandler)(nil)

// NewSlogHandler returns the privacy-safe handler for sipgo's logger
// (slog.New(NewSlogHandler(log))): lines go to log with component=sipgo.
func NewSlogHandler(log zerolog.Logger) slog.Handler {
	return &SlogHandler{
		log:     log.With().Str("component", "sipgo").Logger(),
		dropped: new(atomic.Uint64),
	}
}

// Dropped is the number of attributes dropped so far, by this handler
// and every handler derived from it with WithAttrs or WithGroup.
func (h *SlogHandler) Dropped() uint64 { return h.dropped.Load() }

// Enabled follows the zerolog logger's level and the global level.
func (h *SlogHandler) Enabled(_ context.Context, l slog.Level) bool {
	zl := zerologLevel(l)
	return zl >= h.log.GetLevel() && zl >= zerolog.GlobalLevel()
}

// Handle writes the level and a constant message, and the count of the
// attributes it dropped.
func (h *SlogHandler) Handle(_ context.Context, r slog.Record) error {
	n := r.NumAttrs() + h.pending
	h.dropped.Add(uint64(n))
	h.log.WithLevel(zerologLevel(r.Level)).Int("dropped_attrs", n).Msg(constantMessage(r.Message))
	return nil
}

// WithAttrs drops attrs (they are counted at each line, as sipgo
// attaches them to every line of a logger made With them).
func (h *SlogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.pending += len(attrs)
	return &c
}

// WithGroup drops the group's name.
func (h *SlogHandler) WithGroup(string) slog.Handler {
	c := *h
	return &c
}

func zerologLevel(l slog.Level) zerolog.Level {
	switch {
	case l < slog.LevelInfo:
		return zerolog.DebugLevel
	case l < slog.LevelWarn:
		return zerolog.InfoLevel
	case l < slog.LevelError:
		return zerolog.WarnLevel
	}
	return zerolog.ErrorLevel
}

// withheld replaces a message that is not one of sipgo's constants
// (sipgo formats some messages, e.g. with a remote address).
const withheld = "sipgo log line (message withheld)"

// constantMessage returns m if it is one of the constant messages of
// sipgo v1.7.3 (grep of its source), else withheld.
func constantMessage(m string) string {
	switch m {
	case "failed to parse",
		"Read filter error",
		"Read connection error",
		"Read error",
		"Read connection closed",
		"Read listener connection stopped",
		"connection was closed",
		"connection pool not clean cleanup",
		"Keep alive CRLF received",
		"begin listening",
		"begin listening on",
		"New connection",
		"Dialing new connection",
		"Fail to accept conenction",
		"Failed to accept connection",
		"Fail to upgrade",
		"Got TCP error",
		"Failed to close listener",
		"Creating connection",
		"Creating server connection",
		"Layer is closing",
		"Layer closed with error",
		"unsupported message, skip it",
		"Server tx failed to handle request",
		"Failed to send stateless 400 for malformed request",
		"Client tx failed to handle response",
		"Non existing client tx was removed",
		"Non existing server tx was removed",
		"transaction layer closed",
		"Unhandled sip request. OnRequest handler not added",
		"TransactionLayer: Unhandled sip response. Possible retransmissions. Set UnhandledResponseHandler",
		"SIP request handler not found",
		"respond '405 Method Not Allowed' failed",
		"Server transaction initialized",
		"Server transaction terminating",
		"Server transaction retained for timer termination",
		"Server transaction destroyed",
		"Closing connection returned error",
		"send '100 Trying' response failed",
		"Changing transaction state",
		"Transport error. Transaction will terminate",
		"Timed out. Transaction will terminate",
		"Passing 487 on CANCEL",
		"fail to pass response",
		"ACK missed",
		"Missing Content-Length for reliable transport",
		"Lazy header parsing failed",
		"UDP reference decrement",
		"UDP reference doing hard close":
		return m
	}
	return withheld
}
