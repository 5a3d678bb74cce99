package pcmws

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/brisvox/brisvox/media/carrier/internal/wscall"
	"github.com/brisvox/brisvox/media/conn"
	"github.com/rs/zerolog"
)

// Defaults of the zero Config fields: the call's Limits take the
// defaults every websocket carrier shares (media/carrier/internal/wscall).
const (
	// DefaultRate is the call's rate when the URL gives none.
	DefaultRate = 16000
	// DefaultMaxMessageBytes bounds one inbound message: 64 KiB is
	// 0.68 s of 48 kHz audio.
	DefaultMaxMessageBytes = wscall.DefaultMaxMessageBytes
	// DefaultIdleTimeout: clients stream audio for the whole call,
	// silence included; 10 s without any message means the client is
	// gone.
	DefaultIdleTimeout = wscall.DefaultIdleTimeout
	// DefaultWriteTimeout bounds one websocket write.
	DefaultWriteTimeout = wscall.DefaultWriteTimeout
	// DefaultInQueue: 50 frames, 1 s of the caller's audio.
	DefaultInQueue = wscall.DefaultInQueue
	// DefaultOutQueue: 100 messages, 2 s of bot audio.
	DefaultOutQueue = wscall.DefaultOutQueue
	// DefaultMaxPendingMarks bounds the marks waiting for their echo.
	DefaultMaxPendingMarks = wscall.DefaultMaxPendingMarks
	// DefaultMaxBadMessages is the run of bad messages that ends a call.
	DefaultMaxBadMessages = wscall.DefaultMaxBadMessages
	// DefaultPingInterval and DefaultPongTimeout: a client that answers
	// no ping is taken for gone (or, when its messages keep coming, for
	// one that stopped reading) at most 20 s after its last pong.
	DefaultPingInterval = wscall.DefaultPingInterval
	DefaultPongTimeout  = wscall.DefaultPongTimeout
)

// minMessageBytes is the smallest MaxMessageBytes.
const minMessageBytes = 4096

// Limits are the bounds of a call that every websocket carrier has
// (MaxMessageBytes at least 4096 here; a negative IdleTimeout suits
// clients that send audio only while someone speaks; a bad message is
// odd-length audio, bad JSON or oversized).
type Limits = wscall.Limits

// Config sets up a Handler. Only OnCall is required.
type Config struct {
	// OnCall receives each call once the websocket is open. It must only
	// hand the call on (a channel send, a message): the call's reader
	// waits for it.
	OnCall func(*Call)
	// Admit, when set, is asked before the upgrade; an error refuses the
	// request with HTTP 503 (the server is full or shutting down).
	Admit conn.Admitter
	// Logger gets one line per call start and end (the zero value logs
	// nothing). Lines carry our call id only.
	Logger zerolog.Logger

	// Limits bound the call: message size, queues, the bad-message run,
	// the idle, write and ping bounds. See the package doc.
	Limits
	// AllowedOrigins are the origins ("https://host[:port]") of the web
	// pages whose browsers may open a call. A browser sends its page's
	// Origin; a request from any other origin than the server's own is
	// refused with 403. Clients that are not browsers send no Origin and
	// are not affected.
	AllowedOrigins []string
}

// Validate checks the config; zero fields mean the defaults. The error
// wraps ErrInvalidConfig.
func (c Config) Validate() error {
	if c.OnCall == nil {
		return fmt.Errorf("%w: OnCall is required", ErrInvalidConfig)
	}
	if err := c.Limits.Validate(ErrInvalidConfig, minMessageBytes); err != nil {
		return err
	}
	for _, o := range c.AllowedOrigins {
		if _, err := parseOrigin(o); err != nil {
			return fmt.Errorf("%w: AllowedOrigins: %w", ErrInvalidConfig, err)
		}
	}
	return nil
}

// parseOrigin reads an origin, "http(s)://host[:port]" and nothing else,
// into its canonical form (lower case).
func parseOrigin(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("%q is not an origin: %w", s, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("%q: an origin's scheme is http or https", s)
	}
	if u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", fmt.Errorf("%q: an origin is scheme://host[:port], with no path", s)
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), nil
}

// withDefaults fills the zero fields.
func (c Config) withDefaults() Config {
	c.Limits = wscall.WithDefaults(c.Limits)
	return c
}
