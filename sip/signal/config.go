package signal

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/rs/zerolog"
)

// Defaults of Config.
const (
	DefaultT1             = 500 * time.Millisecond
	DefaultT2             = 4 * time.Second
	DefaultSessionExpires = 1800 * time.Second
	DefaultMinSE          = 90 * time.Second
	DefaultMaxUDPMessage  = 8 << 10
	DefaultMaxBody        = 16 << 10
	DefaultMaxMessage     = 64 << 10
	DefaultMaxHeaders     = 256
	DefaultCloseGrace     = 2 * time.Second
	DefaultStreamIdle     = 2 * time.Minute
	DefaultUserAgent      = "brisvox"
	DefaultRinging        = "180"
	DefaultInbox          = 32
	DefaultReferTimeout   = 30 * time.Second
)

// Limits of Config.
const (
	// rfcMinSE is the floor RFC 4028 sets for Min-SE.
	rfcMinSE        = 90 * time.Second
	maxUDPMessage   = 65507
	maxBody         = 1 << 20
	maxHeaders      = 4096
	maxTimer        = time.Minute
	maxSessionTimer = 24 * time.Hour
	maxReferTimeout = 5 * time.Minute
)

// Listen is one listening socket.
type Listen struct {
	// Network is "udp", "tcp" or "tls".
	Network string
	// Addr is host:port; port 0 takes a free one (see Server.Addrs).
	Addr string
}

// Config configures a Server. Zero values take the defaults; Listen is
// required.
type Config struct {
	// Listen are the sockets to serve, at least one.
	Listen []Listen
	// CertFile and KeyFile are the PEM certificate and key of the "tls"
	// listeners (required when one is configured).
	CertFile, KeyFile string
	// PublicHost is the host (an IP address or a name) of our Contact and
	// Via, the address peers reach us at behind NAT. Configured, never
	// guessed: when empty a listener's own address is used, which must
	// then be a specific address (not 0.0.0.0 or ::).
	PublicHost string
	// UserAgent is our User-Agent and Server header value ("brisvox").
	UserAgent string
	// Ringing is the provisional response sent before Application.Invite:
	// "180" (default), "183" (without a body) or "none".
	Ringing string
	// T1 and T2 are RFC 3261's timers: the 2xx is retransmitted at T1
	// doubling to T2, until the ACK or 64*T1. Defaults 500 ms and 4 s.
	T1, T2 time.Duration
	// SessionExpires is the session interval we ask for (RFC 4028) when
	// the INVITE asks for none and the cap on a longer one; default
	// 1800 s; a negative value turns session timers off unless the peer
	// asks for them.
	SessionExpires time.Duration
	// MinSE is the smallest session interval we accept: below it the
	// INVITE gets 422 with our Min-SE. Default 90 s, at least 90 s.
	MinSE time.Duration
	// MaxUDPMessage bounds a UDP datagram: larger ones are dropped before
	// parsing (counted "udp-oversize"). Default 8 KiB.
	MaxUDPMessage int
	// MaxMessage bounds a whole message as sipgo's parser assembles it
	// on a stream (and a datagram, after MaxUDPMessage): a TCP or TLS
	// peer sending more without completing a message has its connection
	// closed. Default 64 KiB.
	MaxMessage int
	// MaxBody bounds a body on any transport (413 above); default 16 KiB.
	MaxBody int
	// MaxHeaders bounds the header count of a request; default 256.
	MaxHeaders int
	// CloseGrace is how long Close waits for the responses to its BYEs;
	// default 2 s.
	CloseGrace time.Duration
	// StreamIdle ends a TCP or TLS connection that brings nothing for
	// this long (a keepalive CRLF counts, RFC 5626 3.5.1), so a peer that
	// connects and stays silent holds nothing for ever. Default 2 min;
	// negative: no bound.
	StreamIdle time.Duration
	// Inbox is the queue of one dialog's in-dialog requests; default 32.
	Inbox int
	// ReferTimeout bounds Dialog.Refer: no final NOTIFY by then fails
	// the transfer (the dialog goes on). Default 30 s, at most 5 min.
	ReferTimeout time.Duration
	// Log is the root logger. Lines carry only our call id, the method
	// and the error.
	Log zerolog.Logger
}

func (c *Config) withDefaults() Config {
	out := *c
	out.Listen = append([]Listen(nil), c.Listen...)
	if out.UserAgent == "" {
		out.UserAgent = DefaultUserAgent
	}
	if out.Ringing == "" {
		out.Ringing = DefaultRinging
	}
	if out.T1 == 0 {
		out.T1 = DefaultT1
	}
	if out.T2 == 0 {
		out.T2 = DefaultT2
	}
	if out.SessionExpires == 0 {
		out.SessionExpires = DefaultSessionExpires
	}
	if out.MinSE == 0 {
		out.MinSE = DefaultMinSE
	}
	if out.MaxUDPMessage == 0 {
		out.MaxUDPMessage = DefaultMaxUDPMessage
	}
	if out.MaxBody == 0 {
		out.MaxBody = DefaultMaxBody
	}
	if out.MaxMessage == 0 {
		out.MaxMessage = DefaultMaxMessage
	}
	if out.MaxHeaders == 0 {
		out.MaxHeaders = DefaultMaxHeaders
	}
	if out.CloseGrace == 0 {
		out.CloseGrace = DefaultCloseGrace
	}
	if out.StreamIdle == 0 {
		out.StreamIdle = DefaultStreamIdle
	}
	if out.Inbox == 0 {
		out.Inbox = DefaultInbox
	}
	if out.ReferTimeout == 0 {
		out.ReferTimeout = DefaultReferTimeout
	}
	return out
}

// Validate checks the Config with its defaults applied.
func (c *Config) Validate() error {
	d := c.withDefaults()
	if len(d.Listen) == 0 {
		return fmt.Errorf("%w: no listener", ErrInvalidConfig)
	}
	tls := false
	for i, l := range d.Listen {
		switch strings.ToLower(l.Network) {
		case "udp", "tcp":
		case "tls":
			tls = true
		default:
			return fmt.Errorf("%w: listen[%d]: network %q (want udp, tcp or tls)", ErrInvalidConfig, i, l.Network)
		}
		host, _, err := net.SplitHostPort(l.Addr)
		if err != nil {
			return fmt.Errorf("%w: listen[%d]: %w", ErrInvalidConfig, i, err)
		}
		if d.PublicHost == "" {
			ip, err := netip.ParseAddr(host)
			if err != nil || ip.IsUnspecified() {
				return fmt.Errorf("%w: listen[%d]: a wildcard or named address needs PublicHost", ErrInvalidConfig, i)
			}
		}
	}
	if tls && (d.CertFile == "" || d.KeyFile == "") {
		return fmt.Errorf("%w: a tls listener needs CertFile and KeyFile", ErrInvalidConfig)
	}
	if strings.ContainsAny(d.PublicHost, " ;,<>\"\r\n") {
		return fmt.Errorf("%w: PublicHost is not a host", ErrInvalidConfig)
	}
	if strings.ContainsAny(d.UserAgent, "\r\n") {
		return fmt.Errorf("%w: UserAgent holds a line break", ErrInvalidConfig)
	}
	switch d.Ringing {
	case "180", "183", "none":
	default:
		return fmt.Errorf("%w: Ringing %q (want 180, 183 or none)", ErrInvalidConfig, d.Ringing)
	}
	if d.T1 < 0 || d.T1 > maxTimer || d.T2 < d.T1 || d.T2 > maxTimer {
		return fmt.Errorf("%w: T1 %v, T2 %v (want 0 < T1 <= T2 <= %v)", ErrInvalidConfig, d.T1, d.T2, maxTimer)
	}
	if d.ReferTimeout < 0 || d.ReferTimeout > maxReferTimeout {
		return fmt.Errorf("%w: ReferTimeout %v (want 0 < ReferTimeout <= %v)", ErrInvalidConfig, d.ReferTimeout, maxReferTimeout)
	}
	if d.MinSE < rfcMinSE || d.MinSE > maxSessionTimer || d.MinSE%time.Second != 0 {
		return fmt.Errorf("%w: MinSE %v (want whole seconds, 90 s to 24 h)", ErrInvalidConfig, d.MinSE)
	}
	if d.SessionExpires > 0 && (d.SessionExpires < d.MinSE || d.SessionExpires > maxSessionTimer || d.SessionExpires%time.Second != 0) {
		return fmt.Errorf("%w: SessionExpires %v (want whole seconds, MinSE to 24 h)", ErrInvalidConfig, d.SessionExpires)
	}
	if d.MaxUDPMessage < 0 || d.MaxUDPMessage > maxUDPMessage {
		return fmt.Errorf("%w: MaxUDPMessage %d (at most %d)", ErrInvalidConfig, d.MaxUDPMessage, maxUDPMessage)
	}
	if d.MaxBody < 0 || d.MaxBody > maxBody {
		return fmt.Errorf("%w: MaxBody %d (at most %d)", ErrInvalidConfig, d.MaxBody, maxBody)
	}
	if d.MaxMessage < 1024 || d.MaxMessage > maxBody+maxBody {
		return fmt.Errorf("%w: MaxMessage %d (1 KiB to %d)", ErrInvalidConfig, d.MaxMessage, 2*maxBody)
	}
	if d.MaxHeaders < 0 || d.MaxHeaders > maxHeaders {
		return fmt.Errorf("%w: MaxHeaders %d (at most %d)", ErrInvalidConfig, d.MaxHeaders, maxHeaders)
	}
	if d.CloseGrace < 0 || d.Inbox < 0 {
		return fmt.Errorf("%w: negative CloseGrace or Inbox", ErrInvalidConfig)
	}
	return nil
}

// Auth is digest authentication of INVITEs (sip/trunk implements it).
type Auth interface {
	// Challenge returns a WWW-Authenticate value with a fresh nonce;
	// failed is the Verify error that led to it (nil: the request carried
	// no credentials), so an expired nonce can be answered stale=true.
	Challenge(failed error) (wwwAuthenticate string)
	// Verify checks an Authorization value for the request's method and
	// Request-URI; nil means authenticated.
	Verify(method, uri, authorization string) error
}

// ReadFilter sees every datagram, and every read of a stream (TCP, TLS:
// stream is set), before parsing; false drops it with no answer and no
// state, and on a stream also closes the connection (what follows a
// dropped read could not be framed).
type ReadFilter func(src netip.AddrPort, stream bool, data []byte) bool

// AcceptFilter sees a stream connection's source when it is accepted,
// before any byte or TLS handshake; false closes it at once.
type AcceptFilter func(src netip.AddrPort) bool

// Limit admits one more dialog from src: it returns the release to call
// when the dialog ends, or an error to refuse the INVITE (a *Refusal is
// answered with its code, any other error 503).
type Limit func(src netip.AddrPort) (release func(), err error)

// Option sets a hook of the Server. Options do no I/O.
type Option func(*options)

type options struct {
	filter ReadFilter
	accept AcceptFilter
	auth   Auth
	limit  Limit
	seed   uint64
	seeded bool
	health func() *Refusal
}

// WithReadFilter sets the read filter (the trunk's allowlist and flood
// limits).
func WithReadFilter(f ReadFilter) Option { return func(o *options) { o.filter = f } }

// WithAcceptFilter sets the stream listeners' accept filter.
func WithAcceptFilter(f AcceptFilter) Option { return func(o *options) { o.accept = f } }

// WithAuth sets digest authentication of INVITEs: an INVITE without valid
// credentials gets 401 with WWW-Authenticate.
func WithAuth(a Auth) Option { return func(o *options) { o.auth = a } }

// WithLimit sets the per-source dialog limit.
func WithLimit(l Limit) Option { return func(o *options) { o.limit = l } }

// WithSeed seeds the randomness of the glare back-off (tests); tags and
// branches always come from sipgo's generator.
func WithSeed(seed uint64) Option {
	return func(o *options) { o.seed, o.seeded = seed, true }
}
