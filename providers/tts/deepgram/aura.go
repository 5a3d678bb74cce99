package aura

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/wsconn"
)

// Adapter opens Deepgram Aura TTS sessions. It is safe for concurrent
// use.
type Adapter struct {
	cfg    Config
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
	h.Set("Authorization", "Token "+key)
	d, err := wsconn.New(wsconn.Config{
		URL:            cfg.speakURL(),
		Header:         h,
		ConnectTimeout: cfg.ConnectTimeout,
		WriteTimeout:   cfg.ReplyTimeout,
		CloseTimeout:   cfg.CloseTimeout,
		ReadLimit:      int64(cfg.MaxMessageBytes),
		QueueFrames:    cfg.QueueFrames,
		Goodbye:        [][]byte{msgClose},
		AcceptText:     true,
		AcceptBinary:   true,
		ReplyOp:        "reply",
		MapClose:       mapClose,
		RejectDetail:   rejectDetail,
		DialContext:    cfg.DialContext,
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
func (a *Adapter) Connect(ctx context.Context) (providers.TTSSession, error) {
	s := newSession(&a.cfg)
	ws, err := a.dialer.Dial(ctx, wsconn.Handler{OnMessage: s.onMessage, OnEnd: s.onEnd})
	if err != nil {
		return nil, err
	}
	s.start(ws)
	return s, nil
}

// mapClose maps a close frame the service sent: 1008 (a message it could
// not take) is Protocol, anything else a Disconnected naming the status
// and the service's short reason.
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

var _ providers.Named = (*Adapter)(nil)

// Vendor is "deepgram" (providers.Named).
func (*Adapter) Vendor() string { return "deepgram" }

// Model is the model (voice) it asks for (providers.Named).
func (a *Adapter) Model() string { return a.cfg.Model }
