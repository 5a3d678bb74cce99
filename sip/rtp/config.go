package rtp

import (
	"fmt"
	"github.com/brisvox/brisvox/sip/sdp"
	"io"
	"net/netip"
	"time"

	"github.com/brisvox/brisvox/media"
	"github.com/rs/zerolog"
)

// Defaults of Config and Params.
const (
	DefaultRate         = 16000
	DefaultLatchRun     = 4
	DefaultCandidates   = 8
	DefaultMediaTimeout = 30 * time.Second
	DefaultRTCPInterval = 5 * time.Second
	DefaultOutputQueue  = 250
	DefaultInputQueue   = 50
	DefaultPtime        = 20 * time.Millisecond
)

// Limits of the settings.
const (
	MinPtime = 10 * time.Millisecond
	MaxPtime = 60 * time.Millisecond
	maxQueue = 1 << 14
	// maxLatchRun keeps learning short: every packet of the run is dropped.
	maxLatchRun   = 64
	maxCandidates = 256
)

// EventFunc receives the payload of every telephone-event packet of the
// latched source (RFC 4733), in arrival order, from the session's reader
// goroutine, with the session's input lock held: it must not block, must
// not call the session, and must not keep payload (it is reused).
type EventFunc func(seq uint16, ts uint32, marker bool, payload []byte, at time.Time)

// Config is what a session takes from the server: where to bind, the rates
// the call's stages want, and the policy against a hostile network. Zero
// values take the defaults.
type Config struct {
	// Ports allocates the session's UDP ports; required.
	Ports *Ports
	// CallID names the call in log lines (never a number or a header).
	CallID string
	// InputRate is the rate of the frames ReadFrame delivers and
	// OutputRate the rate WriteFrame takes: 8000, 16000, 24000 or 48000.
	// The line rate is converted to and from them, once each way, only
	// when it differs. Default 16000.
	InputRate, OutputRate int
	// RTCPMux binds only the RTP port: RTCP shares it (RFC 5761), as an
	// offer with a=rtcp-mux that we accept asks. Params.RTCPMux must then
	// be set too.
	RTCPMux bool
	// SymmetricRTP lets a source other than the signalled address latch
	// (a caller behind NAT whose media comes from its public mapping), by
	// the same run of packets; the bot's audio then goes to that source.
	// Off by default: only the address the SDP names can latch.
	SymmetricRTP bool
	// LatchRun is how many packets with consecutive sequence numbers and
	// one SSRC a source sends before it latches; they are dropped.
	// Default 4.
	LatchRun int
	// Candidates bounds the sources being learned at once. Default 8.
	Candidates int
	// MediaTimeout ends the session when no RTP came for this long in a
	// sendrecv call; on hold, when neither RTP nor RTCP came for this long
	// (at least 25 s: five of the shortest RTCP intervals) from a remote
	// that sent RTCP before (see liveness). Default 30 s; negative
	// disables it.
	MediaTimeout time.Duration
	// RTCPInterval is the mean interval of our RTCP reports (RFC 3550
	// 6.2, randomised over 0.5 to 1.5 of it). Default 5 s.
	RTCPInterval time.Duration
	// OnEvent receives telephone-event payloads; nil drops them (counted).
	OnEvent EventFunc
	// Jitter tunes the input jitter buffer's delays and capacity; its
	// ClockRate, SamplesPerFrame and PayloadTypes come from Params.
	Jitter media.JitterConfig
	// OutputQueue bounds the bot frames queued before sending (the oldest
	// is dropped beyond it, counted); InputQueue the caller frames held for
	// a slow ReadFrame. Defaults 250 and 50.
	OutputQueue, InputQueue int
	// Logger gets the session's warnings: the call id and the error only.
	Logger zerolog.Logger
}

func (c Config) withDefaults() Config {
	if c.InputRate == 0 {
		c.InputRate = DefaultRate
	}
	if c.OutputRate == 0 {
		c.OutputRate = DefaultRate
	}
	if c.LatchRun == 0 {
		c.LatchRun = DefaultLatchRun
	}
	if c.Candidates == 0 {
		c.Candidates = DefaultCandidates
	}
	if c.MediaTimeout == 0 {
		c.MediaTimeout = DefaultMediaTimeout
	}
	if c.RTCPInterval == 0 {
		c.RTCPInterval = DefaultRTCPInterval
	}
	if c.OutputQueue == 0 {
		c.OutputQueue = DefaultOutputQueue
	}
	if c.InputQueue == 0 {
		c.InputQueue = DefaultInputQueue
	}
	return c
}

func validRate(hz int) bool {
	switch hz {
	case 8000, 16000, 24000, 48000:
		return true
	}
	return false
}

// Validate reports a configuration that cannot work.
func (c Config) Validate() error {
	d := c.withDefaults()
	switch {
	case c.Ports == nil:
		return fmt.Errorf("%w: no port allocator", ErrInvalidConfig)
	case !validRate(d.InputRate) || !validRate(d.OutputRate):
		return fmt.Errorf("%w: rates %d/%d Hz (want 8000, 16000, 24000 or 48000)", ErrInvalidConfig, d.InputRate, d.OutputRate)
	case d.LatchRun < 1 || d.LatchRun > maxLatchRun:
		return fmt.Errorf("%w: latch run %d not in [1, %d]", ErrInvalidConfig, c.LatchRun, maxLatchRun)
	case d.Candidates < 1 || d.Candidates > maxCandidates:
		return fmt.Errorf("%w: candidates %d not in [1, %d]", ErrInvalidConfig, c.Candidates, maxCandidates)
	case d.RTCPInterval < time.Second:
		return fmt.Errorf("%w: rtcp interval %v below 1 s", ErrInvalidConfig, c.RTCPInterval)
	case d.OutputQueue < 1 || d.OutputQueue > maxQueue || d.InputQueue < 1 || d.InputQueue > maxQueue:
		return fmt.Errorf("%w: queues %d/%d not in [1, %d]", ErrInvalidConfig, c.OutputQueue, c.InputQueue, maxQueue)
	}
	j := c.Jitter
	j.ClockRate, j.SamplesPerFrame, j.PayloadTypes = 8000, 160, []uint8{0}
	if err := j.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return nil
}

// Codec is an audio codec of the line.
type Codec string

// The codecs a session speaks.
const (
	CodecPCMU Codec = "PCMU"
	CodecPCMA Codec = "PCMA"
	CodecG722 Codec = "G722"
	CodecOpus Codec = "opus"
)

// Direction is what the offer/answer allows, seen from our side: the
// offer/answer's own type (sip/sdp), so the call passes it on as it is.
type Direction = sdp.Direction

// The directions of RFC 3264. The zero value is SendRecv.
const (
	// SendRecv: both send.
	SendRecv = sdp.SendRecv
	// SendOnly: we send, the remote does not (it put us on hold with
	// recvonly): a hold, whose media timeout is RTCP's (see liveness).
	SendOnly = sdp.SendOnly
	// RecvOnly: the remote sends, we do not (it put itself on hold with
	// sendonly): nothing goes out, not even silence.
	RecvOnly = sdp.RecvOnly
	// Inactive: neither sends.
	Inactive = sdp.Inactive
)

func (p Params) sendAllowed() bool { return p.Direction.Send() }

// Params are the remote parameters an offer/answer negotiated (the
// integrator maps sip/sdp's result onto them). Zero values take the
// defaults.
type Params struct {
	// Codec and PayloadType are the audio format both ends send.
	Codec       Codec
	PayloadType uint8
	// ClockRate is the RTP clock: 8000 for PCMU, PCMA and G.722 (RFC 3551
	// keeps G.722 at 8000 although its audio is 16 kHz), 48000 for Opus.
	// Default: the codec's.
	ClockRate int
	// SampleRate is the codec's audio rate: 8000 for G.711, 16000 for
	// G.722, 48000 for Opus (which decodes at InputRate directly).
	// Default: the codec's.
	SampleRate int
	// Events enables telephone-event packets of EventPayloadType.
	Events           bool
	EventPayloadType uint8
	// RemoteRTP is where the remote's SDP says it receives RTP; it is
	// also the only source that may latch unless Config.SymmetricRTP.
	RemoteRTP netip.AddrPort
	// RemoteRTCP is where its RTCP goes; zero: RemoteRTP's port + 1, or
	// RemoteRTP itself with RTCPMux.
	RemoteRTCP netip.AddrPort
	// RTCPMux multiplexes RTCP on the RTP port (RFC 5761).
	RTCPMux bool
	// PtimeIn is the remote's packet time, 10 to 60 ms (sipp sends 30 ms);
	// PtimeOut ours, 10 to 60 ms in steps of 10 ms (Opus: 10, 20, 40 or
	// 60). Default 20 ms each.
	PtimeIn, PtimeOut time.Duration
	// Direction is the hold state.
	Direction Direction
}

// codecRates are the clock and audio rates of each codec.
var codecRates = map[Codec][2]int{
	CodecPCMU: {8000, 8000},
	CodecPCMA: {8000, 8000},
	CodecG722: {8000, 16000},
	CodecOpus: {48000, 48000},
}

func (p Params) withDefaults() Params {
	r := codecRates[p.Codec]
	if p.ClockRate == 0 {
		p.ClockRate = r[0]
	}
	if p.SampleRate == 0 {
		p.SampleRate = r[1]
	}
	if p.PtimeIn == 0 {
		p.PtimeIn = DefaultPtime
	}
	if p.PtimeOut == 0 {
		p.PtimeOut = DefaultPtime
	}
	p.RemoteRTP = unmap(p.RemoteRTP)
	p.RemoteRTCP = unmap(p.RemoteRTCP)
	if !p.RemoteRTCP.IsValid() && p.RemoteRTP.IsValid() {
		if p.RTCPMux {
			p.RemoteRTCP = p.RemoteRTP
		} else {
			p.RemoteRTCP = netip.AddrPortFrom(p.RemoteRTP.Addr(), p.RemoteRTP.Port()+1)
		}
	}
	return p
}

func unmap(a netip.AddrPort) netip.AddrPort {
	if !a.IsValid() {
		return a
	}
	return netip.AddrPortFrom(a.Addr().Unmap(), a.Port())
}

// Validate reports parameters a session cannot use.
func (p Params) Validate() error {
	d := p.withDefaults()
	r, ok := codecRates[p.Codec]
	switch {
	case !ok:
		return fmt.Errorf("%w: codec %q", ErrInvalidParams, p.Codec)
	case d.ClockRate != r[0] || d.SampleRate != r[1]:
		return fmt.Errorf("%w: %s at clock %d Hz, audio %d Hz (want %d, %d)", ErrInvalidParams, p.Codec, d.ClockRate, d.SampleRate, r[0], r[1])
	case p.PayloadType > 127 || p.EventPayloadType > 127:
		return fmt.Errorf("%w: payload types %d/%d", ErrInvalidParams, p.PayloadType, p.EventPayloadType)
	case p.Events && p.EventPayloadType == p.PayloadType:
		return fmt.Errorf("%w: telephone-event shares payload type %d with audio", ErrInvalidParams, p.PayloadType)
	case isCN(p.PayloadType) || p.Events && isCN(p.EventPayloadType):
		return fmt.Errorf("%w: payload type %d is comfort noise", ErrInvalidParams, p.PayloadType)
	case d.PtimeIn < MinPtime || d.PtimeIn > MaxPtime || d.PtimeIn%time.Millisecond != 0:
		return fmt.Errorf("%w: ptime in %v not in [10, 60] ms", ErrInvalidParams, p.PtimeIn)
	case d.PtimeOut < MinPtime || d.PtimeOut > MaxPtime || d.PtimeOut%(10*time.Millisecond) != 0:
		return fmt.Errorf("%w: ptime out %v not 10 to 60 ms in steps of 10", ErrInvalidParams, p.PtimeOut)
	case p.Codec == CodecOpus && (d.PtimeOut == 30*time.Millisecond || d.PtimeOut == 50*time.Millisecond):
		return fmt.Errorf("%w: opus ptime out %v (want 10, 20, 40 or 60 ms)", ErrInvalidParams, p.PtimeOut)
	case p.Direction > Inactive:
		return fmt.Errorf("%w: direction %d", ErrInvalidParams, p.Direction)
	case !d.RemoteRTP.IsValid():
		return fmt.Errorf("%w: no remote rtp address", ErrInvalidParams)
	}
	return nil
}

// Option changes how New builds a session; options do no I/O.
type Option func(*options)

type options struct {
	rand io.Reader
}

// WithRand makes the session draw its SSRC, first sequence number, first
// timestamp and RTCP interval jitter from r instead of crypto/rand (tests
// pass a seeded reader).
func WithRand(r io.Reader) Option { return func(o *options) { o.rand = r } }
