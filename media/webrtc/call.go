package webrtc

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/brisvox/brisvox/messages"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brisvox/brisvox/media/conn"
	"github.com/pion/interceptor"
	pion "github.com/pion/webrtc/v4"
	"github.com/rs/zerolog"
)

// Call is one WebRTC call: a peer connection with one Opus audio track
// each way, its signaling websocket, and the goroutines that move its
// audio. It implements conn.Conn.
//
// Goroutines, all owned by the call and stopped when it ends: the
// supervisor (connection state, ConnectTimeout, teardown), the media
// clock (input playout and output, one tick per 20 ms), the RTP reader of
// the caller's track,
// two RTCP readers, and the websocket's writer (its reader is the HTTP
// handler's goroutine, which the call also waits for).
type Call struct {
	id  string
	srv *Server
	cfg Config
	log zerolog.Logger
	adm conn.Admission // set before OnCall

	pc       *pion.PeerConnection
	track    *pion.TrackLocalStaticSample
	sender   *pion.RTPSender
	receiver *pion.RTPReceiver

	// done closes when the call ends; cause says why (written once,
	// before done closes).
	done    chan struct{}
	endOnce sync.Once
	cause   error
	// kind is how the server ended the call (Hangup's kind; EndNormal
	// for any other end): the websocket's close code. Written with cause.
	kind conn.EndKind
	// connected closes when ICE and DTLS are both connected.
	connected chan struct{}
	// stateWake is poked by pion's state callback.
	stateWake chan struct{}
	// dtlsFailed is set by pion's DTLS state callback (synchronously,
	// before the peer connection's state follows): pion closes a failed
	// DTLS transport at once, and the far side may close too, so the
	// states read afterwards no longer tell.
	dtlsFailed atomic.Bool
	// finished closes when the teardown is complete.
	finished chan struct{}

	// mu guards tearing, trackSeen, ws and wg.Add: once tearing is set no
	// goroutine is added.
	mu        sync.Mutex
	tearing   bool
	trackSeen bool
	ws        wsState
	wg        sync.WaitGroup

	sig   signalQueue
	in    inputPath
	out   outputPath
	stats counters
}

var _ conn.Conn = (*Call)(nil)

// newCallID returns 128 random bits in hex: a call id is also what lets a
// websocket join the call, so it must not be guessable.
func newCallID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// ID is the call's id, as in the answer and the websocket URL.
func (c *Call) ID() string { return c.id }

// Transport names the call's transport for operators: "webrtc".
func (c *Call) Transport() string { return "webrtc" }

// InputRate is the rate of the frames ReadFrame delivers.
func (c *Call) InputRate() int { return c.cfg.InputRate }

// OutputRate is the rate of the frames WriteFrame takes.
func (c *Call) OutputRate() int { return c.cfg.OutputRate }

// Done closes when the call has ended (the goroutines may still be
// stopping; Close waits for them).
func (c *Call) Done() <-chan struct{} { return c.done }

// Err is why the call ended (one of the call-end sentinels, wrapped), nil
// while it lasts.
func (c *Call) Err() error {
	select {
	case <-c.done:
		return c.cause
	default:
		return nil
	}
}

// Hangup ends the call from the server's side: a "bye" event with reason
// goes to the websocket if one is open, which then closes with kind's code
// (wsCloseStatus: 1000, 1013 try again later, 1011, 1001 going away),
// then the peer connection closes.
// It does not wait; Close does. reason goes to the client: say why, never
// what was said.
func (c *Call) Hangup(kind conn.EndKind, reason string) {
	c.endAs(kind, fmt.Errorf("%w: %s", ErrHangup, reason))
}

// Admission is the slot the call was admitted into (conn.Admitted).
func (c *Call) Admission() conn.Admission { return c.adm }

// noAdmission is the slot of a server without an admit hook.
type noAdmission struct{}

func (noAdmission) Release() {}

// Close hangs up (if the call still runs) and waits until every goroutine
// of the call has stopped. It is safe to call more than once.
func (c *Call) Close() error {
	c.end(fmt.Errorf("%w: closed", ErrHangup))
	<-c.finished
	return nil
}

// Stats is a snapshot of the call's counters (media, RTCP, drops), plus
// the input jitter buffer's: jitter_concealed counts the ticks of packets
// lost or late, jitter_paused those of the caller's DTX pauses, and
// jitter_undecided the ticks of the current gap, which the caller's next
// packet tells apart.
func (c *Call) Stats() map[string]uint64 {
	m := c.stats.snapshot()
	c.in.mu.Lock()
	if c.in.jb != nil {
		js := c.in.jb.Stats()
		m["jitter_played"] = js.Played
		m["jitter_lost"] = js.Lost
		m["jitter_late"] = js.Late
		m["jitter_concealed"] = js.Concealed
		m["jitter_paused"] = js.Paused
		m["jitter_undecided"] = js.Undecided
		m["jitter_resyncs"] = js.Resyncs
		m["jitter_delay_frames"] = uint64(js.Delay)
	}
	c.in.mu.Unlock()
	return m
}

// inc counts k for the call and for the server.
func (c *Call) inc(k counter) {
	c.stats.inc(k)
	c.srv.stats.inc(k)
}

// end records why the call ends and wakes everything that waits on it.
// Only the first reason counts.
func (c *Call) end(cause error) { c.endAs(conn.EndNormal, cause) }

// endAs is end with the kind the websocket's close says.
func (c *Call) endAs(kind conn.EndKind, cause error) {
	c.endOnce.Do(func() {
		c.cause, c.kind = cause, kind
		close(c.done)
	})
}

// closedErr is what the Conn methods return once the call has ended.
func (c *Call) closedErr() error {
	<-c.done
	return fmt.Errorf("%w: %w", conn.ErrClosed, c.cause)
}

func (c *Call) ended() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// goLocked starts fn as a goroutine of the call unless it is tearing
// down. c.mu must be held.
func (c *Call) goLocked(fn func()) bool {
	if c.tearing {
		return false
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		fn()
	}()
	return true
}

// start launches the goroutines that do not wait for pion: the media
// loops (they wait for the connection) and the RTCP readers.
func (c *Call) start() {
	c.mu.Lock()
	c.goLocked(c.media)
	c.goLocked(func() { c.drainRTCP(c.sender.Read) })
	if c.receiver != nil {
		c.goLocked(func() { c.drainRTCP(c.receiver.Read) })
	}
	c.mu.Unlock()
	go c.supervise()
}

// maxTickLag: a media loop that fell further behind (descheduled) skips
// the ticks it missed instead of running them back to back.
const maxTickLag = 5 * messages.FrameDuration

// media is the call's 20 ms clock, from the connection to the end of the
// call: each tick plays out one frame of the caller's audio and sends one
// of the bot's. One goroutine does both, so a call wakes once per frame.
func (c *Call) media() {
	select {
	case <-c.connected:
	case <-c.done:
		return
	}
	timer := time.NewTimer(0)
	defer timer.Stop()
	next := time.Now()
	c.in.lastRTP.Store(next.UnixNano())
	for {
		select {
		case <-timer.C:
		case <-c.done:
			return
		}
		now := time.Now()
		if now.Sub(next) > maxTickLag {
			c.inc(cTickLag)
			next = now
		}
		c.tick(now)
		next = next.Add(messages.FrameDuration)
		timer.Reset(time.Until(next))
	}
}

// tick is the call's 20 ms: one frame of the caller's audio played out,
// one of the bot's sent.
func (c *Call) tick(now time.Time) {
	if c.ended() {
		return
	}
	if now.UnixNano()-c.in.lastRTP.Load() > int64(c.cfg.MediaTimeout) {
		c.end(fmt.Errorf("%w: none for %v", ErrNoMedia, c.cfg.MediaTimeout))
		return
	}
	c.inputTick(now)
	c.outputTick(now)
}

// drainRTCP reads the RTCP of one direction until the peer connection
// closes: reading runs pion's interceptors (NACK responses, reports), and
// counts what arrives.
func (c *Call) drainRTCP(read func([]byte) (int, interceptor.Attributes, error)) {
	buf := make([]byte, 1500)
	for {
		if _, _, err := read(buf); err != nil {
			return
		}
		c.inc(cRTCPPackets)
	}
}

// closeGrace is how long a peer connection closed before it connected
// waits for a DTLS failure to show before the close counts as the caller's.
const closeGrace = 250 * time.Millisecond

// supervise follows the connection state until the call ends, then tears
// it down.
func (c *Call) supervise() {
	timer := time.NewTimer(c.cfg.ConnectTimeout)
	defer timer.Stop()
	connected := false
	var grace <-chan time.Time
	for !c.ended() {
		select {
		case <-c.stateWake:
			switch c.pc.ConnectionState() {
			case pion.PeerConnectionStateConnected:
				if !connected {
					connected = true
					timer.Stop()
					close(c.connected)
					c.log.Debug().Msg("webrtc call connected")
				}
			case pion.PeerConnectionStateFailed:
				c.end(c.failure(connected))
			case pion.PeerConnectionStateClosed:
				switch {
				case c.dtlsFailed.Load():
					c.end(c.failure(connected))
				case connected:
					c.end(fmt.Errorf("%w: peer connection closed", ErrPeerClosed))
				case grace == nil:
					// Closed before connecting. Pion closes the peer
					// connection when the DTLS endpoint closes, which a
					// failing handshake does a moment before it reports
					// the failure: give the failure that moment.
					t := time.NewTimer(closeGrace)
					defer t.Stop()
					grace = t.C
				}
			}
		case <-grace:
			if c.dtlsFailed.Load() {
				c.end(c.failure(connected))
			} else {
				c.end(fmt.Errorf("%w: peer connection closed before connecting", ErrPeerClosed))
			}
		case <-timer.C:
			if !connected {
				c.end(fmt.Errorf("%w: not connected after %v", ErrConnectTimeout, c.cfg.ConnectTimeout))
			}
		case <-c.done:
		}
	}
	c.teardown()
}

// failure names a failed connection: DTLS when its transport failed,
// else ICE, which is a vanished client once the call had connected.
func (c *Call) failure(connected bool) error {
	switch {
	case c.dtlsFailed.Load():
		return fmt.Errorf("%w: dtls handshake or transport failed", ErrDTLSFailed)
	case connected:
		return fmt.Errorf("%w: ice consent lost", ErrClientGone)
	}
	return fmt.Errorf("%w: no candidate pair succeeded", ErrICEFailed)
}

// teardown runs once the call has ended: the bye goes out (when a
// websocket is open), the peer connection closes, every goroutine of the
// call is waited for, and the server forgets the call.
func (c *Call) teardown() {
	c.mu.Lock()
	c.tearing = true
	wsOpen := c.ws.claimed
	c.mu.Unlock()
	c.sig.poke()
	if wsOpen {
		// The writer closes byeDone once the bye is written or the
		// websocket is gone, within one write timeout.
		<-c.ws.byeDone
	}
	if err := c.pc.GracefulClose(); err != nil {
		c.log.Warn().Err(err).Msg("webrtc peer connection close failed")
	}
	c.wg.Wait()
	c.countEnd()
	c.srv.forget(c)
	close(c.finished)
}

// countEnd counts and logs the end reason.
func (c *Call) countEnd() {
	cause := c.cause
	k, quiet := cEndHangup, false
	switch {
	case errors.Is(cause, ErrConnectTimeout):
		k = cEndConnectTimeout
	case errors.Is(cause, ErrICEFailed):
		k = cEndICEFailed
	case errors.Is(cause, ErrDTLSFailed):
		k = cEndDTLSFailed
	case errors.Is(cause, ErrClientGone):
		k = cEndClientGone
	case errors.Is(cause, ErrNoMedia):
		k = cEndNoMedia
	case errors.Is(cause, ErrStalled):
		k = cEndStalled
	case errors.Is(cause, ErrInvalidUTF8):
		k = cEndProtocol
	case errors.Is(cause, ErrPeerClosed):
		k, quiet = cEndPeerClosed, true
	default:
		quiet = true
	}
	c.srv.stats.inc(k)
	ev := c.log.Warn()
	if quiet {
		ev = c.log.Info()
	}
	ev.Err(cause).Msg("webrtc call ended")
}
