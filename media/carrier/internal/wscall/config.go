package wscall

import (
	"fmt"
	"time"
)

// Defaults of the zero Limits fields, the same for every carrier.
const (
	// DefaultMaxMessageBytes bounds one inbound message: 64 KiB.
	DefaultMaxMessageBytes = 64 << 10
	// DefaultIdleTimeout: carriers stream audio for the whole call,
	// silence included; 10 s without any message means the peer is gone.
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
	// DefaultPingInterval and DefaultPongTimeout: a peer that answers no
	// ping is taken for gone (or, when its messages keep coming, for one
	// that stopped reading) at most 20 s after its last pong.
	DefaultPingInterval = 10 * time.Second
	DefaultPongTimeout  = 10 * time.Second
)

// Limits are the bounds of one websocket call that every carrier has:
// the carriers' Config embeds them (as their Limits alias) and adds its
// own fields. Zero fields take the defaults (WithDefaults).
type Limits struct {
	// MaxMessageBytes bounds one inbound message (DefaultMaxMessageBytes);
	// a longer one is read to its end (up to HardLimitFactor times the
	// bound), skipped and counted; a longer one still ends the call.
	MaxMessageBytes int
	// IdleTimeout bounds the time without any inbound message once the
	// call is live (ErrSilentInput); negative: no bound.
	IdleTimeout time.Duration
	// WriteTimeout bounds one websocket write: a peer that stops reading
	// is cut (ErrStoppedReading).
	WriteTimeout time.Duration
	// InQueue is how many 20 ms frames of the caller wait for ReadFrame
	// before the oldest is dropped.
	InQueue int
	// OutQueue is how many outbound messages may wait for the socket.
	OutQueue int
	// MaxPendingMarks bounds the marks waiting for their echo.
	MaxPendingMarks int
	// MaxBadMessages is the run of bad messages (what is bad is the
	// protocol's: bad JSON or payload, oversized, a wrong frame type)
	// after which the call is closed (StatusPolicyViolation).
	MaxBadMessages int
	// PingInterval is the time between websocket pings (negative: no
	// pings); PongTimeout the wait for each pong. See Core for the cause
	// a missing pong is reported as.
	PingInterval, PongTimeout time.Duration
}

// Validate checks the limits; zero fields mean the defaults. A carrier
// calls it from its own Validate: the error wraps invalid, the carrier's
// ErrInvalidConfig, and minMessageBytes is the smallest bound its
// protocol's messages fit in.
func (l Limits) Validate(invalid error, minMessageBytes int) error {
	switch {
	case l.MaxMessageBytes < 0 || (l.MaxMessageBytes > 0 && l.MaxMessageBytes < minMessageBytes):
		return fmt.Errorf("%w: MaxMessageBytes must be 0 (default) or at least %d", invalid, minMessageBytes)
	case l.WriteTimeout < 0:
		return fmt.Errorf("%w: WriteTimeout must not be negative", invalid)
	case l.InQueue < 0 || l.OutQueue < 0 || l.MaxPendingMarks < 0 || l.MaxBadMessages < 0:
		return fmt.Errorf("%w: sizes must not be negative", invalid)
	case l.OutQueue == 1:
		return fmt.Errorf("%w: OutQueue must leave room for a clear", invalid)
	case l.PongTimeout < 0:
		return fmt.Errorf("%w: PongTimeout must not be negative", invalid)
	}
	return nil
}

// WithDefaults fills the zero fields of l and turns a negative
// IdleTimeout or PingInterval into 0 (no bound, no pings): the form
// Config wants. (A function, not a method: a method would be promoted
// into every carrier's Config.)
func WithDefaults(l Limits) Limits {
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
	setInt(&l.MaxMessageBytes, DefaultMaxMessageBytes)
	setInt(&l.InQueue, DefaultInQueue)
	setInt(&l.OutQueue, DefaultOutQueue)
	setInt(&l.MaxPendingMarks, DefaultMaxPendingMarks)
	setInt(&l.MaxBadMessages, DefaultMaxBadMessages)
	setDur(&l.IdleTimeout, DefaultIdleTimeout)
	setDur(&l.WriteTimeout, DefaultWriteTimeout)
	setDur(&l.PingInterval, DefaultPingInterval)
	setDur(&l.PongTimeout, DefaultPongTimeout)
	if l.IdleTimeout < 0 {
		l.IdleTimeout = 0
	}
	if l.PingInterval < 0 {
		l.PingInterval = 0
	}
	return l
}

// Config sizes one call's core. The protocol packages fill it from their
// validated Config: ID and Rate, and their Limits after WithDefaults (so
// every field is set; IdleTimeout 0 is no idle bound, PingInterval 0 no
// pings).
type Config struct {
	// ID is our id of the call (logged; it identifies no phone call).
	ID string
	// Rate is the caller's sample rate.
	Rate int
	Limits
}
