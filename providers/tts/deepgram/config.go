package aura

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Defaults of the zero Config fields.
const (
	DefaultURL       = "wss://api.deepgram.com/v1/speak"
	DefaultAPIKeyEnv = "DEEPGRAM_API_KEY"
	DefaultModel     = "aura-2-thalia-en"
	// DefaultSampleRate: 16 kHz, the engine's rate (the service's own
	// default is 24 kHz).
	DefaultSampleRate     = 16000
	DefaultConnectTimeout = 5 * time.Second
	// DefaultReplyTimeout bounds the wait for a message while one is owed
	// (see Config.ReplyTimeout).
	DefaultReplyTimeout = 10 * time.Second
	// DefaultProbeInterval is the pause between a pong and the next ping
	// while unflushed text is on the server.
	DefaultProbeInterval = 2 * time.Second
	DefaultCloseTimeout  = 2 * time.Second
	// DefaultMaxMessageBytes bounds one inbound message; the service's
	// audio frames are a few KiB.
	DefaultMaxMessageBytes = 512 << 10
	DefaultQueueFrames     = 64
	DefaultEventBuffer     = 64
	// DefaultPendingEvents is how many events may wait for a slow reader
	// of Events before the session stops reading the connection.
	DefaultPendingEvents = 1024
	// DefaultMaxHeldBytes bounds the text held for contexts waiting
	// their turn behind the one on the wire.
	DefaultMaxHeldBytes = 16 << 10
)

// SampleRates are the linear16 rates the service offers.
var sampleRates = []int{8000, 16000, 24000, 32000, 48000}

// FlushPolicy says when the service is asked to speak.
type FlushPolicy int

const (
	// PerTurn flushes once per context, at Flush (the default): the
	// service hears whole sentences. Pushed text owes no answer until
	// then, so the connection is probed with pings meanwhile.
	PerTurn FlushPolicy = iota
	// PerText flushes after every Push: the first audio comes sooner,
	// and every Flush costs one of the service's flushes (it allows 20
	// a minute, then answers with a Warning and no audio).
	PerText
)

// String names the policy.
func (p FlushPolicy) String() string {
	switch p {
	case PerTurn:
		return "per-turn"
	case PerText:
		return "per-text"
	}
	return "FlushPolicy(" + strconv.Itoa(int(p)) + ")"
}

// Config sets up an Adapter. The zero value is usable with the key in
// DEEPGRAM_API_KEY: aura-2-thalia-en, 16 kHz, PerTurn.
type Config struct {
	// URL is the speak endpoint without query (DefaultURL); ws:// for
	// local servers and mocks.
	URL string
	// APIKeyEnv is the NAME of the environment variable holding the key,
	// read once by New (DefaultAPIKeyEnv).
	APIKeyEnv string
	// Model is the voice (model=).
	Model string
	// SampleRate of the PCM16 mono output (sample_rate=; encoding=linear16
	// is always sent): one of 8000, 16000, 24000, 32000, 48000.
	SampleRate int
	// FlushPolicy: PerTurn (default) or PerText.
	FlushPolicy FlushPolicy
	// ConnectTimeout bounds the dial, TLS and websocket handshake.
	ConnectTimeout time.Duration
	// ReplyTimeout bounds the wait for a message while one is owed (a
	// Flush not yet Flushed, a Clear not yet Cleared): from the first
	// message sent after the last one received, and from each message
	// received. It also bounds each ping of the probe.
	ReplyTimeout time.Duration
	// ProbeInterval is the pause after a pong before the next ping while
	// unflushed text is on the server and nothing is owed.
	ProbeInterval time.Duration
	// CloseTimeout bounds Close (the Close message and the close
	// handshake).
	CloseTimeout time.Duration
	// MaxMessageBytes bounds one inbound message.
	MaxMessageBytes int
	// QueueFrames is the capacity of the send queue.
	QueueFrames int
	// EventBuffer is the capacity of the Events channel.
	EventBuffer int
	// PendingEvents is how many events may wait behind a full Events
	// channel before the session stops reading the connection.
	PendingEvents int
	// MaxHeldBytes bounds the text held for contexts that wait for their
	// turn (over the session); a context's held texts go out joined, in
	// one Speak, when it takes the wire.
	MaxHeldBytes int
	// DialContext, for tests and special transports, opens the TCP
	// connection; nil: a net.Dialer.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)

	// noProbe turns the ping probe off: the broken variant of the
	// contract tests (export_test.go), never set otherwise.
	noProbe bool
}

// Validate checks the config; zero fields mean the defaults. The error
// wraps ErrInvalidConfig.
func (c Config) Validate() error {
	if c.URL != "" {
		u, err := url.Parse(c.URL)
		if err != nil || (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
			return fmt.Errorf("%w: URL is not a ws(s) URL", ErrInvalidConfig)
		}
		if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("%w: URL must carry no credentials, query or fragment", ErrInvalidConfig)
		}
	}
	if c.SampleRate != 0 && !slices.Contains(sampleRates, c.SampleRate) {
		return fmt.Errorf("%w: SampleRate %d is not one of %v", ErrInvalidConfig, c.SampleRate, sampleRates)
	}
	if c.FlushPolicy != PerTurn && c.FlushPolicy != PerText {
		return fmt.Errorf("%w: %v", ErrInvalidConfig, c.FlushPolicy)
	}
	if c.ConnectTimeout < 0 || c.ReplyTimeout < 0 || c.ProbeInterval < 0 || c.CloseTimeout < 0 {
		return fmt.Errorf("%w: durations must not be negative", ErrInvalidConfig)
	}
	if c.MaxMessageBytes < 0 || (c.MaxMessageBytes > 0 && c.MaxMessageBytes < minMessageBytes) {
		return fmt.Errorf("%w: MaxMessageBytes must be 0 (default) or at least %d", ErrInvalidConfig, minMessageBytes)
	}
	if c.QueueFrames < 0 || c.EventBuffer < 0 || c.PendingEvents < 0 || c.MaxHeldBytes < 0 {
		return fmt.Errorf("%w: sizes must not be negative", ErrInvalidConfig)
	}
	if strings.ContainsAny(c.Model, "&=?# ") {
		return fmt.Errorf("%w: Model holds a query character", ErrInvalidConfig)
	}
	return nil
}

// withDefaults fills the zero fields.
func (c Config) withDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	defInt := func(n *int, v int) {
		if *n == 0 {
			*n = v
		}
	}
	if c.URL == "" {
		c.URL = DefaultURL
	}
	if c.APIKeyEnv == "" {
		c.APIKeyEnv = DefaultAPIKeyEnv
	}
	if c.Model == "" {
		c.Model = DefaultModel
	}
	defInt(&c.SampleRate, DefaultSampleRate)
	def(&c.ConnectTimeout, DefaultConnectTimeout)
	def(&c.ReplyTimeout, DefaultReplyTimeout)
	def(&c.ProbeInterval, DefaultProbeInterval)
	def(&c.CloseTimeout, DefaultCloseTimeout)
	defInt(&c.MaxMessageBytes, DefaultMaxMessageBytes)
	defInt(&c.QueueFrames, DefaultQueueFrames)
	defInt(&c.EventBuffer, DefaultEventBuffer)
	defInt(&c.PendingEvents, DefaultPendingEvents)
	defInt(&c.MaxHeldBytes, DefaultMaxHeldBytes)
	return c
}

// speakURL is the endpoint with the session options as its query.
func (c Config) speakURL() string {
	q := url.Values{}
	q.Set("model", c.Model)
	q.Set("encoding", "linear16")
	q.Set("sample_rate", strconv.Itoa(c.SampleRate))
	return c.URL + "?" + q.Encode()
}
