package speechmock

import (
	"encoding/json"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Forever is a stall that lasts until the client goes away or the server
// closes.
const Forever time.Duration = math.MaxInt64

// Response scripts the answer to one speech request. The zero Response
// speaks the input in the requested format, unpaced.
type Response struct {
	// Status, when not 0 or 200, is sent with ErrorBody and nothing else.
	Status    int
	ErrorBody string
	// StallHeaders holds the response this long before its headers.
	StallHeaders time.Duration
	// StallFor, when positive, holds the response this long before the
	// audio chunk of index StallBefore (0: before the first; the WAV
	// header is not a chunk here).
	StallBefore int
	StallFor    time.Duration
	// Pace waits this long before each word's chunk (a real-time
	// synthesizer: SamplesPerWord / Rate).
	Pace time.Duration
	// Cut ends the connection after CutAfter audio chunks, without the
	// chunked body's terminator.
	Cut      bool
	CutAfter int
	// Violate ends the body cleanly after ViolateAfter audio chunks (when
	// the next chunk would fall due) with one stray byte: audio that ends
	// inside a sample, a protocol violation mid-body.
	Violate      bool
	ViolateAfter int
	// SplitHeader sends a WAV header one byte per chunk.
	SplitHeader bool
	// OddChunks re-cuts the whole body into chunks of 1, 3, 5, ... 31
	// bytes, then 1 again.
	OddChunks bool
	// BadWAV sends an 8-bit stereo WAV header.
	BadWAV bool
	// ContentType, when set, replaces the audio content type.
	ContentType string
	// SamplesPerWord is each word's audio; 0: DefaultSamplesPerWord.
	SamplesPerWord int
}

// Request is a speech request as received.
type Request struct {
	Auth        string
	ContentType string
	// Body is the parsed JSON body; Input its input.
	Body  map[string]any
	Input string
}

// Server is the mock. Its methods are safe for concurrent use.
type Server struct {
	srv     *httptest.Server
	closing chan struct{}
	conns   atomic.Int64
	chunks  atomic.Int64
	active  atomic.Int64

	mu        sync.Mutex
	queue     []Response
	def       Response
	requests  []Request
	warmAuth  []string
	closeOnce sync.Once
}

// New starts a server on 127.0.0.1:0 answering every request with def
// unless a Response was queued (Enqueue).
func New(def Response) *Server {
	s := &Server{closing: make(chan struct{}), def: def}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.handle))
	s.start()
	return s
}

// NewWithListener is New serving on l (an in-memory listener for a test
// in a testing/synctest bubble, where real sockets cannot be used). The
// server owns l and closes it in Close.
func NewWithListener(l net.Listener, def Response) *Server {
	s := &Server{closing: make(chan struct{}), def: def}
	s.srv = &httptest.Server{Listener: l, Config: &http.Server{Handler: http.HandlerFunc(s.handle)}}
	s.start()
	return s
}

// start counts the connections and serves.
func (s *Server) start() {
	s.srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.srv.Start()
}

// URL is the base URL, like https://api.openai.com/v1.
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// SetDefault replaces the answer given when nothing is queued.
func (s *Server) SetDefault(r Response) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.def = r
}

// Enqueue queues answers for the next speech requests, in order (a fault
// to inject into the next request, say).
func (s *Server) Enqueue(rs ...Response) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, rs...)
}

// Reset drops the queued answers and the records of requests; the default
// stays.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue, s.requests, s.warmAuth = nil, nil, nil
}

// Conns counts the connections accepted so far.
func (s *Server) Conns() int { return int(s.conns.Load()) }

// Chunks counts the audio chunks (words) sent or being sent so far, over
// all requests: a chunk is counted before it is written, so the count is
// never behind what a client has read.
func (s *Server) Chunks() int { return int(s.chunks.Load()) }

// Active counts the speech responses being served now.
func (s *Server) Active() int { return int(s.active.Load()) }

// Requests returns the speech requests received, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// WarmAuth returns the Authorization headers of the GET /v1/models
// requests, in order.
func (s *Server) WarmAuth() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.warmAuth...)
}

// Close releases stalled handlers, then shuts the server down and waits
// for its handlers. Safe to call more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.closing)
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
}

// hold blocks for d, or until the client goes away or the server closes;
// it tells whether the response may go on.
func (s *Server) hold(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return r.Context().Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-r.Context().Done():
		return false
	case <-s.closing:
		return false
	case <-t.C:
		return true
	}
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/v1/models":
		s.mu.Lock()
		s.warmAuth = append(s.warmAuth, r.Header.Get("Authorization"))
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"tts-1","object":"model"}]}`)
		return
	case r.Method == http.MethodPost && r.URL.Path == "/v1/audio/speech":
	default:
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	var body map[string]any
	raw, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err == nil {
		err = json.Unmarshal(raw, &body)
	}
	input, _ := body["input"].(string)
	if err != nil || input == "" {
		http.Error(w, `{"error":{"message":"bad request body"}}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, Request{Auth: r.Header.Get("Authorization"),
		ContentType: r.Header.Get("Content-Type"), Body: body, Input: input})
	resp := s.def
	if len(s.queue) > 0 {
		resp = s.queue[0]
		s.queue = s.queue[1:]
	}
	s.mu.Unlock()
	s.active.Add(1)
	defer s.active.Add(-1)
	format, _ := body["response_format"].(string)
	s.speak(w, r, resp, format, input)
}

// speak writes the response to one request.
func (s *Server) speak(w http.ResponseWriter, r *http.Request, resp Response, format, input string) {
	if !s.hold(r, resp.StallHeaders) {
		return
	}
	if resp.Status != 0 && resp.Status != http.StatusOK {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(resp.Status)
		_, _ = io.WriteString(w, resp.ErrorBody)
		return
	}
	wav := format == "wav"
	ct := "audio/pcm"
	if wav {
		ct = "audio/wav"
	}
	if resp.ContentType != "" {
		ct = resp.ContentType
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	if rc.Flush() != nil {
		return
	}
	odd := 0 // the next odd chunk's size index
	write := func(b []byte) bool {
		for len(b) > 0 {
			n := len(b)
			if resp.OddChunks {
				n = min(n, 2*odd+1)
				odd = (odd + 1) % 16
			}
			if _, err := w.Write(b[:n]); err != nil || rc.Flush() != nil {
				return false
			}
			b = b[n:]
		}
		return true
	}
	if wav {
		h := wavHeader(resp.BadWAV)
		if resp.SplitHeader {
			for i := range h {
				if !write(h[i : i+1]) {
					return
				}
			}
		} else if !write(h) {
			return
		}
	}
	per := resp.SamplesPerWord
	if per <= 0 {
		per = DefaultSamplesPerWord
	}
	for i, word := range strings.Fields(input) {
		if resp.Cut && i == resp.CutAfter {
			cut(w)
			return
		}
		if resp.StallFor > 0 && i == resp.StallBefore && !s.hold(r, resp.StallFor) {
			return
		}
		if !s.hold(r, resp.Pace) {
			return
		}
		if resp.Violate && i == resp.ViolateAfter {
			_ = write([]byte{0})
			return
		}
		s.chunks.Add(1)
		if !write(wordPCM(word, per)) {
			return
		}
	}
	if resp.Cut {
		cut(w)
	}
	if resp.Violate && resp.ViolateAfter >= len(strings.Fields(input)) {
		_ = write([]byte{0})
	}
}

// cut closes the connection so the chunked body ends without its
// terminator: a cut, not a clean end.
func cut(w http.ResponseWriter) {
	if c, _, err := http.NewResponseController(w).Hijack(); err == nil {
		_ = c.Close()
	}
}
