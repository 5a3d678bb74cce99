package deepgram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/wsconn"
)

// Adapter opens Deepgram live transcription sessions. It is safe for
// concurrent use.
type Adapter struct {
	cfg    Config
	dialer *wsconn.Dialer
}

var _ providers.STT = (*Adapter)(nil)

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
	h.Set("Authorization", "Token "+key)
	d, err := wsconn.New(wsconn.Config{
		URL:              cfg.listenURL(),
		Header:           h,
		ConnectTimeout:   cfg.ConnectTimeout,
		WriteTimeout:     cfg.ResultTimeout,
		CloseTimeout:     cfg.CloseTimeout,
		ReadLimit:        int64(cfg.MaxMessageBytes),
		QueueFrames:      cfg.QueueFrames,
		KeepAlive:        cfg.KeepAlive,
		KeepAliveMessage: msgKeepAlive,
		Goodbye:          [][]byte{msgCloseStream},
		AcceptText:       true,
		ReplyOp:          "result",
		MapClose:         mapClose,
		RejectDetail:     rejectDetail,
		DialContext:      cfg.DialContext,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return &Adapter{cfg: cfg, dialer: d}, nil
}

// Warm opens a connection (TCP and TLS) for the next Connect.
func (a *Adapter) Warm(ctx context.Context) error { return a.dialer.Warm(ctx) }

// Close closes the connection kept by Warm. Sessions already open go on.
func (a *Adapter) Close() error { return a.dialer.Close() }

// Connect opens a session within ConnectTimeout. A refusal is
// *providers.Rejected with the HTTP status, a passed deadline
// *providers.Timeout, a connection that could not be made
// *providers.Disconnected; the cancellation of ctx is ctx's error.
func (a *Adapter) Connect(ctx context.Context) (providers.STTSession, error) {
	s := &session{
		resultTimeout: a.cfg.ResultTimeout,
		events:        make(chan providers.STTEvent, a.cfg.EventBuffer),
		userClosed:    make(chan struct{}),
	}
	ws, err := a.dialer.Dial(ctx, wsconn.Handler{OnMessage: s.onMessage, OnEnd: s.onEnd})
	if err != nil {
		return nil, err
	}
	s.ws = ws
	return s, nil
}

// mapClose maps a close frame the service sent: 1008 (DATA-0000, audio it
// cannot decode) is Protocol, anything else a Disconnected naming the
// status and the service's short reason code.
func mapClose(code int, reason string) error {
	detail := fmt.Sprintf("closed by the service: status %d %s", code, clip(reason, 64))
	if code == 1008 {
		return &providers.Protocol{Detail: detail}
	}
	return &providers.Disconnected{Cause: errors.New(detail)}
}

// rejectDetail is the service's error code of a refused handshake
// ({"err_code": "INVALID_AUTH", ...}), else the status text.
func rejectDetail(resp *http.Response, body []byte) string {
	var e struct {
		Code string `json:"err_code"`
	}
	if json.Unmarshal(body, &e) == nil && e.Code != "" {
		return clip(e.Code, 64)
	}
	return http.StatusText(resp.StatusCode)
}

// session is one live transcription.
type session struct {
	ws            *wsconn.Session
	resultTimeout time.Duration
	events        chan providers.STTEvent
	userClosed    chan struct{}
	closeOnce     sync.Once

	msg          message // the reader goroutine's decode buffer
	emptyInterim atomic.Int64

	// debt: whether a result is owed, guarded by mu (SendAudio and
	// Finalize run on the caller's goroutine, onMessage on the reader's).
	mu              sync.Mutex
	sentSinceMsg    bool // audio or Finalize sent since the last message
	interimOpen     bool // an interim with text awaits its final
	finalizeOwed    bool // a Finalize after audio awaits a final
	audioSinceFinal bool
	// delivering: the reader is blocked handing an event to a caller who
	// is not reading; no deadline runs meanwhile (onMessage re-arms it).
	delivering bool
}

var _ providers.STTSession = (*session)(nil)

// owedLocked tells whether a result is owed.
func (s *session) owedLocked() bool { return s.sentSinceMsg || s.interimOpen || s.finalizeOwed }

// SendAudio queues pcm as one binary frame (little-endian PCM16). It never
// blocks: a full queue drops the frame and returns ErrAudioDropped (the
// session goes on), an ended session returns providers.ErrClosed.
func (s *session) SendAudio(pcm []int16) error {
	if len(pcm) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.ws.SendFunc(true, 2*len(pcm), func(b []byte) {
		for i, v := range pcm {
			b[2*i] = byte(v)
			b[2*i+1] = byte(uint16(v) >> 8)
		}
	})
	switch {
	case errors.Is(err, wsconn.ErrQueueFull):
		return ErrAudioDropped
	case err != nil:
		return err
	}
	owed := s.owedLocked()
	s.sentSinceMsg, s.audioSinceFinal = true, true
	if !owed && !s.delivering {
		s.ws.ExpectReplyBy(time.Now().Add(s.resultTimeout))
	}
	return nil
}

// Finalize sends {"type":"Finalize"}: the service answers with the final
// of the audio sent so far (from_finalize). After audio, a final is owed
// within ResultTimeout.
func (s *session) Finalize() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.ws.Send(false, msgFinalize)
	switch {
	case errors.Is(err, wsconn.ErrQueueFull):
		return ErrControlDropped
	case err != nil:
		return err
	}
	if s.audioSinceFinal {
		owed := s.owedLocked()
		s.finalizeOwed, s.sentSinceMsg = true, true
		if !owed && !s.delivering {
			s.ws.ExpectReplyBy(time.Now().Add(s.resultTimeout))
		}
	}
	return nil
}

// Events delivers the results in order; it is closed when the session
// ends, after one event with Err set if it failed.
func (s *session) Events() <-chan providers.STTEvent { return s.events }

// Close sends CloseStream, closes the websocket (within CloseTimeout) and
// waits for the session's goroutines. No event is delivered after it.
func (s *session) Close() error {
	s.closeOnce.Do(func() { close(s.userClosed) })
	return s.ws.Close()
}

// onMessage decodes one message on the reader goroutine, delivers its
// event and settles the result debt.
func (s *session) onMessage(ws *wsconn.Session, _ bool, data []byte) error {
	k, ev, err := s.msg.decode(data)
	if err != nil {
		return err
	}
	deliver := k == kindUtteranceEnd || (k == kindResult && (ev.Final || ev.Text != ""))
	if k == kindResult && !deliver {
		s.emptyInterim.Add(1)
	}
	if deliver {
		select {
		case <-ws.Closing():
			return nil
		default:
		}
		select {
		case s.events <- ev:
		default:
			// The caller is behind: while the reader waits for it, the
			// service owes nothing (its answers wait in the socket), so
			// the deadline is off until the event is handed over.
			s.mu.Lock()
			s.delivering = true
			s.mu.Unlock()
			ws.ExpectReplyBy(time.Time{})
			select {
			case s.events <- ev:
			case <-ws.Closing():
				return nil
			}
			s.mu.Lock()
			s.delivering = false
			s.mu.Unlock()
		}
	}
	// The deadline restarts once the event is in Events: a reader that
	// lets the buffer fill does not count against the service.
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sentSinceMsg = false
	if k == kindResult {
		if ev.Final {
			s.interimOpen, s.finalizeOwed, s.audioSinceFinal = false, false, false
		} else if ev.Text != "" {
			s.interimOpen = true
		}
	}
	if s.owedLocked() {
		ws.ExpectReplyBy(time.Now().Add(s.resultTimeout))
	} else {
		ws.ExpectReplyBy(time.Time{})
	}
	return nil
}

// onEnd delivers the failure, if any, then closes Events. A session ended
// by Close or by its context reports nothing.
func (s *session) onEnd(err error) {
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		select {
		case s.events <- providers.STTEvent{Err: err}:
		case <-s.userClosed:
		}
	}
	close(s.events)
}

var _ providers.Named = (*Adapter)(nil)

// Vendor is "deepgram" (providers.Named).
func (*Adapter) Vendor() string { return "deepgram" }

// Model is the model it asks for (providers.Named).
func (a *Adapter) Model() string { return a.cfg.Model }
