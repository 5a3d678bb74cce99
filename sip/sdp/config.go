package sdp

import (
	"crypto/rand"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"time"
)

// Defaults of the zero Config fields.
const (
	// DefaultPtime is the packet time we send unless the remote asks for
	// another (RFC 3551 §4.5: 20 ms is the usual for G.711).
	DefaultPtime = 20 * time.Millisecond
	// DefaultMaxSize bounds a remote description. A real audio offer is
	// 200 to 1500 bytes (baresip's, with four codecs, is under 700).
	DefaultMaxSize = 16 << 10
	// DefaultMaxMedia bounds the m-lines of one description: audio,
	// video, a second audio and a data channel are four.
	DefaultMaxMedia = 8
	// DefaultMaxFormats bounds the formats on one m-line; browsers offer
	// about 15 audio formats, SIP phones fewer than 10.
	DefaultMaxFormats = 32
	// DefaultSessionName is our s= line.
	DefaultSessionName = "brisvox"
)

// The packet times of the media path.
const (
	// MinPtime and MaxPtime bound the packet times we read and send.
	MinPtime = 10 * time.Millisecond
	MaxPtime = 60 * time.Millisecond
)

// Config is the offer/answer policy of the SIP transport, the same for
// every call. Zero values take the defaults.
type Config struct {
	// Codecs is our preference, best first; each at most once. Default
	// DefaultCodecs(): Opus, G.722, PCMU, PCMA.
	Codecs []Codec
	// PtimeOut is the packet time we send when the remote does not ask for
	// another: 10, 20, 40 or 60 ms (the sizes every codec of ours can
	// packetise, Opus included). Default DefaultPtime.
	PtimeOut time.Duration
	// PublicAddr, when set, is the address our c= and o= lines give
	// (behind NAT: the public address the trunk must send to). Unset: the
	// address of Local. It is configured, never guessed.
	PublicAddr netip.Addr
	// NoTelephoneEvents leaves telephone-event (RFC 4733 key presses) out
	// of our offers and answers. Default: offered and accepted.
	NoTelephoneEvents bool
	// PreferEvents lets the first codec of our preference that comes with
	// telephone-event at its clock rate win over better ones without (so
	// key presses arrive as RFC 4733 events); when no codec has such
	// events, the plain preference decides. baresip 1.0.0 offers Opus
	// with telephone-event/8000 only: by default Opus wins and no event
	// can be agreed (RFC 4733 events share the audio's clock).
	PreferEvents bool
	// NoComfortNoise declines CN (RFC 3389) when the remote offers it.
	// Default: accepted at the chosen codec's clock (the media path
	// counts CN packets and does not decode them as speech). Our own
	// offers never propose CN.
	NoComfortNoise bool
	// NoRTCPMux declines rtcp-mux (RFC 5761) and leaves it out of our
	// offers. Default: accepted and offered.
	NoRTCPMux bool
	// MaxSize bounds a remote description in bytes (DefaultMaxSize);
	// MaxMedia its m-lines (DefaultMaxMedia); MaxFormats the formats of
	// one m-line (DefaultMaxFormats).
	MaxSize, MaxMedia, MaxFormats int
	// SessionName is our s= line (DefaultSessionName): printable ASCII.
	SessionName string
}

// Limits of Config.
const (
	maxMaxSize    = 1 << 20
	maxMaxMedia   = 64
	maxMaxFormats = 128
	maxNameLen    = 64
)

// Validate checks the config; zero fields mean the defaults. The error
// wraps ErrInvalidConfig.
func (c Config) Validate() error {
	for i, codec := range c.Codecs {
		if _, ok := codec.info(); !ok {
			return fmt.Errorf("%w: codec %d is not one of opus, G722, PCMU, PCMA", ErrInvalidConfig, i)
		}
		if slices.Contains(c.Codecs[:i], codec) {
			return fmt.Errorf("%w: codec %s listed twice", ErrInvalidConfig, codec)
		}
	}
	if c.PtimeOut != 0 && !validPtimeOut(Opus, c.PtimeOut) {
		return fmt.Errorf("%w: PtimeOut %v is not 10, 20, 40 or 60 ms", ErrInvalidConfig, c.PtimeOut)
	}
	if c.PublicAddr.IsValid() {
		if why := checkOwnAddr(c.PublicAddr); why != "" {
			return fmt.Errorf("%w: PublicAddr %s", ErrInvalidConfig, why)
		}
	}
	switch {
	case c.MaxSize < 0 || c.MaxSize > maxMaxSize:
		return fmt.Errorf("%w: MaxSize must be 0 (default) to %d", ErrInvalidConfig, maxMaxSize)
	case c.MaxSize > 0 && c.MaxSize < 512:
		return fmt.Errorf("%w: MaxSize below 512 bytes refuses real offers", ErrInvalidConfig)
	case c.MaxMedia < 0 || c.MaxMedia > maxMaxMedia:
		return fmt.Errorf("%w: MaxMedia must be 0 (default) to %d", ErrInvalidConfig, maxMaxMedia)
	case c.MaxFormats < 0 || c.MaxFormats > maxMaxFormats:
		return fmt.Errorf("%w: MaxFormats must be 0 (default) to %d", ErrInvalidConfig, maxMaxFormats)
	case len(c.SessionName) > maxNameLen:
		return fmt.Errorf("%w: SessionName longer than %d bytes", ErrInvalidConfig, maxNameLen)
	}
	for i := 0; i < len(c.SessionName); i++ {
		if b := c.SessionName[i]; b < 0x20 || b > 0x7e {
			return fmt.Errorf("%w: SessionName must be printable ASCII", ErrInvalidConfig)
		}
	}
	return nil
}

// withDefaults fills the zero fields.
func (c Config) withDefaults() Config {
	if len(c.Codecs) == 0 {
		c.Codecs = DefaultCodecs()
	} else {
		c.Codecs = slices.Clone(c.Codecs)
	}
	if c.PtimeOut == 0 {
		c.PtimeOut = DefaultPtime
	}
	if c.MaxSize == 0 {
		c.MaxSize = DefaultMaxSize
	}
	if c.MaxMedia == 0 {
		c.MaxMedia = DefaultMaxMedia
	}
	if c.MaxFormats == 0 {
		c.MaxFormats = DefaultMaxFormats
	}
	if c.SessionName == "" {
		c.SessionName = DefaultSessionName
	}
	return c
}

// Local is our end of one call's media: the RTP socket's address, as the
// RTP layer bound it.
type Local struct {
	// Addr is the RTP socket's address and port. Its address is what our
	// c= line says unless Config.PublicAddr is set; it must then be a
	// specified unicast address (a socket bound to 0.0.0.0 needs
	// PublicAddr: we do not guess which interface the trunk reaches).
	Addr netip.AddrPort
	// RTCPPort is where we receive RTCP without rtcp-mux; 0 means
	// Addr's port + 1 (RFC 3550 §11). Another value is signalled with
	// a=rtcp (RFC 3605).
	RTCPPort uint16
}

// validate checks l against the config's public address.
func (l Local) validate(public netip.Addr) error {
	if !l.Addr.IsValid() || l.Addr.Port() == 0 {
		return fmt.Errorf("%w: Local.Addr needs an address and a port", ErrInvalidConfig)
	}
	if !public.IsValid() {
		if why := checkOwnAddr(l.Addr.Addr()); why != "" {
			return fmt.Errorf("%w: Local.Addr %s (set PublicAddr)", ErrInvalidConfig, why)
		}
	}
	if l.RTCPPort == 0 && l.Addr.Port() == 65535 {
		return fmt.Errorf("%w: Local.Addr port 65535 leaves no port for RTCP", ErrInvalidConfig)
	}
	return nil
}

// checkOwnAddr says why a c= line of ours cannot give a, or "".
func checkOwnAddr(a netip.Addr) string {
	switch {
	case a.IsUnspecified():
		return "is unspecified"
	case a.IsMulticast():
		return "is multicast"
	case a.Zone() != "":
		return "has a zone"
	}
	return ""
}

// Option changes how New builds a Session; options do no I/O.
type Option func(*options)

type options struct {
	rand io.Reader
}

// WithRand sets the source of the session id (default crypto/rand); tests
// pass a seeded one.
func WithRand(r io.Reader) Option {
	return func(o *options) {
		if r != nil {
			o.rand = r
		}
	}
}

func defaultOptions() options { return options{rand: rand.Reader} }
