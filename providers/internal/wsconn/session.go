package wsconn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/coder/websocket"

	"github.com/brisvox/brisvox/providers"
)

// Handler is what an adapter does with a session's inbound side.
type Handler struct {
	// OnMessage gets each inbound message of session s, on the reader
	// goroutine, in order (it may run before Dial returns). data is valid
	// only during the call. An error ends the session with it. It may
	// block (handing an event to a slow consumer) but must give up when
	// s.Closing() is closed.
	OnMessage func(s *Session, binary bool, data []byte) error
	// OnEnd, when set, is called once, on the writer goroutine, after the
	// reader stopped and the connection was closed and before Done
	// closes, with the session's error (nil after Close, the context's
	// error when the session's context ended it).
	OnEnd func(err error)
}

// Stats counts a session's traffic.
type Stats struct {
	// MessagesIn counts the inbound messages handed to OnMessage.
	MessagesIn int64
	// FramesOut counts the frames written (keep-alives and goodbyes
	// included).
	FramesOut int64
	// KeepAlives counts the keep-alive messages written.
	KeepAlives int64
	// Dropped counts the frames Send refused with ErrQueueFull.
	Dropped int64
	// Pongs counts the pings answered (Ping returned nil).
	Pongs int64
}

// frame is one queued outbound message; buf is returned to the free list
// after the write when pooled.
type frame struct {
	binary bool
	data   []byte
	pooled bool
}

// Session is one open websocket. Its methods are safe for concurrent use.
type Session struct {
	cfg *Config
	c   *websocket.Conn
	raw net.Conn
	h   Handler
	ctx context.Context

	queue      chan frame
	free       chan []byte
	wake       chan struct{}
	closing    chan struct{}
	done       chan struct{}
	readerDone chan struct{}
	endOnce    sync.Once

	mu       sync.Mutex
	err      error
	graceful bool
	replyBy  time.Time

	messagesIn, framesOut, keepAlives, dropped, pongs atomic.Int64
}

func newSession(ctx context.Context, cfg *Config, c *websocket.Conn, raw net.Conn, h Handler) *Session {
	s := &Session{
		cfg:        cfg,
		c:          c,
		raw:        raw,
		h:          h,
		ctx:        ctx,
		queue:      make(chan frame, cfg.QueueFrames),
		free:       make(chan []byte, cfg.QueueFrames),
		wake:       make(chan struct{}, 1),
		closing:    make(chan struct{}),
		done:       make(chan struct{}),
		readerDone: make(chan struct{}),
	}
	go s.read()
	go s.write()
	return s
}

// Closing is closed as soon as the session starts to end (Close, a
// failure, its context); OnMessage must not block past it.
func (s *Session) Closing() <-chan struct{} { return s.closing }

// Done is closed when the session has ended: both goroutines stopped, the
// connection closed, OnEnd returned.
func (s *Session) Done() <-chan struct{} { return s.done }

// Err is why the session ended: nil while it runs and after Close, the
// context's error when its context ended it, else a typed provider error.
func (s *Session) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Stats returns the session's counters so far.
func (s *Session) Stats() Stats {
	return Stats{
		MessagesIn: s.messagesIn.Load(),
		FramesOut:  s.framesOut.Load(),
		KeepAlives: s.keepAlives.Load(),
		Dropped:    s.dropped.Load(),
		Pongs:      s.pongs.Load(),
	}
}

// Send queues a copy of data as one frame. It never blocks: a full queue
// is ErrQueueFull (the frame is dropped and counted), an ending session
// providers.ErrClosed.
func (s *Session) Send(binary bool, data []byte) error {
	return s.SendFunc(binary, len(data), func(b []byte) { copy(b, data) })
}

// SendFunc queues one frame of n bytes that fill writes into a buffer of
// the session's free list (no allocation once the list is warm). It never
// blocks; errors as Send.
func (s *Session) SendFunc(binary bool, n int, fill func([]byte)) error {
	select {
	case <-s.closing:
		return providers.ErrClosed
	default:
	}
	var buf []byte
	select {
	case buf = <-s.free:
	default:
	}
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	fill(buf)
	select {
	case s.queue <- frame{binary: binary, data: buf, pooled: true}:
		return nil
	default:
		s.recycle(buf)
		s.dropped.Add(1)
		return ErrQueueFull
	}
}

// recycle returns buf to the free list, or lets it go when the list is
// full.
func (s *Session) recycle(buf []byte) {
	select {
	case s.free <- buf:
	default:
	}
}

// ExpectReplyBy arms the reply deadline: when t passes before it is moved
// or disarmed, the session fails with Timeout{Op: op}. The zero t
// disarms it. It never blocks.
func (s *Session) ExpectReplyBy(t time.Time) {
	s.mu.Lock()
	s.replyBy = t
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Ping sends a websocket ping and waits for its pong until ctx ends: an
// adapter probes with it a service that owes no message yet but must still
// be alive (text it holds unflushed). The session's reader reads the pong,
// so none is seen while OnMessage blocks. A pong not in time is ctx's
// error (the connection stays open), an ended session providers.ErrClosed,
// a failed write *providers.Disconnected. It may run concurrently with
// everything else; each call costs the caller's goroutine its wait. Let
// ctx end by its deadline only: coder/websocket closes the connection
// when the context of a write ends while the ping is being written, so a
// cancel to "stop waiting" may cut a healthy session.
func (s *Session) Ping(ctx context.Context) error {
	if s.ending() {
		return providers.ErrClosed
	}
	// The write deadline of the connection is the last frame's, maybe
	// long past: the ping's write gets its own.
	_ = s.raw.SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
	err := s.c.Ping(ctx)
	switch {
	case err == nil:
		s.pongs.Add(1)
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case s.ending():
		return providers.ErrClosed
	}
	return &providers.Disconnected{Cause: fmt.Errorf("ping: %w", err)}
}

// Close sends the goodbye frames, does the close handshake (both within
// CloseTimeout), and waits until the session has ended. Frames still
// queued are dropped. Safe to call more than once; it returns nil.
func (s *Session) Close() error {
	s.end(nil, true)
	<-s.done
	return nil
}

// Abort ends the session with err (a typed provider error) at once,
// without a close handshake, and waits until it has ended.
func (s *Session) Abort(err error) {
	s.end(err, false)
	<-s.done
}

// end records why the session ends (the first reason wins) and tells both
// goroutines.
func (s *Session) end(err error, graceful bool) {
	s.endOnce.Do(func() {
		s.mu.Lock()
		s.err, s.graceful = err, graceful
		s.mu.Unlock()
		close(s.closing)
	})
}

// ending tells whether the session is already ending.
func (s *Session) ending() bool {
	select {
	case <-s.closing:
		return true
	default:
		return false
	}
}

// read is the reader goroutine: one message at a time into a reused
// buffer, handed to OnMessage.
func (s *Session) read() {
	defer close(s.readerDone)
	var buf bytes.Buffer
	for {
		// No context: reads end when the connection is closed, and a
		// Background context costs no timer per message.
		typ, r, err := s.c.Reader(context.Background())
		if err == nil {
			buf.Reset()
			_, err = buf.ReadFrom(r)
		}
		if err != nil {
			if !s.ending() {
				s.end(s.readErr(err), false)
			}
			return
		}
		binary := typ == websocket.MessageBinary
		if (binary && !s.cfg.AcceptBinary) || (!binary && !s.cfg.AcceptText) {
			kind := "text"
			if binary {
				kind = "binary"
			}
			s.end(&providers.Protocol{Detail: "unexpected " + kind + " message"}, false)
			return
		}
		s.messagesIn.Add(1)
		if err := s.h.OnMessage(s, binary, buf.Bytes()); err != nil {
			s.end(err, false)
			return
		}
	}
}

// readErr maps a failed read: an oversized message and a frame the
// library refuses are Protocol, a close frame goes through MapClose, a
// lost connection is Disconnected.
func (s *Session) readErr(err error) error {
	if errors.Is(err, websocket.ErrMessageTooBig) {
		return &providers.Protocol{Detail: fmt.Sprintf("message over %d bytes", s.cfg.ReadLimit)}
	}
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		if s.cfg.MapClose != nil {
			return s.cfg.MapClose(int(ce.Code), ce.Reason)
		}
		return &providers.Disconnected{Cause: fmt.Errorf("closed by the server: status %d", int(ce.Code))}
	}
	if lostConn(err) {
		return &providers.Disconnected{Cause: err}
	}
	// What is left is the library's refusal of a frame (reserved bits,
	// bad opcode, a control frame too long, a bad close payload).
	return &providers.Protocol{Detail: err.Error()}
}

// lostConn tells whether err is a connection that ended or broke, rather
// than a frame the library refused.
func lostConn(err error) bool {
	var op *net.OpError
	var errno syscall.Errno
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, io.ErrClosedPipe) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, os.ErrDeadlineExceeded) ||
		errors.As(err, &op) || errors.As(err, &errno)
}

// write is the writer goroutine: queued frames, keep-alives, the reply
// deadline; then the shutdown, the wait for the reader and OnEnd.
func (s *Session) write() {
	defer close(s.done)
	var keepAlive <-chan time.Time
	var ka *time.Timer
	if s.cfg.KeepAlive > 0 {
		ka = time.NewTimer(s.cfg.KeepAlive)
		defer ka.Stop()
		keepAlive = ka.C
	}
	reply := time.NewTimer(time.Hour)
	reply.Stop()
	defer reply.Stop()
	wrote := func() {
		if ka != nil {
			ka.Reset(s.cfg.KeepAlive)
		}
	}
loop:
	for {
		select {
		case f := <-s.queue:
			err := s.writeFrame(f.binary, f.data)
			if f.pooled {
				s.recycle(f.data)
			}
			if err != nil {
				s.end(err, false)
				break loop
			}
			wrote()
		case <-keepAlive:
			if err := s.writeFrame(false, s.cfg.KeepAliveMessage); err != nil {
				s.end(err, false)
				break loop
			}
			s.keepAlives.Add(1)
			wrote()
		case <-s.wake:
			reply.Stop()
			if by := s.replyDeadline(); !by.IsZero() {
				reply.Reset(time.Until(by))
			}
		case <-reply.C:
			by := s.replyDeadline()
			if by.IsZero() {
				continue
			}
			if d := time.Until(by); d > 0 {
				reply.Reset(d)
				continue
			}
			s.end(&providers.Timeout{Op: s.replyOp()}, false)
			break loop
		case <-s.ctx.Done():
			s.end(s.ctx.Err(), true)
			break loop
		case <-s.closing:
			break loop
		}
	}
	s.shutdown()
	<-s.readerDone
	if s.h.OnEnd != nil {
		s.h.OnEnd(s.Err())
	}
}

func (s *Session) replyDeadline() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.replyBy
}

func (s *Session) replyOp() string {
	if s.cfg.ReplyOp != "" {
		return s.cfg.ReplyOp
	}
	return "reply"
}

// writeFrame writes one message within WriteTimeout. A passed deadline is
// Timeout{Op: "write"}, any other failure a lost connection.
func (s *Session) writeFrame(binary bool, data []byte) error {
	typ := websocket.MessageText
	if binary {
		typ = websocket.MessageBinary
	}
	_ = s.raw.SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
	err := s.c.Write(context.Background(), typ, data)
	if err == nil {
		s.framesOut.Add(1)
		return nil
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return &providers.Timeout{Op: "write"}
	}
	return &providers.Disconnected{Cause: fmt.Errorf("write: %w", err)}
}

// shutdown ends the connection: after Close (or the context's end) the
// goodbye frames and the close handshake within CloseTimeout, after a
// failure at once. The reader stops once the connection is closed.
func (s *Session) shutdown() {
	s.mu.Lock()
	graceful := s.graceful
	s.mu.Unlock()
	if graceful {
		deadline := time.Now().Add(s.cfg.CloseTimeout)
		_ = s.raw.SetDeadline(deadline)
		for _, g := range s.cfg.Goodbye {
			if s.c.Write(context.Background(), websocket.MessageText, g) != nil {
				break
			}
			s.framesOut.Add(1)
		}
		_ = s.c.Close(websocket.StatusNormalClosure, "")
	}
	_ = s.c.CloseNow()
	_ = s.raw.Close()
}
