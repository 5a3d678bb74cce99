package openai

import (
	"context"
	"fmt"
	"net/http"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/llm/internal/httpllm"
)

// cutDetail begins the Disconnected detail of a stream cut before [DONE].
const cutDetail = "stream ended before [DONE]"

// Adapter streams Chat Completions. It is safe for concurrent use: each
// Stream is independent; they share the connection pool.
type Adapter struct {
	cfg       Config
	key       string // never logged, never in an error
	client    *httpllm.Client
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
	key, err := httpllm.KeyFromEnv(cfg.APIKeyEnv, ErrMissingKey)
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	if key != "" {
		h.Set("Authorization", "Bearer "+key)
	}
	return &Adapter{
		cfg: cfg,
		key: key,
		client: httpllm.NewClient(httpllm.ClientConfig{
			StreamConfig: streamConfig(&cfg), DialContext: cfg.DialContext,
			Key: key, Header: h, InvalidConfig: ErrInvalidConfig,
		}),
		chatURL:   cfg.BaseURL + "/chat/completions",
		modelsURL: cfg.BaseURL + "/models",
	}, nil
}

// streamConfig is the bounds of a stream, from cfg after the defaults.
func streamConfig(cfg *Config) httpllm.StreamConfig {
	return httpllm.StreamConfig{
		ConnectTimeout: cfg.ConnectTimeout, FirstEventTimeout: cfg.FirstEventTimeout,
		IdleTimeout: cfg.IdleTimeout, MaxLineBytes: cfg.MaxLineBytes, CutDetail: cutDetail,
	}
}

// String names the adapter without its key.
func (a *Adapter) String() string {
	return "openai.Adapter(" + a.cfg.BaseURL + ", " + a.cfg.Model + ")"
}

// GoString is String: %#v must not print the key either.
func (a *Adapter) GoString() string { return a.String() }

// Close drops the pooled connections. Streams still open keep theirs.
func (a *Adapter) Close() error {
	a.client.CloseIdle()
	return nil
}

// Warm opens a connection ahead of the first request: a GET of the model
// list, read to its end so the keep-alive connection (TCP and TLS) stays in
// the pool for the next Stream. A refusal (a bad key, say) is a Rejected.
func (a *Adapter) Warm(ctx context.Context) error {
	return a.client.Warm(ctx, a.modelsURL)
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
	s := &stream{dec: decoder{key: a.key}}
	if err := a.client.Open(ctx, &s.Stream, a.chatURL, body, &s.dec); err != nil {
		return nil, err
	}
	return s, nil
}
