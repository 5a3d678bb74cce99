package openaispeech

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/httpx"
)

// maxWarmBody bounds what Warm reads of the model list.
const maxWarmBody = 1 << 20

// Adapter opens speech sessions on one endpoint. It is safe for concurrent
// use: its sessions share the connection pool.
type Adapter struct {
	cfg       Config
	key       string // never printed (see String)
	auth      string // the Authorization header, "" without a key
	speechURL string
	warmURL   string
	http      *http.Client
	transport *http.Transport
}

var _ providers.TTS = (*Adapter)(nil)

// New checks cfg, reads the key from the environment variable it names and
// builds the HTTP client. It does no I/O (Warm does). The error wraps
// ErrInvalidConfig or ErrMissingKey.
func New(cfg Config) (*Adapter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	key, err := httpx.KeyFromEnv(cfg.APIKeyEnv, ErrMissingKey)
	if err != nil {
		return nil, err
	}
	hc, tr := httpx.NewClient(httpx.ClientConfig{ConnectTimeout: cfg.ConnectTimeout, DialContext: cfg.DialContext})
	a := &Adapter{cfg: cfg, key: key, speechURL: cfg.BaseURL + "/audio/speech", warmURL: cfg.BaseURL + "/models",
		http: hc, transport: tr}
	if key != "" {
		a.auth = "Bearer " + key
	}
	return a, nil
}

// String names the adapter (base URL, model, voice) without its key.
func (a *Adapter) String() string {
	return "openaispeech.Adapter(" + a.cfg.BaseURL + ", " + a.cfg.Model + ", " + a.cfg.Voice + ")"
}

// GoString is String: %#v must not print the key either.
func (a *Adapter) GoString() string { return a.String() }

// EmitsWords is false: the service gives no word timings, so sessions
// send no Word events.
func (a *Adapter) EmitsWords() bool { return false }

// FaultsAtConnect is false: Connect opens nothing, so a refusal or a
// stalled connection shows on the first request, as an event after the
// first text.
func (a *Adapter) FaultsAtConnect() bool { return false }

// Close drops the pooled connections. Sessions still open keep theirs.
func (a *Adapter) Close() error {
	a.transport.CloseIdleConnections()
	return nil
}

// Connect starts a session: its worker goroutine, no request. Cancelling
// ctx ends it and closes Events.
func (a *Adapter) Connect(ctx context.Context) (providers.TTSSession, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return newSession(ctx, a), nil
}

// Warm opens a connection ahead of the first request: a GET of
// {base}/models, read to its end (bounded) so the keep-alive connection
// (TCP and TLS) stays in the pool. A server without the model list (404,
// 405: some local servers) is warm all the same; any other non-2xx status
// (a bad key, say) is a Rejected. The wait is bounded by ConnectTimeout.
func (a *Adapter) Warm(ctx context.Context) error {
	wctx, cancel := context.WithTimeoutCause(ctx, a.cfg.ConnectTimeout, &providers.Timeout{Op: "warm"})
	defer cancel()
	req, err := http.NewRequestWithContext(wctx, http.MethodGet, a.warmURL, nil)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	if a.auth != "" {
		req.Header.Set("Authorization", a.auth)
	}
	resp, err := a.http.Do(req)
	if err != nil {
		return requestErr(ctx, wctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 && resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusMethodNotAllowed {
		return httpx.Rejected(resp, a.key)
	}
	if _, err := io.Copy(io.Discard, io.LimitReader(resp.Body, maxWarmBody)); err != nil {
		return requestErr(ctx, wctx, err)
	}
	return nil
}

var _ providers.Named = (*Adapter)(nil)

// Vendor is "openaispeech" (providers.Named).
func (*Adapter) Vendor() string { return "openaispeech" }

// Model is the model it asks for (providers.Named).
func (a *Adapter) Model() string { return a.cfg.Model }
