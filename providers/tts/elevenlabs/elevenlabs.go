package elevenlabs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/wsconn"
)

// Adapter opens ElevenLabs multi-context TTS sessions. It is safe for
// concurrent use.
type Adapter struct {
	cfg    Config
	dialer *wsconn.Dialer
	// extrasFirst and extras are the opening members of a socket's first
	// context and of the others (Config.openingExtras).
	extrasFirst, extras []byte
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
	h.Set("xi-api-key", key)
	wc := wsconn.Config{
		URL:            cfg.streamURL(),
		Header:         h,
		ConnectTimeout: cfg.ConnectTimeout,
		WriteTimeout:   cfg.ReplyTimeout,
		CloseTimeout:   cfg.CloseTimeout,
		ReadLimit:      int64(cfg.MaxMessageBytes),
		QueueFrames:    cfg.QueueFrames,
		Goodbye:        [][]byte{msgCloseSocket},
		AcceptText:     true,
		ReplyOp:        "audio",
		MapClose:       mapClose,
		RejectDetail:   rejectDetail,
		DialContext:    cfg.DialContext,
	}
	if !cfg.NoKeepAlive {
		wc.KeepAlive, wc.KeepAliveMessage = cfg.KeepAlive, msgKeepAlive
	}
	d, err := wsconn.New(wc)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return &Adapter{cfg: cfg, dialer: d, extrasFirst: cfg.openingExtras(true), extras: cfg.openingExtras(false)}, nil
}

// Warm opens a connection (TCP and TLS) for the next Connect.
func (a *Adapter) Warm(ctx context.Context) error { return a.dialer.Warm(ctx) }

// Close closes the connection kept by Warm. Sessions already open go on.
func (a *Adapter) Close() error { return a.dialer.Close() }

// Rate is the sample rate of the sessions' audio.
func (a *Adapter) Rate() int { return a.cfg.SampleRate }

// Connect opens a session within ConnectTimeout. A refusal is
// *providers.Rejected with the HTTP status, a passed deadline
// *providers.Timeout, a connection that could not be made
// *providers.Disconnected; the cancellation of ctx is ctx's error. The
// session must be closed.
func (a *Adapter) Connect(ctx context.Context) (providers.TTSSession, error) {
	s := newSession(ctx, a)
	ws, err := a.dialer.Dial(ctx, wsconn.Handler{OnMessage: s.onMessage, OnEnd: s.onEnd})
	if err != nil {
		return nil, err
	}
	s.start(ws)
	return s, nil
}

// mapClose maps a close frame the service sent. The service reports its
// refusals as 1008 with a sentence: a bad key and a quota or a limit are
// Rejected (401, 429), any other 1008 is Protocol (a message it refused),
// anything else a Disconnected naming the status.
func mapClose(code int, reason string) error {
	detail := fmt.Sprintf("closed by the service: status %d %s", code, clip(reason, 96))
	if code != 1008 {
		return &providers.Disconnected{Cause: errors.New(detail)}
	}
	r := strings.ToLower(reason)
	has := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(r, w) {
				return true
			}
		}
		return false
	}
	switch {
	case has("api key", "api_key", "unauthorized", "authenticat", "authoriz"):
		return &providers.Rejected{Status: http.StatusUnauthorized, Detail: detail}
	case has("quota", "credits", "exceed", "too many", "concurren", "rate limit"):
		return &providers.Rejected{Status: http.StatusTooManyRequests, Detail: detail}
	}
	return &providers.Protocol{Detail: detail}
}

// rejectDetail is the service's status code of a refused handshake
// ({"detail": {"status": "invalid_api_key", "message": ...}}), else the
// status text.
func rejectDetail(resp *http.Response, body []byte) string {
	var e struct {
		Detail struct {
			Status string `json:"status"`
		} `json:"detail"`
	}
	if json.Unmarshal(body, &e) == nil && e.Detail.Status != "" {
		return clip(e.Detail.Status, 64)
	}
	return http.StatusText(resp.StatusCode)
}

var _ providers.Named = (*Adapter)(nil)

// Vendor is "elevenlabs" (providers.Named).
func (*Adapter) Vendor() string { return "elevenlabs" }

// Model is the model it asks for (providers.Named).
func (a *Adapter) Model() string { return a.cfg.Model }
