package wsconn

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"
)

// Defaults of the zero Config fields.
const (
	DefaultConnectTimeout = 5 * time.Second
	DefaultWriteTimeout   = 5 * time.Second
	DefaultCloseTimeout   = 2 * time.Second
	// DefaultReadLimit bounds one inbound message. A transcript or a
	// control message is a few KiB; a message over the bound is a
	// Protocol error, never an unbounded buffer.
	DefaultReadLimit = 256 << 10
	// DefaultQueueFrames is the outbound queue: 1 s of 20 ms audio frames
	// and room for control messages.
	DefaultQueueFrames = 64
	// DefaultSpareTTL is how long a connection opened by Warm is kept for
	// the next Dial before it is closed unused.
	DefaultSpareTTL = 20 * time.Second
)

// Config sets up a Dialer. The zero durations and sizes are the defaults.
type Config struct {
	// URL is the ws:// or wss:// endpoint, query included.
	URL string
	// Header is sent with the handshake (the vendor's Authorization).
	// It is never logged nor put in an error.
	Header http.Header

	// ConnectTimeout bounds the dial, TLS and handshake of Dial: a
	// Timeout{Op: "connect"} when it passes.
	ConnectTimeout time.Duration
	// WriteTimeout bounds each frame written: a peer that stops reading
	// fails the session with Timeout{Op: "write"}.
	WriteTimeout time.Duration
	// CloseTimeout bounds Close: the goodbye frames and the close
	// handshake; the connection is cut when it passes.
	CloseTimeout time.Duration
	// ReadLimit bounds one inbound message, in bytes.
	ReadLimit int64
	// QueueFrames is the capacity of the outbound queue.
	QueueFrames int
	// SpareTTL is how long Warm's connection is kept unused.
	SpareTTL time.Duration

	// KeepAlive, when positive, makes the writer send KeepAliveMessage (a
	// text frame) whenever nothing was written for that long.
	KeepAlive        time.Duration
	KeepAliveMessage []byte
	// Goodbye are the text frames Close sends before the close handshake
	// (a vendor's "close stream" message); none when empty.
	Goodbye [][]byte

	// ReplyOp names the Timeout of the reply deadline (ExpectReplyBy);
	// "reply" when empty.
	ReplyOp string

	// AcceptText and AcceptBinary say which inbound message types the
	// adapter takes; any other is a Protocol error. Both false: text only.
	AcceptText, AcceptBinary bool
	// MapClose, when set, maps a close frame the server sent (while the
	// session was not closing) to the session's error; nil: the default
	// (Disconnected naming the status).
	MapClose func(code int, reason string) error
	// RejectDetail, when set, makes the Detail of the Rejected error of a
	// refused handshake from the response and up to 1 KiB of its body. It
	// must not return secrets. nil: the HTTP status text.
	RejectDetail func(resp *http.Response, body []byte) string

	// DialContext, for tests and special transports, opens the TCP
	// connection to addr (host:port); nil: a net.Dialer. TLS is layered
	// on top for wss URLs.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
	// TLSConfig is cloned for wss URLs; nil: the system defaults. The
	// server name is the URL's host.
	TLSConfig *tls.Config
}

// Validate checks the config. The error wraps ErrInvalidConfig.
func (c Config) Validate() error {
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
		return fmt.Errorf("%w: URL is not a ws(s) URL", ErrInvalidConfig)
	}
	if u.User != nil {
		return fmt.Errorf("%w: URL must carry no credentials", ErrInvalidConfig)
	}
	if c.ConnectTimeout < 0 || c.WriteTimeout < 0 || c.CloseTimeout < 0 || c.KeepAlive < 0 || c.SpareTTL < 0 {
		return fmt.Errorf("%w: durations must not be negative", ErrInvalidConfig)
	}
	if c.ReadLimit < 0 || c.QueueFrames < 0 {
		return fmt.Errorf("%w: sizes must not be negative", ErrInvalidConfig)
	}
	if c.KeepAlive > 0 && len(c.KeepAliveMessage) == 0 {
		return fmt.Errorf("%w: KeepAlive needs a KeepAliveMessage", ErrInvalidConfig)
	}
	return nil
}

// withDefaults fills the zero fields.
func (c Config) withDefaults() Config {
	if c.ConnectTimeout == 0 {
		c.ConnectTimeout = DefaultConnectTimeout
	}
	if c.WriteTimeout == 0 {
		c.WriteTimeout = DefaultWriteTimeout
	}
	if c.CloseTimeout == 0 {
		c.CloseTimeout = DefaultCloseTimeout
	}
	if c.ReadLimit == 0 {
		c.ReadLimit = DefaultReadLimit
	}
	if c.QueueFrames == 0 {
		c.QueueFrames = DefaultQueueFrames
	}
	if c.SpareTTL == 0 {
		c.SpareTTL = DefaultSpareTTL
	}
	if !c.AcceptText && !c.AcceptBinary {
		c.AcceptText = true
	}
	return c
}
