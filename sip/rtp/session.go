package rtp

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/brisvox/brisvox/media/conn"
	"github.com/rs/zerolog"
)

// packetConn is what a session needs of a UDP socket; *net.UDPConn is
// one. Tests give an in-memory one, so the session's clock runs in a
// synctest bubble.
type packetConn interface {
	ReadFromUDPAddrPort(b []byte) (int, netip.AddrPort, error)
	WriteToUDPAddrPort(b []byte, addr netip.AddrPort) (int, error)
	Close() error
}

var (
	_ packetConn = (*net.UDPConn)(nil)
	_ conn.Conn  = (*Session)(nil)
)

// maxDatagram is the longest datagram taken: a longer one (beyond a path
// MTU) is not media we take.
const maxDatagram = 1500

// Session is one SIP call's RTP and RTCP media. New binds its ports (the
// SDP answer carries them), Start begins media with the negotiated
// parameters, Update applies a re-INVITE, Close ends it. It implements the
// media half of conn.Conn.
//
// Goroutines, all owned by the session and waited for by Close: the media
// clock (playout, sending, RTCP reports, media timeout), and one reader
// per socket.
type Session struct {
	cfg  Config
	log  zerolog.Logger
	rand io.Reader

	rtpConn, rtcpConn packetConn
	local             netip.AddrPort
	release           func()

	stats counters
	in    inputPath
	out   outputPath
	// rmu guards the RTCP state the clock and Stats share.
	rmu   sync.Mutex
	rtcp  rtcpState
	cname string

	// mu guards state, params and wg.Add.
	mu      sync.Mutex
	started bool
	params  Params
	wake    chan struct{}
	wg      sync.WaitGroup
	// clockDone closes when the clock goroutine has returned.
	clockDone chan struct{}

	done      chan struct{}
	endOnce   sync.Once
	cause     error
	closeOnce sync.Once
}

// New binds a session's RTP (and, unless Config.RTCPMux, RTCP) port from
// cfg.Ports; media starts with Start. It fails with ErrNoPorts when the
// range is exhausted.
func New(cfg Config, opts ...Option) (*Session, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	b, err := cfg.Ports.bind(cfg.RTCPMux)
	if err != nil {
		return nil, err
	}
	var rtcpConn packetConn
	if b.rtcp != nil {
		rtcpConn = b.rtcp
	}
	s, err := newSession(cfg, b.rtp, rtcpConn, netip.AddrPortFrom(cfg.Ports.Addr(), uint16(b.port)), b.release, opts...)
	if err != nil {
		_ = b.rtp.Close()
		if b.rtcp != nil {
			_ = b.rtcp.Close()
		}
		b.release()
		return nil, err
	}
	return s, nil
}

// newSession builds a session on sockets already bound; release frees
// them in the allocator (once, after they are closed).
func newSession(cfg Config, rtpConn, rtcpConn packetConn, local netip.AddrPort, release func(), opts ...Option) (*Session, error) {
	o := options{rand: rand.Reader}
	for _, opt := range opts {
		opt(&o)
	}
	s := &Session{
		cfg:       cfg,
		log:       cfg.Logger,
		rand:      o.rand,
		rtpConn:   rtpConn,
		rtcpConn:  rtcpConn,
		local:     local,
		release:   release,
		wake:      make(chan struct{}, 1),
		done:      make(chan struct{}),
		clockDone: make(chan struct{}),
	}
	var r [4 + 2 + 4 + 8]byte
	if _, err := io.ReadFull(s.rand, r[:]); err != nil {
		return nil, fmt.Errorf("%w: random source: %w", ErrInvalidConfig, err)
	}
	s.cname = hex.EncodeToString(r[10:])
	s.in.init(cfg, &s.stats)
	s.out.init(cfg, binary.BigEndian.Uint32(r[0:]), binary.BigEndian.Uint16(r[4:]), binary.BigEndian.Uint32(r[6:]))
	s.in.st.ourSSRC = s.out.ssrc
	return s, nil
}

// LocalRTP is the bound RTP address (the SDP answer's port); RTCP is on
// the next port unless Config.RTCPMux.
func (s *Session) LocalRTP() netip.AddrPort { return s.local }

// SSRC is the SSRC of the stream we send.
func (s *Session) SSRC() uint32 { return s.out.ssrc }

// InputRate is the rate of the frames ReadFrame delivers.
func (s *Session) InputRate() int { return s.cfg.InputRate }

// OutputRate is the rate of the frames WriteFrame takes.
func (s *Session) OutputRate() int { return s.cfg.OutputRate }

// Start begins media with the negotiated parameters: the readers, the
// playout and the sender. It fails with ErrInvalidParams for parameters
// that cannot work and ErrState when called twice or after Close.
func (s *Session) Start(p Params) error {
	if err := p.Validate(); err != nil {
		return err
	}
	p = p.withDefaults()
	if err := s.checkMux(p); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started || s.ended() {
		return fmt.Errorf("%w: start twice or after close", ErrState)
	}
	if err := s.apply(p, time.Now()); err != nil {
		return err
	}
	s.started = true
	s.params = p
	s.goLocked(func() { s.readLoop(s.rtpConn, false) })
	if s.rtcpConn != nil {
		s.goLocked(func() { s.readLoop(s.rtcpConn, true) })
	}
	s.goLocked(func() {
		defer close(s.clockDone)
		s.clock()
	})
	return nil
}

// Update applies a new offer/answer (a re-INVITE or UPDATE): hold and
// resume, a new codec, a new remote address. The source is learned again
// from the signalled address: this is the only way a new source latches.
// Parameters equal to the current ones (a session refresh) change
// nothing.
func (s *Session) Update(p Params) error {
	if err := p.Validate(); err != nil {
		return err
	}
	p = p.withDefaults()
	if err := s.checkMux(p); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started || s.ended() {
		return fmt.Errorf("%w: update before start or after close", ErrState)
	}
	if p == s.params {
		// A refresh with the same session description (RFC 4028 session
		// timers): nothing was negotiated anew, so nothing is learned
		// again and the media runs on undisturbed.
		return nil
	}
	if err := s.apply(p, time.Now()); err != nil {
		return err
	}
	s.params = p
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return nil
}

func (s *Session) checkMux(p Params) error {
	if s.rtcpConn == nil && !p.RTCPMux {
		return fmt.Errorf("%w: rtcp on its own port, but only the rtp port is bound (rtcp-mux)", ErrInvalidParams)
	}
	return nil
}

// apply builds p's codecs, then swaps them in on both paths; on an error
// nothing changed.
func (s *Session) apply(p Params, now time.Time) error {
	dec, err := newDecoder(p, s.cfg.InputRate)
	if err != nil {
		return err
	}
	enc, err := newEncoder(p, s.cfg.OutputRate)
	if err != nil {
		return err
	}
	if err := s.in.configure(p, s.cfg, dec, now); err != nil {
		return err
	}
	if err := s.out.configure(p, s.cfg, enc); err != nil {
		return err
	}
	return nil
}

// Done closes when the session has ended (media timeout or Close).
func (s *Session) Done() <-chan struct{} { return s.done }

// Err is why the session ended (ErrMediaTimeout or ErrClosed, wrapped),
// nil while it lasts.
func (s *Session) Err() error {
	select {
	case <-s.done:
		return s.cause
	default:
		return nil
	}
}

func (s *Session) end(cause error) {
	s.endOnce.Do(func() {
		s.cause = cause
		close(s.done)
	})
}

func (s *Session) ended() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// closedErr is what the Conn methods return once the session has ended:
// a media timeout says the caller vanished (conn.ReasonOf names the
// call's end so).
func (s *Session) closedErr() error {
	<-s.done
	if errors.Is(s.cause, ErrMediaTimeout) {
		return fmt.Errorf("%w: %w: %w", conn.ErrClosed, conn.ErrVanished, s.cause)
	}
	return fmt.Errorf("%w: %w", conn.ErrClosed, s.cause)
}

// Close ends the session: an RTCP BYE goes out (when media started), the
// goroutines stop and are waited for, the sockets close and the ports are
// released. It is idempotent.
func (s *Session) Close() error {
	s.end(fmt.Errorf("%w: closed", ErrClosed))
	s.closeOnce.Do(func() {
		s.mu.Lock()
		started := s.started
		s.started = true // no Start after Close
		s.mu.Unlock()
		if started {
			// The clock is the only writer of the RTP socket: the BYE
			// goes out after it stopped, before the sockets close.
			<-s.clockDone
			s.sendBye(time.Now())
		}
		_ = s.rtpConn.Close()
		if s.rtcpConn != nil {
			_ = s.rtcpConn.Close()
		}
		s.wg.Wait()
		s.release()
	})
	return nil
}

// goLocked starts fn as a goroutine of the session; s.mu must be held.
func (s *Session) goLocked(fn func()) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		fn()
	}()
}

// readLoop reads one socket until it closes.
func (s *Session) readLoop(conn packetConn, rtcpSocket bool) {
	// One byte more than we take: a longer datagram reads truncated to
	// it and is refused whole.
	buf := make([]byte, maxDatagram+1)
	for {
		n, from, err := conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) || s.ended() {
				return
			}
			s.stats.inc(cReadErrors)
			continue
		}
		if n > maxDatagram {
			s.stats.drop(dropMalformed)
			continue
		}
		s.in.receive(buf[:n], from, time.Now(), rtcpSocket)
	}
}
