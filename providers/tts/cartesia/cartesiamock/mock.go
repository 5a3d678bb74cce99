package cartesiamock

import (
	"encoding/base64"
	"encoding/json"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/brisvox/brisvox/providers/internal/wsmock"
)

// Path is the endpoint's path.
const Path = "/tts/websocket"

// DefaultWordDuration is the audio of one word.
const DefaultWordDuration = 200 * time.Millisecond

// Voice is how the mock speaks. The zero value: DefaultWordDuration per
// word in one chunk, no pacing, no leading silence.
type Voice struct {
	// WordDuration is the audio per word.
	WordDuration time.Duration
	// ChunksPerWord splits a word's audio into that many chunk messages.
	ChunksPerWord int
	// LeadingSilence is audio of silence sent ahead of a context's first
	// word, which then starts at that offset.
	LeadingSilence time.Duration
	// Pace is the wait before each message; zero sends as fast as the
	// connection takes them.
	Pace time.Duration
	// IgnoreCancel goes on sending what was queued for a cancelled
	// context, as the service may for a generation it has begun.
	IgnoreCancel bool
}

// Request is one client message as the mock read it.
type Request struct {
	ContextID  string
	Transcript string
	Continue   bool
	Flush      bool
	Cancel     bool
	// Fields are the members of a generation request other than
	// context_id, transcript, continue and flush (model_id, voice,
	// language, output_format, add_timestamps, ...), as decoded JSON.
	Fields map[string]any
	// Malformed is set for a message that was not a JSON object.
	Malformed bool
}

// failure is a scripted error message.
type failure struct {
	status int
	code   string
}

// Server is the mock. Its methods are safe for concurrent use.
type Server struct {
	*wsmock.Server

	mu       sync.Mutex
	voice    Voice
	failures []failure
	requests []Request
}

// New starts a server; opts are wsmock's (WithListener).
func New(opts ...wsmock.Option) *Server {
	s := &Server{}
	s.Server = wsmock.New(s.session, opts...)
	return s
}

// URL is the endpoint, ws://host/tts/websocket, for Config.URL.
func (s *Server) URL() string { return s.Server.URL(Path) }

// SetVoice sets how later output is spoken (sessions already open
// included, from their next context on).
func (s *Server) SetVoice(v Voice) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.voice = v
}

// FailNext makes the next context opened (on any session) answer its
// first request with an error message of status and error_code code
// (e.g. 429 "concurrency_limit_exceeded") instead of audio.
func (s *Server) FailNext(status int, code string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures = append(s.failures, failure{status, code})
}

// Reset drops the scripted failures, the faults not yet used and the
// recorded requests, and sets the default voice.
func (s *Server) Reset() {
	s.mu.Lock()
	s.failures, s.requests, s.voice = nil, nil, Voice{}
	s.mu.Unlock()
	s.ClearFaults()
}

// Requests returns the client messages read so far, over all sessions.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) nextFailure() (failure, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.failures) == 0 {
		return failure{}, false
	}
	f := s.failures[0]
	s.failures = s.failures[1:]
	return f, true
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

// out is one queued server message of a context.
type out struct {
	ctx  string
	data []byte
}

// mctx is one context of a session.
type mctx struct {
	id     string
	fields map[string]any
	rate   int
	voice  Voice
	offset time.Duration // audio spoken so far
	carry  string        // text after the last white space, not spoken yet
	ended  bool          // continue=false read, or cancelled
}

// sess is one websocket.
type sess struct {
	srv      *Server
	c        *wsmock.Conn
	contexts map[string]*mctx
	queue    []out
}

var _ wsmock.Looper = (*sess)(nil)

func (s *Server) session(c *wsmock.Conn) {
	wsmock.Loop(c, &sess{srv: s, c: c, contexts: map[string]*mctx{}})
}

// Handle takes one client message; the session goes on whatever it was.
func (ss *sess) Handle(m wsmock.Message) bool {
	ss.handle(m)
	return true
}

// Queued tells whether a message waits to be sent.
func (ss *sess) Queued() bool { return len(ss.queue) > 0 }

// Pace is the voice's, read before each message.
func (ss *sess) Pace() time.Duration { return ss.srv.currentVoice().Pace }

// SendNext sends the first queued message.
func (ss *sess) SendNext() bool {
	o := ss.queue[0]
	ss.queue = ss.queue[1:]
	return ss.c.Send(o.data) == nil
}

// handle reads one client message and queues the answer.
func (ss *sess) handle(m wsmock.Message) {
	var raw map[string]any
	if m.Binary || json.Unmarshal(m.Data, &raw) != nil {
		ss.record(Request{Malformed: true})
		ss.queueError("", 400, "invalid_request")
		return
	}
	req := Request{Fields: map[string]any{}}
	req.ContextID, _ = raw["context_id"].(string)
	req.Transcript, _ = raw["transcript"].(string)
	req.Continue, _ = raw["continue"].(bool)
	req.Flush, _ = raw["flush"].(bool)
	req.Cancel, _ = raw["cancel"].(bool)
	for k, v := range raw {
		switch k {
		case "context_id", "transcript", "continue", "flush", "cancel":
		default:
			req.Fields[k] = v
		}
	}
	ss.record(req)
	if req.ContextID == "" {
		ss.queueError("", 400, "missing_context_id")
		return
	}
	if req.Cancel {
		if mc := ss.contexts[req.ContextID]; mc != nil {
			mc.ended = true
			if ss.srv.currentVoice().IgnoreCancel {
				return
			}
			kept := ss.queue[:0]
			for _, o := range ss.queue {
				if o.ctx != req.ContextID {
					kept = append(kept, o)
				}
			}
			ss.queue = kept
		}
		return
	}
	mc := ss.contexts[req.ContextID]
	if mc == nil {
		if req.Fields["model_id"] == nil || req.Fields["voice"] == nil || req.Fields["output_format"] == nil {
			ss.queueError(req.ContextID, 400, "invalid_request")
			return
		}
		if f, ok := ss.srv.nextFailure(); ok {
			ss.contexts[req.ContextID] = &mctx{id: req.ContextID, ended: true}
			ss.queueError(req.ContextID, f.status, f.code)
			return
		}
		mc = &mctx{id: req.ContextID, fields: req.Fields, rate: rateOf(req.Fields), voice: ss.srv.currentVoice()}
		ss.contexts[req.ContextID] = mc
		if mc.voice.LeadingSilence > 0 {
			ss.queueAudio(mc, make([]byte, 2*samples(mc.rate, mc.voice.LeadingSilence)))
			mc.offset = mc.voice.LeadingSilence
		}
	} else if mc.ended {
		ss.queueError(req.ContextID, 400, "context_closed")
		return
	} else if !maps.EqualFunc(mc.fields, req.Fields, sameJSON) {
		ss.queueError(req.ContextID, 400, "context_fields_changed")
		return
	}
	text := mc.carry + req.Transcript
	mc.carry = ""
	final := !req.Continue || req.Flush
	if !final && text != "" && !endsInSpace(text) {
		i := strings.LastIndexAny(text, " \t\n\r")
		mc.carry = text[i+1:]
		text = text[:i+1]
	}
	for _, w := range strings.Fields(text) {
		ss.queueWord(mc, w)
	}
	switch {
	case !req.Continue:
		mc.ended = true
		ss.queue = append(ss.queue, out{mc.id, message(map[string]any{"type": "done", "done": true, "status_code": 206, "context_id": mc.id})})
	case req.Flush:
		ss.queue = append(ss.queue, out{mc.id, message(map[string]any{"type": "flush_done", "done": false, "flush_done": true, "flush_id": 1, "status_code": 206, "context_id": mc.id})})
	}
}

func (ss *sess) record(r Request) {
	ss.srv.mu.Lock()
	defer ss.srv.mu.Unlock()
	ss.srv.requests = append(ss.srv.requests, r)
}

// queueWord queues a word's timestamps, then its audio.
func (ss *sess) queueWord(mc *mctx, w string) {
	start, end := mc.offset, mc.offset+mc.voice.WordDuration
	ss.queue = append(ss.queue, out{mc.id, message(map[string]any{
		"type": "timestamps", "done": false, "status_code": 206, "context_id": mc.id,
		"word_timestamps": map[string]any{"words": []string{w}, "start": []float64{start.Seconds()}, "end": []float64{end.Seconds()}},
	})})
	n := samples(mc.rate, mc.voice.WordDuration)
	pcm := make([]byte, 2*n)
	for i := range n {
		// A ramp, so that cut or reordered audio shows.
		v := int16(i%2000 - 1000)
		pcm[2*i], pcm[2*i+1] = byte(v), byte(uint16(v)>>8)
	}
	ss.queueAudio(mc, pcm)
	mc.offset = end
}

// queueAudio queues pcm as ChunksPerWord chunk messages (whole samples).
func (ss *sess) queueAudio(mc *mctx, pcm []byte) {
	parts := mc.voice.ChunksPerWord
	step := (len(pcm)/2 + parts - 1) / parts * 2
	for i := 0; i < len(pcm); i += step {
		part := pcm[i:min(i+step, len(pcm))]
		ss.queue = append(ss.queue, out{mc.id, message(map[string]any{
			"type": "chunk", "data": base64.StdEncoding.EncodeToString(part), "done": false,
			"status_code": 206, "step_time": 12.5, "context_id": mc.id, "flush_id": 1,
		})})
	}
}

func (ss *sess) queueError(ctx string, status int, code string) {
	m := map[string]any{"type": "error", "done": true, "status_code": status, "error_code": code,
		"title": "Mock error", "message": "The mock refused the request."}
	if ctx != "" {
		m["context_id"] = ctx
	}
	ss.queue = append(ss.queue, out{ctx, message(m)})
}

func message(m map[string]any) []byte {
	b, _ := json.Marshal(m)
	return b
}

// rateOf reads output_format.sample_rate (16000 when absent).
func rateOf(fields map[string]any) int {
	if f, ok := fields["output_format"].(map[string]any); ok {
		if r, ok := f["sample_rate"].(float64); ok && r > 0 {
			return int(r)
		}
	}
	return 16000
}

func samples(rate int, d time.Duration) int { return int(int64(rate) * int64(d) / int64(time.Second)) }

func endsInSpace(s string) bool {
	return s != "" && strings.ContainsAny(s[len(s)-1:], " \t\n\r")
}

func sameJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
