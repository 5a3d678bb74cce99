package cartesia

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/ttspump"
	"github.com/brisvox/brisvox/providers/internal/wsconn"
)

// Adapter opens Cartesia TTS sessions. It is safe for concurrent use.
type Adapter struct {
	cfg    Config
	fields []byte // the repeated members of every generation request
	dialer *wsconn.Dialer
}

var _ providers.TTS = (*Adapter)(nil)

// New checks cfg, reads the key from the environment variable it names
// and makes an Adapter. It does no I/O.
func New(cfg Config) (*Adapter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	key := os.Getenv(cfg.APIKeyEnv)
	if key == "" {
		return nil, fmt.Errorf("%w: %s", ErrMissingKey, cfg.APIKeyEnv)
	}
	h := http.Header{}
	h.Set("X-API-Key", key)
	h.Set("Cartesia-Version", cfg.Version)
	d, err := wsconn.New(wsconn.Config{
		URL:            cfg.URL,
		Header:         h,
		ConnectTimeout: cfg.ConnectTimeout,
		WriteTimeout:   cfg.ReplyTimeout,
		CloseTimeout:   cfg.CloseTimeout,
		ReadLimit:      int64(cfg.MaxMessageBytes),
		QueueFrames:    cfg.QueueFrames,
		AcceptText:     true,
		ReplyOp:        "reply",
		RejectDetail:   rejectDetail,
		DialContext:    cfg.DialContext,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return &Adapter{cfg: cfg, fields: cfg.requestFields(), dialer: d}, nil
}

// Warm opens a connection (TCP and TLS) for the next Connect.
func (a *Adapter) Warm(ctx context.Context) error { return a.dialer.Warm(ctx) }

// Close closes the connection kept by Warm. Sessions already open go on.
func (a *Adapter) Close() error { return a.dialer.Close() }

// rejectDetail is the service's short error code of a refused handshake
// (a JSON body with error_code or title), else the status text.
func rejectDetail(resp *http.Response, body []byte) string {
	var e struct {
		Code  string `json:"error_code"`
		Title string `json:"title"`
	}
	if json.Unmarshal(body, &e) == nil {
		if e.Code != "" {
			return clip(e.Code, 64)
		}
		if e.Title != "" {
			return clip(e.Title, 64)
		}
	}
	return http.StatusText(resp.StatusCode)
}

// Connect opens a session within ConnectTimeout. A refusal is
// *providers.Rejected with the HTTP status, a passed deadline
// *providers.Timeout, a connection that could not be made
// *providers.Disconnected; the cancellation of ctx is ctx's error.
func (a *Adapter) Connect(ctx context.Context) (providers.TTSSession, error) {
	s := newSession(&a.cfg, a.fields)
	ws, err := a.dialer.Dial(ctx, wsconn.Handler{OnMessage: s.onMessage, OnEnd: s.onEnd})
	if err != nil {
		return nil, err
	}
	s.ws = ws
	s.pump.Start()
	return s, nil
}

// state is where a context is.
type state int

const (
	stateOpen      state = iota // text pushed, not flushed
	stateFlushing               // flushed, its done not yet received
	stateCancelled              // cancelled; its messages are dropped
)

// tctx is one context of a session.
type tctx struct {
	id, wire string
	state    state
	odd      int16 // a byte left over from an odd-sized chunk, when hasOdd
	hasOdd   bool
}

// Stats counts what a session dropped.
type Stats struct {
	// Dropped counts the inbound messages of cancelled or unknown
	// contexts, dropped unread.
	Dropped int64
	// Retracted counts the events of cancelled contexts taken back before
	// they reached Events.
	Retracted int64
	// CancelsUnsent counts the cancels the full send queue refused; the
	// context was cancelled locally all the same.
	CancelsUnsent int64
}

// session is one websocket with its contexts.
type session struct {
	cfg    *Config
	fields []byte
	ws     *wsconn.Session
	dec    decoder // the reader goroutine's
	pump   *ttspump.Pump

	mu           sync.Mutex // guards the pump's queue too
	byID         map[string]*tctx
	byWire       map[string]*tctx
	nextWire     int
	sentSinceMsg []*tctx // contexts sent to since the last message received
	flushing     int     // contexts awaiting their done
	buf          []byte

	dropped, retracted, cancelsUnsent atomic.Int64
}

var _ providers.TTSSession = (*session)(nil)

// newSession makes a session whose pump is not started yet.
func newSession(cfg *Config, fields []byte) *session {
	s := &session{cfg: cfg, fields: fields, byID: map[string]*tctx{}, byWire: map[string]*tctx{}}
	s.pump = ttspump.New(&s.mu, cfg.EventBuffer)
	return s
}

// Stats returns the session's counters so far.
func (s *session) Stats() Stats {
	return Stats{Dropped: s.dropped.Load(), Retracted: s.retracted.Load(), CancelsUnsent: s.cancelsUnsent.Load()}
}

// StatsOf returns the counters of a session this package opened.
func StatsOf(ts providers.TTSSession) (Stats, bool) {
	s, ok := ts.(*session)
	if !ok {
		return Stats{}, false
	}
	return s.Stats(), true
}

// closingLocked tells whether the session is ending or ended.
func (s *session) closingLocked() bool {
	select {
	case <-s.ws.Closing():
		return true
	default:
		return s.pump.EndedLocked()
	}
}

// closedErr is the error of a call on a session that is ending:
// providers.ErrClosed, wrapping the failure when the session failed (as
// Events reports it), so the caller sees why without reading Events.
func (s *session) closedErr() error {
	err := s.ws.Err()
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return providers.ErrClosed
	}
	return fmt.Errorf("%w: %w", providers.ErrClosed, err)
}

// owedLocked tells whether the service owes an answer.
func (s *session) owedLocked() bool { return len(s.sentSinceMsg) > 0 || s.flushing > 0 }

// sendLocked queues one message built by build into the session's
// scratch buffer; a full queue is ErrTextDropped.
func (s *session) sendLocked(build func([]byte) []byte) error {
	s.buf = build(s.buf[:0])
	switch err := s.ws.Send(false, s.buf); {
	case errors.Is(err, wsconn.ErrQueueFull):
		return ErrTextDropped
	case errors.Is(err, providers.ErrClosed):
		// The session ended since closingLocked looked.
		return s.closedErr()
	default:
		return err
	}
}

// sentLocked records that an answer is owed for a message just sent to
// context c.
func (s *session) sentLocked(c *tctx) {
	if !s.owedLocked() {
		s.ws.ExpectReplyBy(time.Now().Add(s.cfg.ReplyTimeout))
	}
	if !slices.Contains(s.sentSinceMsg, c) {
		s.sentSinceMsg = append(s.sentSinceMsg, c)
	}
}

// Push sends text to the context with continue=true, opening the context
// on first use. Empty text sends nothing. It never blocks: a full send
// queue is ErrTextDropped, a context being flushed ErrContextClosed, an
// ended session providers.ErrClosed (wrapping the failure if it failed).
func (s *session) Push(contextID, text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closingLocked() {
		return s.closedErr()
	}
	if text == "" {
		return nil
	}
	c := s.byID[contextID]
	if c != nil && c.state != stateOpen {
		return fmt.Errorf("%w: Push", ErrContextClosed)
	}
	wire := ""
	if c != nil {
		wire = c.wire
	} else {
		wire = "ctx-" + strconv.Itoa(s.nextWire+1)
	}
	if err := s.sendLocked(func(b []byte) []byte { return appendRequest(b, s.fields, wire, text, true) }); err != nil {
		return err
	}
	if c == nil {
		s.nextWire++
		c = &tctx{id: contextID, wire: wire}
		s.byID[contextID], s.byWire[wire] = c, c
	}
	s.sentLocked(c)
	return nil
}

// Flush ends the context: an empty transcript with continue=false, after
// which the service speaks what it holds and sends done (Flushed). A
// context never pushed is Flushed at once; a second Flush does nothing.
func (s *session) Flush(contextID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closingLocked() {
		return s.closedErr()
	}
	c := s.byID[contextID]
	switch {
	case c == nil:
		s.queueLocked(providers.TTSEvent{Kind: providers.TTSFlushed, ContextID: contextID})
		return nil
	case c.state != stateOpen:
		return nil
	}
	if err := s.sendLocked(func(b []byte) []byte { return appendRequest(b, s.fields, c.wire, "", false) }); err != nil {
		return err
	}
	// sentLocked first: it arms the deadline only when nothing was owed,
	// which a flushing count already raised would hide.
	s.sentLocked(c)
	c.state = stateFlushing
	s.flushing++
	return nil
}

// Cancel stops the context: the cancel message goes out, the context's
// events not yet in Events are taken back, its later messages are
// dropped, and the Cancelled ack is queued at once (the service sends
// none). It never blocks; a cancel the full queue refuses is counted and
// the context is cancelled locally all the same.
func (s *session) Cancel(contextID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closingLocked() {
		return s.closedErr()
	}
	if c := s.byID[contextID]; c != nil {
		delete(s.byID, contextID)
		if c.state == stateFlushing {
			s.flushing--
		}
		c.state = stateCancelled
		// What was sent to it owes nothing now: the service may stay
		// silent about a cancelled context.
		s.sentSinceMsg = slices.DeleteFunc(s.sentSinceMsg, func(x *tctx) bool { return x == c })
		s.buf = appendCancel(s.buf[:0], c.wire)
		switch err := s.ws.Send(false, s.buf); {
		case errors.Is(err, wsconn.ErrQueueFull):
			s.cancelsUnsent.Add(1)
		case errors.Is(err, providers.ErrClosed):
			return s.closedErr()
		case err != nil:
			return err
		}
		if !s.owedLocked() {
			s.ws.ExpectReplyBy(time.Time{})
		}
	}
	// The context's events not yet handed over, its Flushed included
	// (the service may have finished it already), are taken back.
	s.retracted.Add(int64(s.pump.RetractLocked(contextID)))
	s.queueLocked(providers.TTSEvent{Kind: providers.TTSCancelled, ContextID: contextID})
	return nil
}

// Events delivers audio, words, Flushed and Cancelled in order; it is
// closed when the session ends, after one event with Err set if it
// failed.
func (s *session) Events() <-chan providers.TTSEvent { return s.pump.Events() }

// Close closes the websocket (within CloseTimeout) and waits for the
// session's goroutines. No event is delivered after it.
func (s *session) Close() error {
	s.pump.Stop()
	_ = s.ws.Close()
	s.pump.Wait()
	return nil
}

// queueLocked appends ev for the pump.
func (s *session) queueLocked(ev providers.TTSEvent) { s.pump.QueueLocked(ev) }

// onMessage decodes one message on the reader goroutine and queues its
// events; it waits (deadline disarmed) while PendingEvents are queued.
func (s *session) onMessage(ws *wsconn.Session, _ bool, data []byte) error {
	m, err := s.dec.decode(data)
	if err != nil {
		return err
	}
	for {
		s.mu.Lock()
		if s.pump.PendingLocked() < s.cfg.PendingEvents {
			break
		}
		ws.ExpectReplyBy(time.Time{})
		s.mu.Unlock()
		select {
		case <-s.pump.Space():
		case <-ws.Closing():
			return nil
		}
	}
	defer s.mu.Unlock()
	if err := s.applyLocked(m); err != nil {
		return err
	}
	clear(s.sentSinceMsg)
	s.sentSinceMsg = s.sentSinceMsg[:0]
	if s.owedLocked() {
		ws.ExpectReplyBy(time.Now().Add(s.cfg.ReplyTimeout))
	} else {
		ws.ExpectReplyBy(time.Time{})
	}
	return nil
}

// applyLocked turns a decoded message into events of its context.
func (s *session) applyLocked(m *message) error {
	switch m.kind {
	case kindOther, kindFlushDone:
		return nil
	case kindError:
		if c := s.byWire[string(m.ctx)]; m.ctx != nil && c != nil && c.state == stateCancelled {
			delete(s.byWire, c.wire)
			s.dropped.Add(1)
			return nil
		}
		detail := m.code
		if m.status == 0 {
			return &providers.Protocol{Detail: "error message from the service: " + detail}
		}
		return &providers.Rejected{Status: m.status, Detail: detail}
	}
	if m.ctx == nil {
		return &providers.Protocol{Detail: "message without a context_id"}
	}
	c := s.byWire[string(m.ctx)]
	if c == nil || c.state == stateCancelled {
		s.dropped.Add(1)
		if c != nil && m.kind == kindDone {
			delete(s.byWire, c.wire)
		}
		return nil
	}
	switch m.kind {
	case kindChunk:
		if pcm := c.samples(m.audio); len(pcm) > 0 {
			s.queueLocked(providers.TTSEvent{Kind: providers.TTSAudio, ContextID: c.id, Rate: s.cfg.SampleRate, PCM: pcm})
		}
	case kindTimestamps:
		for i, w := range m.words {
			s.queueLocked(providers.TTSEvent{Kind: providers.TTSWord, ContextID: c.id, Word: w,
				Offset: time.Duration(m.starts[i] * float64(time.Second))})
		}
	case kindDone:
		if c.state == stateFlushing {
			s.flushing--
		}
		delete(s.byWire, c.wire)
		if s.byID[c.id] == c {
			delete(s.byID, c.id)
		}
		s.queueLocked(providers.TTSEvent{Kind: providers.TTSFlushed, ContextID: c.id})
	}
	return nil
}

// samples converts little-endian PCM16 bytes to samples, carrying an odd
// byte over to the context's next chunk.
func (c *tctx) samples(b []byte) []int16 {
	n := len(b)
	if c.hasOdd {
		n++
	}
	pcm := make([]int16, n/2)
	i := 0
	if c.hasOdd && len(b) > 0 {
		pcm[0] = int16(uint16(c.odd) | uint16(b[0])<<8)
		b, i, c.hasOdd = b[1:], 1, false
	}
	for j := 0; j+1 < len(b); j += 2 {
		pcm[i] = int16(uint16(b[j]) | uint16(b[j+1])<<8)
		i++
	}
	if len(b)%2 == 1 {
		c.odd, c.hasOdd = int16(b[len(b)-1]), true
	}
	return pcm
}

// onEnd records the session's end for the pump. A session ended by
// Close or by its context drops what is pending and reports nothing.
func (s *session) onEnd(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pump.EndLocked(err)
}

var _ providers.Named = (*Adapter)(nil)

// Vendor is "cartesia" (providers.Named).
func (*Adapter) Vendor() string { return "cartesia" }

// Model is the model it asks for (providers.Named).
func (a *Adapter) Model() string { return a.cfg.Model }
