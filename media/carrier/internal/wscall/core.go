package wscall

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/brisvox/brisvox/media/conn"
	"github.com/coder/websocket"
	"github.com/rs/zerolog"
)

// HardLimitFactor times MaxMessageBytes is the size at which the
// websocket itself gives up (StatusMessageTooBig) instead of the message
// being skipped.
const HardLimitFactor = 8

// maxCloseReason is what fits a close frame.
const maxCloseReason = 123

// End is a reason a protocol's read loop gives for ending the call: the
// core closes the websocket with Code and Reason. Cause, when set, is the
// transport sentinel ReadFrame's error wraps (conn.ErrProtocol).
type End struct {
	Code   websocket.StatusCode
	Reason string
	Cause  error
}

func (e *End) Error() string { return e.Reason }

// Timer phases.
const (
	phaseStart int32 = iota // waiting for the protocol's first message
	phaseLive
)

// failure is why the core itself ended a call: the transport sentinel
// ReadFrame's error wraps, a detail and the counter it is counted under.
type failure struct {
	cause   error
	detail  string
	counter string
}

// Core is one call's websocket, inbox, outbox and goroutines. Its owner
// (the handler's ServeHTTP) calls Run, which returns once everything the
// call started has ended.
//
// Liveness: the core ends a call whose peer is gone or does not take
// part, with the cause ReadFrame's error then wraps:
//   - no inbound message for IdleTimeout: conn.ErrSilentInput;
//   - a websocket write (audio, a mark, a ping) that does not complete
//     within WriteTimeout, or an outbox that overflows (the unsent
//     backlog passed OutQueue messages): conn.ErrStoppedReading;
//   - no pong within PongTimeout of a ping: conn.ErrStoppedReading
//     when the peer's messages kept arriving meanwhile (it is there and
//     sends, but does not read what we send: pongs are answered by the
//     peer's reader), conn.ErrVanished when nothing came;
//   - the connection lost without a close frame: conn.ErrVanished.
//
// The first of them wins; a hang-up before any of them is not one. A
// peer gone silent is caught by whichever bound passes first: IdleTimeout
// (no input), or PingInterval + PongTimeout (vanished) when that is
// shorter or there is no idle bound.
type Core struct {
	ID    string
	WS    *websocket.Conn
	In    *Inbox
	Out   *Outbox
	Stats *Counters
	Log   zerolog.Logger

	cfg Config
	buf []byte
	bad int

	hangOnce   sync.Once
	hang       chan struct{}
	hangCode   websocket.StatusCode
	hangReason string

	stop       chan struct{} // the read loop is over
	writerDone chan struct{}
	done       chan struct{}
	endErr     error // set before done closes

	timer  *time.Timer // start, then idle timeout
	phase  atomic.Int32
	wtimer *time.Timer // write timeout
	failed atomic.Pointer[failure]
	inMsgs atomic.Uint64 // inbound messages read so far

	pingerDone chan struct{}

	echo atomic.Pointer[func(string)]
}

// NewID is prefix, a dash and 16 random hex digits.
func NewID(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return prefix + "-" + hex.EncodeToString(b[:])
}

// NewCore wraps an accepted websocket. Nothing runs until Run.
func NewCore(ws *websocket.Conn, cfg Config, stats *Counters, log zerolog.Logger) *Core {
	ws.SetReadLimit(int64(cfg.MaxMessageBytes) * HardLimitFactor)
	c := &Core{
		ID: cfg.ID, WS: ws, Stats: stats, Log: log, cfg: cfg,
		In:         NewInbox(cfg.Rate, cfg.InQueue, stats),
		Out:        NewOutbox(cfg.OutQueue, cfg.MaxPendingMarks, stats),
		buf:        make([]byte, min(initialReadBuffer, cfg.MaxMessageBytes+1)),
		hang:       make(chan struct{}),
		stop:       make(chan struct{}),
		writerDone: make(chan struct{}),
		pingerDone: make(chan struct{}),
		done:       make(chan struct{}),
	}
	c.timer = time.AfterFunc(time.Hour, c.timerFired)
	c.timer.Stop()
	c.wtimer = time.AfterFunc(time.Hour, func() {
		c.fail(conn.ErrStoppedReading, fmt.Sprintf("a write took over %v", cfg.WriteTimeout), "stopped_reading")
	})
	c.wtimer.Stop()
	c.Out.onFull = func() {
		c.fail(conn.ErrStoppedReading, fmt.Sprintf("over %d messages not sent", cfg.OutQueue), "stopped_reading")
	}
	return c
}

// fail ends the call for cause: it records the first failure (unless the
// call was hung up before: then the hang-up is the reason, and a close
// handshake the peer does not read is cut) and closes the websocket at
// once, so the read loop ends. Safe from any goroutine.
func (c *Core) fail(cause error, detail, counter string) {
	if !c.hungUp() {
		c.failed.CompareAndSwap(nil, &failure{cause: cause, detail: detail, counter: counter})
	}
	_ = c.WS.CloseNow()
}

// ArmStart starts the timer of the first phase: when it fires before
// Live, the call is closed with StatusPolicyViolation and reason (counted
// "start_timeouts").
func (c *Core) ArmStart(d time.Duration) {
	c.phase.Store(phaseStart)
	c.timer.Reset(d)
}

// Live ends the first phase: from now on the timer is the idle timeout,
// restarted by Touch.
func (c *Core) Live() {
	c.phase.Store(phaseLive)
	c.Touch()
}

// Touch restarts the idle timeout (once live).
func (c *Core) Touch() {
	if c.phase.Load() != phaseLive {
		return
	}
	if c.cfg.IdleTimeout > 0 {
		c.timer.Reset(c.cfg.IdleTimeout)
	} else {
		c.timer.Stop()
	}
}

func (c *Core) timerFired() {
	if c.phase.Load() == phaseStart {
		c.Stats.Inc("start_timeouts")
		c.Hangup(websocket.StatusPolicyViolation, "no start message in time")
		return
	}
	// A peer that went silent gets no close handshake: it may be gone.
	c.fail(conn.ErrSilentInput, fmt.Sprintf("no message for %v", c.cfg.IdleTimeout), "silent_input")
}

// initialReadBuffer is the read buffer a call starts with: a 20 ms frame
// of 16 kHz PCM (640 bytes) or a carrier's JSON media message fits; a
// larger message grows it, to MaxMessageBytes+1 at most (64 KiB up front
// was a fifth of a call's heap).
const initialReadBuffer = 2 << 10

// ReadMessage reads the next message into the core's buffer (valid until
// the next call). A message over MaxMessageBytes is skipped: ErrOversized.
// A text message that is not valid UTF-8 breaks the websocket protocol
// (RFC 6455 8.1): an *End with StatusInvalidFramePayloadData (1007) and
// cause conn.ErrProtocol, counted "invalid_utf8".
func (c *Core) ReadMessage() (websocket.MessageType, []byte, error) {
	typ, r, err := c.WS.Reader(context.Background())
	if err != nil {
		return 0, nil, err
	}
	c.inMsgs.Add(1)
	// The buffer grows, by doubling, only for a message that needs it, up
	// to one byte more than the bound.
	n, err := io.ReadFull(r, c.buf)
	for err == nil && len(c.buf) <= c.cfg.MaxMessageBytes {
		c.buf = append(c.buf, make([]byte, min(len(c.buf), c.cfg.MaxMessageBytes+1-len(c.buf)))...)
		var m int
		m, err = io.ReadFull(r, c.buf[n:])
		n += m
	}
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		if end := checkText(typ, c.buf[:n]); end != nil {
			c.Stats.Inc("invalid_utf8")
			return typ, nil, end
		}
	}
	switch {
	case err == nil:
		// One byte more than the bound: read the rest away.
		if _, err := io.Copy(io.Discard, r); err != nil {
			return 0, nil, err
		}
		return typ, nil, fmt.Errorf("%w: over %d bytes", ErrOversized, c.cfg.MaxMessageBytes)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return typ, c.buf[:n], nil
	default:
		return 0, nil, err
	}
}

// checkText is the End of a text message that is not valid UTF-8 (RFC
// 6455 8.1: the endpoint must fail the connection, 1007), nil for any
// other. Every inbound message goes through it: no allocation then.
func checkText(typ websocket.MessageType, b []byte) *End {
	if typ == websocket.MessageText && !utf8.Valid(b) {
		return &End{Code: websocket.StatusInvalidFramePayloadData,
			Reason: "invalid UTF-8 in a text message", Cause: conn.ErrProtocol}
	}
	return nil
}

// Bad counts a bad message under counter. After MaxBadMessages in a row
// it returns the End that closes the call.
func (c *Core) Bad(counter string) error {
	c.Stats.Inc(counter)
	c.bad++
	if c.bad >= c.cfg.MaxBadMessages {
		c.Stats.Inc("too_many_bad")
		return &End{Code: websocket.StatusPolicyViolation, Reason: "too many bad messages", Cause: conn.ErrProtocol}
	}
	return nil
}

// Good ends a run of bad messages.
func (c *Core) Good() { c.bad = 0 }

// Hangup closes the call: the writer drops what is queued and closes the
// websocket with code and reason (the first call wins). It does not wait;
// Done is closed when the call is over.
func (c *Core) Hangup(code websocket.StatusCode, reason string) {
	c.hangOnce.Do(func() {
		if len(reason) > maxCloseReason {
			n := maxCloseReason
			for n > 0 && !utf8.RuneStart(reason[n]) {
				n-- // a close reason must be valid UTF-8
			}
			reason = reason[:n]
		}
		c.hangCode, c.hangReason = code, reason
		c.Out.Close()
		close(c.hang)
	})
}

// hungUp tells whether Hangup was called.
func (c *Core) hungUp() bool {
	select {
	case <-c.hang:
		return true
	default:
		return false
	}
}

// SetEcho registers the mark-echo callback (nil unregisters).
func (c *Core) SetEcho(fn func(name string)) {
	if fn == nil {
		c.echo.Store(nil)
		return
	}
	c.echo.Store(&fn)
}

// Echo hands the peer's echo of name to the callback when the book says
// it confirms playback.
func (c *Core) Echo(name string) {
	if !c.Out.Echo(name) {
		return
	}
	if fn := c.echo.Load(); fn != nil {
		(*fn)(name)
	}
}

// Done is closed when the call is over and its goroutines have ended.
func (c *Core) Done() <-chan struct{} { return c.done }

// Err is why the call ended, a wrapped conn.ErrClosed (nil before
// Done).
func (c *Core) Err() error {
	select {
	case <-c.done:
		return c.endErr
	default:
		return nil
	}
}

// Run starts the writer, runs loop (the protocol's reader) until it
// returns, ends the call and waits for the writer. It returns the end, a
// wrapped conn.ErrClosed.
func (c *Core) Run(loop func() error) error {
	go c.writer()
	// The pinger's context ends when the read loop is over.
	pingCtx, stopPings := context.WithCancel(context.Background())
	defer stopPings()
	if c.cfg.PingInterval > 0 {
		go c.pinger(pingCtx)
	} else {
		close(c.pingerDone)
	}
	err := loop()
	var end *End
	if errors.As(err, &end) {
		if end.Cause != nil {
			c.failed.CompareAndSwap(nil, &failure{cause: end.Cause, detail: end.Reason})
		}
		c.Hangup(end.Code, end.Reason)
	}
	// A ping that failed as the connection went down says why: wait for
	// the pinger before naming the reason.
	stopPings()
	<-c.pingerDone
	var endErr error
	if detail, cause := c.reason(err); cause != nil {
		endErr = fmt.Errorf("%w: %w: %s", conn.ErrClosed, cause, detail)
	} else {
		endErr = fmt.Errorf("%w: %s", conn.ErrClosed, detail)
	}
	c.In.Close(endErr)
	endErr = c.In.Err() // a reason given earlier (the carrier's stop) wins
	c.Out.Close()
	close(c.stop)
	<-c.writerDone
	_ = c.WS.CloseNow()
	c.timer.Stop()
	c.wtimer.Stop()
	c.endErr = endErr
	close(c.done)
	return endErr
}

// reason says why the call ended (a detail, and the transport sentinel:
// nil for a hang-up or a peer's close) and counts the way it did.
func (c *Core) reason(err error) (detail string, cause error) {
	if f := c.failed.Load(); f != nil {
		if f.counter != "" {
			c.Stats.Inc(f.counter)
		}
		return f.detail, f.cause
	}
	switch {
	case c.hungUp():
		c.Stats.Inc("hangups")
		return "hung up: " + c.hangReason, nil
	case errors.Is(err, websocket.ErrMessageTooBig):
		c.Stats.Inc("oversized")
		return fmt.Sprintf("a message over %d bytes", c.cfg.MaxMessageBytes*HardLimitFactor), conn.ErrProtocol
	case websocket.CloseStatus(err) != -1:
		c.Stats.Inc("peer_closes")
		// The peer's reason text is not repeated: it is outside input.
		return fmt.Sprintf("the peer closed the websocket (%d)", int(websocket.CloseStatus(err))), nil
	default:
		c.Stats.Inc("vanished")
		return "the connection was lost", conn.ErrVanished
	}
}

// pinger pings the peer every PingInterval until Run ends it. A ping not
// answered within PongTimeout (or whose frame could not be written in
// that time) ends the call: stopped reading when the peer's messages kept
// coming meanwhile, vanished when nothing came.
func (c *Core) pinger(ctx context.Context) {
	defer close(c.pingerDone)
	t := time.NewTimer(c.cfg.PingInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		before := c.inMsgs.Load()
		pctx, cancel := context.WithTimeout(ctx, c.cfg.PongTimeout)
		err := c.WS.Ping(pctx)
		cancel()
		if err != nil {
			// The library's own write bound of a control frame is a
			// deadline too; a cancel is Run ending the call.
			if errors.Is(err, context.DeadlineExceeded) {
				if c.inMsgs.Load() != before {
					c.fail(conn.ErrStoppedReading, fmt.Sprintf("no pong within %v while the peer kept sending", c.cfg.PongTimeout), "no_pong")
				} else {
					c.fail(conn.ErrVanished, fmt.Sprintf("no pong within %v", c.cfg.PongTimeout), "no_pong")
				}
			}
			return
		}
		c.Stats.Inc("pongs")
		t.Reset(c.cfg.PingInterval)
	}
}

// writer sends the outbox in order until the call ends. A hang-up closes
// the websocket with its code and reason from here, after the message
// being written.
func (c *Core) writer() {
	defer close(c.writerDone)
	var spare []byte
	for {
		// A hang-up goes first: Run hangs up before it stops the writer,
		// and the close frame must still go out.
		select {
		case <-c.hang:
			c.closeGracefully()
			return
		default:
		}
		select {
		case <-c.stop:
			return
		default:
		}
		it, ok := c.Out.Pop(spare)
		if !ok {
			select {
			case <-c.Out.Wake():
			case <-c.hang:
			case <-c.stop:
			}
			continue
		}
		c.wtimer.Reset(c.cfg.WriteTimeout)
		err := c.WS.Write(context.Background(), it.Type, it.Buf)
		c.wtimer.Stop()
		spare = it.Buf
		if err != nil {
			c.Stats.Inc("write_errors")
			_ = c.WS.CloseNow() // the reader ends on it
			return
		}
		c.Stats.Inc("messages_out")
	}
}

func (c *Core) closeGracefully() {
	if err := c.WS.Close(c.hangCode, c.hangReason); err != nil {
		_ = c.WS.CloseNow()
	}
}
