package twilio

import (
	"fmt"
	"net/url"
	"time"

	"github.com/brisvox/brisvox/media/carrier/internal/wscall"
	"github.com/brisvox/brisvox/media/conn"
	"github.com/rs/zerolog"
)

// Rate is the stream's sample rate both ways (mu-law, 8 kHz, mono).
const Rate = 8000

// Defaults of the zero Config fields: the call's Limits take the
// defaults every websocket carrier shares (media/carrier/internal/wscall),
// which suit Twilio's stream.
const (
	// DefaultMaxMessageBytes bounds one inbound message; a 20 ms media
	// message is about 400 bytes, a start message with custom
	// parameters a few KiB.
	DefaultMaxMessageBytes = wscall.DefaultMaxMessageBytes
	// DefaultStartTimeout: Twilio sends connected and start right after
	// the upgrade.
	DefaultStartTimeout = 5 * time.Second
	// DefaultIdleTimeout: Twilio sends a media message every 20 ms for
	// the whole call, silence included; 10 s without any message means
	// the peer is gone.
	DefaultIdleTimeout = wscall.DefaultIdleTimeout
	// DefaultWriteTimeout bounds one websocket write.
	DefaultWriteTimeout = wscall.DefaultWriteTimeout
	// DefaultInQueue: 50 frames, 1 s of the caller's audio.
	DefaultInQueue = wscall.DefaultInQueue
	// DefaultOutQueue: 100 messages, 2 s of bot audio (the pacer
	// releases it in real time, so the queue is normally near empty).
	DefaultOutQueue = wscall.DefaultOutQueue
	// DefaultMaxPendingMarks bounds the marks waiting for their echo.
	DefaultMaxPendingMarks = wscall.DefaultMaxPendingMarks
	// DefaultMaxBadMessages is the run of bad messages that ends a call.
	DefaultMaxBadMessages = wscall.DefaultMaxBadMessages
	// DefaultPingInterval and DefaultPongTimeout: a stream that answers
	// no ping is taken for gone (or, when its media keeps coming, for a
	// peer that stopped reading) at most 20 s after its last pong.
	DefaultPingInterval = wscall.DefaultPingInterval
	DefaultPongTimeout  = wscall.DefaultPongTimeout
)

// minMessageBytes is the smallest MaxMessageBytes: a start message
// fits.
const minMessageBytes = 1024

// Limits are the bounds of a call that every websocket carrier has
// (MaxMessageBytes at least 1024 here; IdleTimeout counts from the start
// message; a bad message is bad JSON or payload, oversized or binary).
type Limits = wscall.Limits

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

	// Limits bound the call: message size, queues, the bad-message run,
	// the idle, write and ping bounds. See the package doc.
	Limits
	// StartTimeout bounds the wait for the start message.
	StartTimeout time.Duration

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
	if err := c.Limits.Validate(ErrInvalidConfig, minMessageBytes); err != nil {
		return err
	}
	if c.StartTimeout < 0 {
		return fmt.Errorf("%w: StartTimeout must not be negative", ErrInvalidConfig)
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
	c.Limits = wscall.WithDefaults(c.Limits)
	if c.StartTimeout == 0 {
		c.StartTimeout = DefaultStartTimeout
	}
	return c
}
