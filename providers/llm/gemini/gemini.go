package gemini

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/llm/internal/wire"
)

// maxErrorBody bounds what is read of an error response.
const maxErrorBody = 2 << 10

// maxWarmBody bounds what Warm reads of the model list.
const maxWarmBody = 1 << 20

// Adapter streams Gemini streamGenerateContent responses. It is safe for concurrent use: each
// Stream is independent; they share the connection pool.
type Adapter struct {
	cfg       Config
	key       string // never logged, never in an error
	transport *http.Transport
	client    *http.Client
	chatURL   string
	modelsURL string
}

var _ providers.LLM = (*Adapter)(nil)

// New checks cfg, reads the key from the environment variable it names and
// builds the HTTP client. It does no I/O (Warm does). The error wraps
// ErrInvalidConfig or ErrMissingKey.
func New(cfg Config) (*Adapter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	var key string
	if cfg.APIKeyEnv != "" {
		key = strings.TrimSpace(os.Getenv(cfg.APIKeyEnv))
		if key == "" {
			return nil, fmt.Errorf("%w: %s", ErrMissingKey, cfg.APIKeyEnv)
		}
	}
	dial := cfg.DialContext
	if dial == nil {
		dial = (&net.Dialer{Timeout: cfg.ConnectTimeout, KeepAlive: 30 * time.Second}).DialContext
	}
	tr := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         dial,
		ForceAttemptHTTP2:   true,
		TLSHandshakeTimeout: cfg.ConnectTimeout,
		MaxIdleConnsPerHost: 8,
		IdleConnTimeout:     90 * time.Second,
		// A compressed event stream would hold deltas back in the
		// decompressor; ask for none.
		DisableCompression: true,
	}
	a := &Adapter{
		cfg:       cfg,
		key:       key,
		transport: tr,
		client: &http.Client{
			Transport: tr,
			// A redirect is an answer, not a hop: the key goes to BaseURL
			// only.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		chatURL:   cfg.BaseURL + "/v1beta/models/" + cfg.Model + ":streamGenerateContent?alt=sse",
		modelsURL: cfg.BaseURL + "/v1beta/models",
	}
	return a, nil
}

// String names the adapter without its key.
func (a *Adapter) String() string {
	return "gemini.Adapter(" + a.cfg.BaseURL + ", " + a.cfg.Model + ")"
}

// GoString is String: %#v must not print the key either.
func (a *Adapter) GoString() string { return a.String() }

// Close drops the pooled connections. Streams still open keep theirs.
func (a *Adapter) Close() error {
	a.transport.CloseIdleConnections()
	return nil
}

// header sets the headers of every request.
func (a *Adapter) header(h http.Header) {
	if a.key != "" {
		h.Set("x-goog-api-key", a.key)
	}
}

// Warm opens a connection ahead of the first request: a GET of the model
// list, read to its end so the keep-alive connection (TCP and TLS) stays in
// the pool for the next Stream. A refusal (a bad key, say) is a Rejected.
func (a *Adapter) Warm(ctx context.Context) error {
	wctx, cancel := context.WithTimeoutCause(ctx, a.cfg.ConnectTimeout, &providers.Timeout{Op: "warm"})
	defer cancel()
	req, err := http.NewRequestWithContext(wctx, http.MethodGet, a.modelsURL, nil)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	a.header(req.Header)
	resp, err := a.client.Do(req)
	if err != nil {
		return mapTransportErr(ctx, wctx, err, false)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return a.rejected(resp)
	}
	if _, err := io.Copy(io.Discard, io.LimitReader(resp.Body, maxWarmBody)); err != nil {
		return mapTransportErr(ctx, wctx, err, false)
	}
	return nil
}

// rejected reads a short excerpt of an error response.
func (a *Adapter) rejected(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	return &providers.Rejected{Status: resp.StatusCode, Detail: wire.Excerpt(b, a.key)}
}

// Stream posts req and returns its response. The deadlines run from here:
// ConnectTimeout to the response headers, FirstEventTimeout to the first
// event, IdleTimeout between events; each is a Timeout. A non-2xx status
// is a Rejected with a short excerpt of the body.
func (a *Adapter) Stream(ctx context.Context, req *providers.Request) (providers.LLMStream, error) {
	if req == nil {
		return nil, ErrNilRequest
	}
	body, err := buildBody(&a.cfg, req)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidRequest, err)
	}
	reqCtx, cancel := context.WithCancelCause(ctx)
	s := &stream{parent: ctx, ctx: reqCtx, cancel: cancel, idle: a.cfg.IdleTimeout, dec: decoder{key: a.key}}
	s.dec.init()
	s.phase.Store(phaseHeaders)
	s.timer = time.AfterFunc(a.cfg.ConnectTimeout, s.expire)
	stop := func() {
		s.timer.Stop()
		cancel(nil)
	}
	hreq, err := http.NewRequestWithContext(reqCtx, http.MethodPost, a.chatURL, bytes.NewReader(body))
	if err != nil {
		stop()
		return nil, fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	a.header(hreq.Header)
	hreq.Header.Set("content-type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")
	resp, err := a.client.Do(hreq)
	if err != nil {
		err = mapTransportErr(ctx, reqCtx, err, false)
		stop()
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		err := a.rejected(resp)
		resp.Body.Close()
		stop()
		return nil, err
	}
	if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, "application/json") {
		resp.Body.Close()
		stop()
		return nil, &providers.Protocol{Detail: "the response is " + ct + ", not an event stream"}
	}
	s.body = resp.Body
	s.sse = wire.NewSSEReader(resp.Body, a.cfg.MaxLineBytes)
	s.arm(phaseFirst, a.cfg.FirstEventTimeout)
	return s, nil
}
