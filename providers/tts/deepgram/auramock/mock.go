package auramock

import (
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/brisvox/brisvox/providers/internal/wsmock"
)

// Path is the endpoint's path.
const Path = "/v1/speak"

// DefaultWordDuration is the audio of one word.
const DefaultWordDuration = 200 * time.Millisecond

// Voice is how the mock speaks. The zero value: DefaultWordDuration per
// word in one frame, no pacing, Metadata on connect.
type Voice struct {
	// WordDuration is the audio per word.
	WordDuration time.Duration
	// ChunksPerWord splits a word's audio into that many frames.
	ChunksPerWord int
	// OddFrames cuts the audio into frames of an odd number of bytes (a
	// sample split across two frames).
	OddFrames bool
	// Pace is the wait before each message; zero sends as fast as the
	// connection takes them.
	Pace time.Duration
	// IgnoreClear answers Clear with Cleared only after what was queued,
	// as a server that finishes what it began.
	IgnoreClear bool
	// NoMetadata sends no Metadata message on connect.
	NoMetadata bool
	// FlushLimit answers every Flush after that many in a session with a
	// Warning and no audio (the service allows 20 a minute); 0: none.
	FlushLimit int
}

// Request is one client message as the mock read it.
type Request struct {
	// Type is the message's type: Speak, Flush, Clear, Close, or another.
	Type string
	// Text is a Speak's text.
	Text string
	// Malformed is set for a message that was not a JSON object with a
	// string type, or a binary one.
	Malformed bool
}

// Server is the mock. Its methods are safe for concurrent use.
type Server struct {
	*wsmock.Server

	mu       sync.Mutex
	voice    Voice
	requests []Request
	errors   []string
}

// New starts a server; opts are wsmock's (WithListener).
func New(opts ...wsmock.Option) *Server {
	s := &Server{}
	s.Server = wsmock.New(s.session, opts...)
	return s
}

// URL is the endpoint, ws://host/v1/speak, for Config.URL.
func (s *Server) URL() string { return s.Server.URL(Path) }

// SetVoice sets how later output is spoken (sessions already open
// included).
func (s *Server) SetVoice(v Voice) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.voice = v
}

// FailNext answers the next Flush (on any session) with an Error message
// of err_code code instead of audio.
func (s *Server) FailNext(code string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errors = append(s.errors, code)
}

// Reset drops the scripted errors, the faults not yet used and the
// recorded requests, and sets the default voice.
func (s *Server) Reset() {
	s.mu.Lock()
	s.errors, s.requests, s.voice = nil, nil, Voice{}
	s.mu.Unlock()
	s.ClearFaults()
}

// Requests returns the client messages read so far, over all sessions.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) nextError() (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.errors) == 0 {
		return "", false
	}
	e := s.errors[0]
	s.errors = s.errors[1:]
	return e, true
}

func (s *Server) currentVoice() Voice {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.voice
	if v.WordDuration <= 0 {
		v.WordDuration = DefaultWordDuration
	}
	if v.ChunksPerWord <= 0 {
		v.ChunksPerWord = 1
	}
	return v
}

// out is one queued server message.
type out struct {
	binary  bool
	data    []byte
	cleared bool // the Cleared answer: survives the Clear that queued it
	closes  bool // close the connection after it
}

// sess is one websocket.
type sess struct {
	srv     *Server
	c       *wsmock.Conn
	rate    int
	text    strings.Builder
	queue   []out
	flushes int
	seq     int
}

var _ wsmock.Looper = (*sess)(nil)

func (s *Server) session(c *wsmock.Conn) {
	ss := &sess{srv: s, c: c, rate: 24000}
	if r := c.Request().Query.Get("sample_rate"); r != "" {
		if n, err := parseRate(r); err == nil {
			ss.rate = n
		}
	}
	if !s.currentVoice().NoMetadata {
		_ = c.SendRaw(false, message(map[string]any{"type": "Metadata", "request_id": "00000000-0000-0000-0000-000000000001",
			"model_name": c.Request().Query.Get("model"), "model_version": "mock", "model_uuid": "00000000-0000-0000-0000-000000000002"}))
	}
	wsmock.Loop(c, ss)
}

// Queued tells whether a message waits to be sent.
func (ss *sess) Queued() bool { return len(ss.queue) > 0 }

// Pace is the voice's, read before each message.
func (ss *sess) Pace() time.Duration { return ss.srv.currentVoice().Pace }

// SendNext sends the first queued message, or closes the connection when
// that is what was queued (and ends the session).
func (ss *sess) SendNext() bool {
	o := ss.queue[0]
	ss.queue = ss.queue[1:]
	if o.closes {
		_ = ss.c.CloseWith(1000, "")
		return false
	}
	if o.binary {
		return ss.c.SendBinary(o.data) == nil
	}
	return ss.c.Send(o.data) == nil
}

// Handle reads one client message and queues the answer; false ends the
// session.
func (ss *sess) Handle(m wsmock.Message) bool {
	var raw struct {
		Type *string `json:"type"`
		Text *string `json:"text"`
	}
	if m.Binary || json.Unmarshal(m.Data, &raw) != nil || raw.Type == nil {
		ss.record(Request{Malformed: true})
		_ = ss.c.CloseWith(1008, "DATA-0000")
		return false
	}
	req := Request{Type: *raw.Type}
	if raw.Text != nil {
		req.Text = *raw.Text
	}
	ss.record(req)
	switch req.Type {
	case "Speak":
		if raw.Text == nil {
			_ = ss.c.CloseWith(1008, "DATA-0000")
			return false
		}
		ss.text.WriteString(req.Text)
	case "Flush":
		ss.flush()
	case "Clear":
		ss.text.Reset()
		if !ss.srv.currentVoice().IgnoreClear {
			kept := ss.queue[:0]
			for _, o := range ss.queue {
				if o.cleared {
					kept = append(kept, o)
				}
			}
			ss.queue = kept
		}
		ss.seq++
		ss.queue = append(ss.queue, out{data: message(map[string]any{"type": "Cleared", "sequence_id": ss.seq}), cleared: true})
	case "Close":
		ss.flush()
		ss.queue = append(ss.queue, out{closes: true})
	default:
		ss.queue = append(ss.queue, out{data: message(map[string]any{"type": "Warning", "warn_code": "UNKNOWN_MESSAGE",
			"warn_msg": "The mock does not know this message."})})
	}
	return true
}

// flush speaks the buffer: the words' audio, then Flushed.
func (ss *sess) flush() {
	text := ss.text.String()
	ss.text.Reset()
	if code, ok := ss.srv.nextError(); ok {
		ss.queue = append(ss.queue, out{data: message(map[string]any{"type": "Error", "err_code": code,
			"err_msg": "The mock refused the flush.", "description": "mock"})})
		return
	}
	v := ss.srv.currentVoice()
	ss.flushes++
	if v.FlushLimit > 0 && ss.flushes > v.FlushLimit {
		ss.queue = append(ss.queue, out{data: message(map[string]any{"type": "Warning", "warn_code": "FLUSH_LIMIT",
			"warn_msg": "Too many flushes."})})
		return
	}
	var pcm []byte
	for range strings.Fields(text) {
		n := samples(ss.rate, v.WordDuration)
		word := make([]byte, 2*n)
		for i := range n {
			// A ramp, so that cut or reordered audio shows.
			x := int16(i%2000 - 1000)
			word[2*i], word[2*i+1] = byte(x), byte(uint16(x)>>8)
		}
		if v.OddFrames {
			pcm = append(pcm, word...)
			continue
		}
		ss.queueAudio(word, v.ChunksPerWord)
	}
	if v.OddFrames && len(pcm) > 0 {
		for i := 0; i < len(pcm); i += 1001 {
			ss.queue = append(ss.queue, out{binary: true, data: pcm[i:min(i+1001, len(pcm))]})
		}
	}
	ss.seq++
	ss.queue = append(ss.queue, out{data: message(map[string]any{"type": "Flushed", "sequence_id": ss.seq})})
}

// queueAudio queues pcm as parts frames of whole samples.
func (ss *sess) queueAudio(pcm []byte, parts int) {
	step := (len(pcm)/2 + parts - 1) / parts * 2
	for i := 0; i < len(pcm); i += step {
		ss.queue = append(ss.queue, out{binary: true, data: pcm[i:min(i+step, len(pcm))]})
	}
}

func (ss *sess) record(r Request) {
	ss.srv.mu.Lock()
	defer ss.srv.mu.Unlock()
	ss.srv.requests = append(ss.srv.requests, r)
}

func message(m map[string]any) []byte {
	b, _ := json.Marshal(m)
	return b
}

func samples(rate int, d time.Duration) int { return int(int64(rate) * int64(d) / int64(time.Second)) }

func parseRate(s string) (int, error) {
	var n int
	err := json.Unmarshal([]byte(s), &n)
	return n, err
}
