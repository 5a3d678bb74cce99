package pcmws

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/brisvox/brisvox/media/conn"
	"github.com/rs/zerolog"
)

// Defaults of the zero Config fields.
const (
	// DefaultRate is the call's rate when the URL gives none.
	DefaultRate = 16000
	// DefaultMaxMessageBytes bounds one inbound message: 64 KiB is
	// 0.68 s of 48 kHz audio.
	DefaultMaxMessageBytes = 64 << 10
	// DefaultIdleTimeout: clients stream audio for the whole call,
	// silence included; 10 s without any message means the client is
	// gone.
	DefaultIdleTimeout = 10 * time.Second
	// DefaultWriteTimeout bounds one websocket write.
	DefaultWriteTimeout = 5 * time.Second
	// DefaultInQueue: 50 frames, 1 s of the caller's audio.
	DefaultInQueue = 50
	// DefaultOutQueue: 100 messages, 2 s of bot audio.
	DefaultOutQueue = 100
	// DefaultMaxPendingMarks bounds the marks waiting for their echo.
	DefaultMaxPendingMarks = 64
	// DefaultMaxBadMessages is the run of bad messages that ends a call.
	DefaultMaxBadMessages = 50
	// DefaultPingInterval and DefaultPongTimeout: a client that answers
	// no ping is taken for gone (or, when its messages keep coming, for
	// one that stopped reading) at most 20 s after its last pong.
	DefaultPingInterval = 10 * time.Second
	DefaultPongTimeout  = 10 * time.Second
)

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

	// MaxMessageBytes bounds one inbound message (DefaultMaxMessageBytes);
	// a longer one is skipped and counted, one over 8 times the bound
	// ends the call.
	MaxMessageBytes int
	// IdleTimeout bounds the time without any inbound message; negative:
	// no bound (for clients that send audio only while someone speaks).
	IdleTimeout time.Duration
	// WriteTimeout bounds one websocket write.
	WriteTimeout time.Duration
	// InQueue is how many 20 ms frames of the caller wait for ReadFrame
	// before the oldest is dropped.
	InQueue int
	// OutQueue is how many outbound messages may wait for the socket.
	OutQueue int
	// MaxPendingMarks bounds the marks waiting for their echo.
	MaxPendingMarks int
	// MaxBadMessages is the run of bad messages (odd-length audio, bad
	// JSON, oversized) after which the call is closed.
	MaxBadMessages int
	// PingInterval is the time between websocket pings (negative: no
	// pings); PongTimeout the wait for each pong. See the package doc.
	PingInterval, PongTimeout time.Duration
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
	if c.MaxMessageBytes < 0 || (c.MaxMessageBytes > 0 && c.MaxMessageBytes < 4096) {
		return fmt.Errorf("%w: MaxMessageBytes must be 0 (default) or at least 4096", ErrInvalidConfig)
	}
	if c.WriteTimeout < 0 {
		return fmt.Errorf("%w: WriteTimeout must not be negative", ErrInvalidConfig)
	}
	if c.InQueue < 0 || c.OutQueue < 0 || c.MaxPendingMarks < 0 || c.MaxBadMessages < 0 {
		return fmt.Errorf("%w: sizes must not be negative", ErrInvalidConfig)
	}
	if c.OutQueue == 1 {
		return fmt.Errorf("%w: OutQueue must leave room for a clear", ErrInvalidConfig)
	}
	if c.PongTimeout < 0 {
		return fmt.Errorf("%w: PongTimeout must not be negative", ErrInvalidConfig)
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
	setInt := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	setDur := func(p *time.Duration, v time.Duration) {
		if *p == 0 {
			*p = v
		}
	}
	setInt(&c.MaxMessageBytes, DefaultMaxMessageBytes)
	setInt(&c.InQueue, DefaultInQueue)
	setInt(&c.OutQueue, DefaultOutQueue)
	setInt(&c.MaxPendingMarks, DefaultMaxPendingMarks)
	setInt(&c.MaxBadMessages, DefaultMaxBadMessages)
	setDur(&c.IdleTimeout, DefaultIdleTimeout)
	setDur(&c.WriteTimeout, DefaultWriteTimeout)
	setDur(&c.PingInterval, DefaultPingInterval)
	setDur(&c.PongTimeout, DefaultPongTimeout)
	if c.IdleTimeout < 0 {
		c.IdleTimeout = 0
	}
	if c.PingInterval < 0 {
		c.PingInterval = 0
	}
	return c
}
