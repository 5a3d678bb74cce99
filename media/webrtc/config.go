package webrtc

import (
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/brisvox/brisvox/media"
	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/media/opus"
	pion "github.com/pion/webrtc/v4"
	"github.com/rs/zerolog"
)

// Defaults of Config.
const (
	DefaultRate              = 16000
	DefaultOpusComplexity    = opus.DefaultComplexity
	DefaultOpusBitrate       = opus.DefaultBitrate
	DefaultMaxOfferBytes     = 64 << 10
	DefaultConnectTimeout    = 10 * time.Second
	DefaultGatherTimeout     = time.Second
	DefaultICEDisconnected   = 5 * time.Second
	DefaultICEFailed         = 5 * time.Second
	DefaultICEKeepalive      = 2 * time.Second
	DefaultEventBuffer       = 256
	DefaultOutputQueue       = 250
	DefaultInputQueue        = 50
	DefaultMaxWSMessageBytes = 16 << 10
	DefaultMaxBadWSMessages  = 10
	DefaultWSWriteTimeout    = 5 * time.Second
	DefaultMediaTimeout      = 30 * time.Second
	DefaultRetryAfter        = 5 * time.Second
)

// Limits of Config.
const (
	// maxOfferBytes bounds MaxOfferBytes: a browser's audio-only offer is
	// 3 to 6 KiB; 1 MiB is far beyond any real one.
	maxOfferBytes = 1 << 20
	maxQueue      = 1 << 16
)

// Config configures a Server. Zero values take the defaults, except OnCall,
// which is required.
type Config struct {
	// InputRate is the rate of the caller's audio ReadFrame delivers, and
	// OutputRate the rate WriteFrame takes; 8000, 16000, 24000 or 48000
	// Hz. Default 16000. Opus runs at 48 kHz, 20 ms, mono.
	InputRate, OutputRate int
	// OpusComplexity of the encoder, 1 to 10 (default 5);
	// opus.ComplexityLowest for 0. OpusBitrate in bit/s (default 32000).
	OpusComplexity, OpusBitrate int
	// OpusApplication tunes the output encoder: "audio" (the default,
	// CELT) or "voip" (SILK, libopus's usual choice for speech). The bot's
	// voice is clean synthetic 16 kHz speech at 32 kbit/s, which CELT
	// codes transparently in less than half the time SILK takes at
	// complexity 5 (64 against 146-161 µs a frame here); at 60 calls on two
	// cores that keeps the output's p99 jitter under 5 ms
	// (docs/LATENCY.md). "voip" is better at low bitrates and under loss.
	OpusApplication string

	// IncludeLoopback gathers candidates on loopback interfaces: needed
	// when the browser runs on the same machine with no other interface
	// (inside `unshare -n`, a container without network), and in tests.
	IncludeLoopback bool
	// Interfaces, when set, is the allow-list of interface names
	// candidates are gathered on (e.g. "lo", "eth0").
	Interfaces []string
	// NetworkTypes are "udp4" and/or "udp6"; default both.
	NetworkTypes []string
	// UDPPortMin and UDPPortMax bound the local ports of host candidates
	// (both 0: any port).
	UDPPortMin, UDPPortMax uint16
	// NAT1To1IPs are the public addresses of a 1:1 NAT in front of the
	// server; host candidates carry them instead of the local address.
	NAT1To1IPs []string
	// STUNServers ("stun:host:port") to learn server-reflexive candidates.
	// Default none: nothing leaves the machine unless configured.
	STUNServers []string
	// MDNS answers and resolves .local candidates (off by default; with it
	// off, a browser's mDNS candidates still connect as peer-reflexive
	// ones once its checks arrive).
	MDNS bool

	// MaxOfferBytes bounds the offer body (default 64 KiB).
	MaxOfferBytes int64
	// ConnectTimeout: ICE and DTLS must both be connected by then, counted
	// from the offer (default 10 s).
	ConnectTimeout time.Duration
	// GatherTimeout is how long the answer waits for candidate gathering
	// to complete; later candidates go over the websocket (default 1 s).
	GatherTimeout time.Duration
	// ICEDisconnectedTimeout and ICEFailedTimeout: after this long without
	// anything from the client (pion counts every packet: STUN consent
	// answers, RTP, RTCP, DTLS) a connected call is disconnected, and this
	// much longer it has failed and ends with ErrClientGone, which wraps
	// conn.ErrVanished (defaults 5 s and 5 s: a vanished browser is
	// detected 10 to 12 s after its last packet). ICEKeepalive is the
	// interval of the server's consent checks (default 2 s), which a live
	// browser answers even with nothing else to send.
	ICEDisconnectedTimeout, ICEFailedTimeout, ICEKeepalive time.Duration
	// MediaTimeout ends a connected call whose client sent no RTP for this
	// long with ErrNoMedia (wraps conn.ErrVanished); default 30 s. A
	// muted browser still sends RTP (a disabled track sends silence, 50
	// packets a second: the answer does not offer Opus DTX), so only a
	// client that stopped its track (replaceTrack(null), a stopped
	// sender) or one that answers consent checks and sends nothing is
	// ended by it.
	MediaTimeout time.Duration

	// EventBuffer bounds the events (Publish) queued for the websocket of
	// one call; beyond it the oldest is dropped and counted (default 256).
	EventBuffer int
	// OutputQueue bounds the bot frames a call holds before sending them
	// (default 250, 5 s): the oldest is dropped and counted beyond it.
	OutputQueue int
	// InputQueue bounds the caller frames held for a slow ReadFrame
	// (default 50, 1 s); beyond it the oldest is dropped and counted.
	InputQueue int
	// Jitter tunes the input jitter buffer; the call sets its clock rate
	// (48000), frame (960) and payload type (the negotiated Opus one).
	Jitter media.JitterConfig

	// MaxWSMessageBytes bounds a websocket message from the client
	// (default 16 KiB); a longer one closes the websocket.
	MaxWSMessageBytes int64
	// MaxBadWSMessages: after this many bad messages (unknown, binary,
	// unparsable, a refused candidate) the websocket is closed; the call
	// goes on (default 10).
	MaxBadWSMessages int
	// WSWriteTimeout bounds one websocket write (default 5 s): a client
	// that stops reading its websocket while events are sent blocks the
	// write once the socket buffers are full, and the call ends with
	// ErrStalled (wraps conn.ErrStoppedReading) after this long.
	WSWriteTimeout time.Duration
	// AllowedOrigins are the origins ("https://host[:port]", as a browser
	// sends them in the Origin header) of pages served elsewhere that may
	// call: POST /offer answers their CORS preflight and the websocket
	// accepts them. A request from the server's own host is always
	// allowed, one without an Origin (not a browser) too; any other
	// origin gets 403. Default none: same origin only.
	AllowedOrigins []string

	// RetryAfter is the Retry-After of the refusals the server makes
	// itself (closed: cause draining); default 5 s. Admit's refusals carry
	// their own.
	RetryAfter time.Duration

	// OnCall is called once per accepted offer with the new call, before
	// the answer is sent. It must only hand the call on (required).
	OnCall func(*Call)
	// Admit, when set, reserves a slot before an offer is read; a refusal
	// (a *conn.Refusal; another error counts as "full") answers 503
	// with Retry-After and {"error", "cause"}. The slot is released when
	// no call comes of the offer, and handed on with the call otherwise
	// (Call.Admission).
	Admit conn.Admitter
	// Logger receives the package's and pion's log lines (default Nop).
	Logger zerolog.Logger
}

func (c Config) withDefaults() Config {
	if c.InputRate == 0 {
		c.InputRate = DefaultRate
	}
	if c.OutputRate == 0 {
		c.OutputRate = DefaultRate
	}
	if c.OpusComplexity == 0 {
		c.OpusComplexity = DefaultOpusComplexity
	}
	if c.OpusBitrate == 0 {
		c.OpusBitrate = DefaultOpusBitrate
	}
	if len(c.NetworkTypes) == 0 {
		c.NetworkTypes = []string{"udp4", "udp6"}
	}
	if c.MaxOfferBytes == 0 {
		c.MaxOfferBytes = DefaultMaxOfferBytes
	}
	if c.ConnectTimeout == 0 {
		c.ConnectTimeout = DefaultConnectTimeout
	}
	if c.GatherTimeout == 0 {
		c.GatherTimeout = DefaultGatherTimeout
	}
	if c.ICEDisconnectedTimeout == 0 {
		c.ICEDisconnectedTimeout = DefaultICEDisconnected
	}
	if c.ICEFailedTimeout == 0 {
		c.ICEFailedTimeout = DefaultICEFailed
	}
	if c.ICEKeepalive == 0 {
		c.ICEKeepalive = DefaultICEKeepalive
	}
	if c.EventBuffer == 0 {
		c.EventBuffer = DefaultEventBuffer
	}
	if c.OutputQueue == 0 {
		c.OutputQueue = DefaultOutputQueue
	}
	if c.InputQueue == 0 {
		c.InputQueue = DefaultInputQueue
	}
	if c.MaxWSMessageBytes == 0 {
		c.MaxWSMessageBytes = DefaultMaxWSMessageBytes
	}
	if c.MaxBadWSMessages == 0 {
		c.MaxBadWSMessages = DefaultMaxBadWSMessages
	}
	if c.WSWriteTimeout == 0 {
		c.WSWriteTimeout = DefaultWSWriteTimeout
	}
	if c.MediaTimeout == 0 {
		c.MediaTimeout = DefaultMediaTimeout
	}
	if c.RetryAfter == 0 {
		c.RetryAfter = DefaultRetryAfter
	}
	return c
}

// Validate reports a configuration that cannot work. Zero values are valid
// (they take the defaults), except OnCall.
func (c Config) Validate() error {
	if c.OnCall == nil {
		return fmt.Errorf("%w: OnCall is required", ErrInvalidConfig)
	}
	d := c.withDefaults()
	for _, r := range []struct {
		name string
		hz   int
	}{{"input", d.InputRate}, {"output", d.OutputRate}} {
		switch r.hz {
		case 8000, 16000, 24000, 48000:
		default:
			return fmt.Errorf("%w: %s rate %d Hz (want 8000, 16000, 24000 or 48000)", ErrInvalidConfig, r.name, r.hz)
		}
	}
	if _, ok := opusApplication(c.OpusApplication); !ok {
		return fmt.Errorf("%w: OpusApplication %q (want audio or voip)", ErrInvalidConfig, c.OpusApplication)
	}
	if err := (opus.EncoderConfig{Complexity: c.OpusComplexity, Bitrate: c.OpusBitrate}).Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	for _, nt := range d.NetworkTypes {
		if nt != "udp4" && nt != "udp6" {
			return fmt.Errorf("%w: network type %q (want udp4 or udp6)", ErrInvalidConfig, nt)
		}
	}
	if (c.UDPPortMin == 0) != (c.UDPPortMax == 0) || c.UDPPortMax < c.UDPPortMin {
		return fmt.Errorf("%w: udp port range %d-%d", ErrInvalidConfig, c.UDPPortMin, c.UDPPortMax)
	}
	for _, ip := range c.NAT1To1IPs {
		if net.ParseIP(ip) == nil {
			return fmt.Errorf("%w: nat 1:1 address %q is not an ip", ErrInvalidConfig, ip)
		}
	}
	if len(c.NAT1To1IPs) > 0 && c.MDNS {
		return fmt.Errorf("%w: nat 1:1 addresses and mdns exclude each other", ErrInvalidConfig)
	}
	for _, s := range c.STUNServers {
		if !strings.HasPrefix(s, "stun:") && !strings.HasPrefix(s, "stuns:") {
			return fmt.Errorf("%w: stun server %q (want stun:host:port)", ErrInvalidConfig, s)
		}
	}
	for _, name := range c.Interfaces {
		if name == "" {
			return fmt.Errorf("%w: empty interface name", ErrInvalidConfig)
		}
	}
	switch {
	case c.MaxOfferBytes < 0 || c.MaxOfferBytes > maxOfferBytes:
		return fmt.Errorf("%w: max offer bytes %d not in [1, %d]", ErrInvalidConfig, c.MaxOfferBytes, maxOfferBytes)
	case c.ConnectTimeout < 0 || c.GatherTimeout < 0 || c.WSWriteTimeout < 0 || c.MediaTimeout < 0 || c.RetryAfter < 0:
		return fmt.Errorf("%w: negative timeout", ErrInvalidConfig)
	case c.ICEDisconnectedTimeout < 0 || c.ICEFailedTimeout < 0 || c.ICEKeepalive < 0:
		return fmt.Errorf("%w: negative ice timeout", ErrInvalidConfig)
	case c.EventBuffer < 0 || c.EventBuffer > maxQueue || c.OutputQueue < 0 || c.OutputQueue > maxQueue ||
		c.InputQueue < 0 || c.InputQueue > maxQueue:
		return fmt.Errorf("%w: queue sizes %d/%d/%d not in [1, %d]", ErrInvalidConfig, c.EventBuffer, c.OutputQueue, c.InputQueue, maxQueue)
	case c.MaxWSMessageBytes < 0 || c.MaxWSMessageBytes > maxOfferBytes:
		return fmt.Errorf("%w: max websocket message bytes %d not in [1, %d]", ErrInvalidConfig, c.MaxWSMessageBytes, maxOfferBytes)
	case c.MaxBadWSMessages < 0:
		return fmt.Errorf("%w: max bad websocket messages %d", ErrInvalidConfig, c.MaxBadWSMessages)
	}
	for _, o := range c.AllowedOrigins {
		if _, err := normalOrigin(o); err != nil {
			return fmt.Errorf("%w: allowed origin %q: %w", ErrInvalidConfig, o, err)
		}
	}
	jc := c.Jitter
	jc.ClockRate, jc.SamplesPerFrame, jc.PayloadTypes = opus.DefaultSampleRate, opus.DefaultSampleRate/50, []uint8{111}
	if err := jc.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return nil
}

// Option changes what New builds beyond the Config. Options do no I/O.
type Option func(*options)

type options struct {
	settings func(*pion.SettingEngine)
}

// WithSettingEngine lets tests and special deployments adjust pion's
// SettingEngine of every call after the Config has been applied to it
// (a virtual network, a UDP mux, other timeouts).
func WithSettingEngine(fn func(*pion.SettingEngine)) Option {
	return func(o *options) { o.settings = fn }
}

// opusApplication maps Config.OpusApplication ("" is "audio").
func opusApplication(name string) (opus.Application, bool) {
	switch name {
	case "", "audio":
		return opus.ApplicationAudio, true
	case "voip":
		return opus.ApplicationVoIP, true
	}
	return 0, false
}
