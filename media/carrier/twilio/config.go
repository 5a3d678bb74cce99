package twilio

import (
	"fmt"
	"net/url"
	"time"

	"github.com/brisvox/brisvox/media/conn"
	"github.com/rs/zerolog"
)

// Rate is the stream's sample rate both ways (mu-law, 8 kHz, mono).
const Rate = 8000

// Defaults of the zero Config fields.
const (
	// DefaultMaxMessageBytes bounds one inbound message; a 20 ms media
	// message is about 400 bytes, a start message with custom
	// parameters a few KiB.
	DefaultMaxMessageBytes = 64 << 10
	// DefaultStartTimeout: Twilio sends connected and start right after
	// the upgrade.
	DefaultStartTimeout = 5 * time.Second
	// DefaultIdleTimeout: Twilio sends a media message every 20 ms for
	// the whole call, silence included; 10 s without any message means
	// the peer is gone.
	DefaultIdleTimeout = 10 * time.Second
	// DefaultWriteTimeout bounds one websocket write.
	DefaultWriteTimeout = 5 * time.Second
	// DefaultInQueue: 50 frames, 1 s of the caller's audio.
	DefaultInQueue = 50
	// DefaultOutQueue: 100 messages, 2 s of bot audio (the pacer
	// releases it in real time, so the queue is normally near empty).
	DefaultOutQueue = 100
	// DefaultMaxPendingMarks bounds the marks waiting for their echo.
	DefaultMaxPendingMarks = 64
	// DefaultMaxBadMessages is the run of bad messages that ends a call.
	DefaultMaxBadMessages = 50
	// DefaultPingInterval and DefaultPongTimeout: a stream that answers
	// no ping is taken for gone (or, when its media keeps coming, for a
	// peer that stopped reading) at most 20 s after its last pong.
	DefaultPingInterval = 10 * time.Second
	DefaultPongTimeout  = 10 * time.Second
)

// Config sets up a Handler. Only OnCall is required.
type Config struct {
	// OnCall receives each call once its start message arrived. It must
	// only hand the call on (a channel send, a message): the stream's
	// reader waits for it.
	OnCall func(*Call)
	// Admit, when set, is asked before the upgrade; an error refuses the
	// request with HTTP 503 (the server is full or shutting down).
	Admit conn.Admitter
	// Logger gets one line per call start and end (the zero value logs
	// nothing). Lines carry our call id, never Twilio's SIDs.
	Logger zerolog.Logger

	// MaxMessageBytes bounds one inbound message (DefaultMaxMessageBytes);
	// a longer one is skipped and counted, one over 8 times the bound
	// ends the call.
	MaxMessageBytes int
	// StartTimeout bounds the wait for the start message.
	StartTimeout time.Duration
	// IdleTimeout bounds the time without any inbound message after the
	// start; negative: no bound.
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
	// MaxBadMessages is the run of bad messages (bad JSON or payload,
	// oversized, binary) after which the call is closed.
	MaxBadMessages int
	// PingInterval is the time between websocket pings (negative: no
	// pings); PongTimeout the wait for each pong. See the package doc.
	PingInterval, PongTimeout time.Duration

	// AuthToken is the Twilio account's auth token (the value; the
	// caller reads it from the environment). When set, an upgrade
	// request whose X-Twilio-Signature is missing or is not the
	// signature of its URL is refused with 403 before admission. Empty:
	// no check.
	AuthToken string
	// PublicURL is the wss:// URL (scheme, host, optional port and path
	// prefix) Twilio connects to when it differs from what reaches the
	// handler, behind a proxy: the signed URL is PublicURL followed by
	// the request's path and query. Empty: wss:// and the request's Host.
	PublicURL string
}

// Validate checks the config; zero fields mean the defaults. The error
// wraps ErrInvalidConfig.
func (c Config) Validate() error {
	if c.OnCall == nil {
		return fmt.Errorf("%w: OnCall is required", ErrInvalidConfig)
	}
	if c.MaxMessageBytes < 0 || (c.MaxMessageBytes > 0 && c.MaxMessageBytes < 1024) {
		return fmt.Errorf("%w: MaxMessageBytes must be 0 (default) or at least 1024", ErrInvalidConfig)
	}
	if c.StartTimeout < 0 || c.WriteTimeout < 0 {
		return fmt.Errorf("%w: StartTimeout and WriteTimeout must not be negative", ErrInvalidConfig)
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
	if c.PublicURL != "" {
		u, err := url.Parse(c.PublicURL)
		if err != nil || u.Scheme != "wss" || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return fmt.Errorf("%w: PublicURL must be wss://host[:port][/path], with no query", ErrInvalidConfig)
		}
		if c.AuthToken == "" {
			return fmt.Errorf("%w: PublicURL is only used to check signatures: set AuthToken", ErrInvalidConfig)
		}
	}
	return nil
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
	setDur(&c.StartTimeout, DefaultStartTimeout)
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
