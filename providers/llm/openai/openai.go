package openai

import (
	"context"
	"net/http"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/httpx"
	"github.com/brisvox/brisvox/providers/llm/internal/httpllm"
)

// cutDetail begins the Disconnected detail of a stream cut before [DONE].
const cutDetail = "stream ended before [DONE]"

// Adapter streams Chat Completions. It is safe for concurrent use: each
// Stream is independent; they share the connection pool.
type Adapter struct {
	core  *httpllm.Adapter // holds the key: never printed (see String)
	model string
}

var (
	_ providers.LLM           = (*Adapter)(nil)
	_ providers.RequestWarmer = (*Adapter)(nil)
	_ providers.Named         = (*Adapter)(nil)
)

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
	auth := http.Header{}
	if key != "" {
		auth.Set("Authorization", "Bearer "+key)
	}
	return &Adapter{model: cfg.Model, core: httpllm.NewAdapter(httpllm.AdapterConfig{
		Client: httpllm.ClientConfig{StreamConfig: streamConfig(&cfg), DialContext: cfg.DialContext,
			Key: key, Header: auth, InvalidConfig: ErrInvalidConfig},
		Name:      "openai.Adapter(" + cfg.BaseURL + ", " + cfg.Model + ")",
		BaseURL:   cfg.BaseURL,
		StreamURL: cfg.BaseURL + "/chat/completions", WarmURL: cfg.BaseURL + "/models",
		NilRequest: ErrNilRequest, InvalidRequest: ErrInvalidRequest,
		Body: func(req *providers.Request) ([]byte, error) { return buildBody(&cfg, req) },
		ProbeBody: func(req *providers.Request) ([]byte, error) {
			p := cfg
			p.MaxTokens = 1
			return buildBody(&p, req)
		},
		NewStream: func() (providers.LLMStream, *httpllm.Stream, httpllm.Decoder) {
			s := &stream{dec: decoder{key: key}}
			return s, &s.Stream, &s.dec
		},
	})}, nil
}

// streamConfig is the bounds of a stream, from cfg after the defaults.
func streamConfig(cfg *Config) httpllm.StreamConfig {
	return httpllm.StreamConfig{
		ConnectTimeout: cfg.ConnectTimeout, FirstEventTimeout: cfg.FirstEventTimeout,
		IdleTimeout: cfg.IdleTimeout, MaxLineBytes: cfg.MaxLineBytes, CutDetail: cutDetail,
	}
}

// Vendor is "openai" (providers.Named).
func (a *Adapter) Vendor() string { return "openai" }

// Model is the model the adapter asks for (providers.Named).
func (a *Adapter) Model() string { return a.model }

// String names the adapter (base URL and model) without its key.
func (a *Adapter) String() string { return a.core.String() }

// GoString is String: %#v must not print the key either.
func (a *Adapter) GoString() string { return a.core.GoString() }

// Close drops the pooled connections. Streams still open keep theirs.
func (a *Adapter) Close() error { return a.core.Close() }

// Warm opens a connection ahead of the first request: a GET of
// {base}/models, read to its end so the keep-alive connection (TCP and
// TLS) stays in the pool for the next Stream. A refusal (a bad key, say)
// is a Rejected.
func (a *Adapter) Warm(ctx context.Context) error { return a.core.Warm(ctx) }

// WarmRequest warms up with a minimal real request instead: one short
// user message with the answer capped at one token, streamed and read to
// its end (for a server that does not serve Warm's model list). The wait
// is bounded by ctx and the stream's deadlines.
func (a *Adapter) WarmRequest(ctx context.Context) error { return a.core.WarmRequest(ctx) }

// WarmProbes names what Warm and WarmRequest send (method and path under
// the base URL, no host or key).
func (a *Adapter) WarmProbes() (warm, request string) { return a.core.WarmProbes() }

// Stream posts req to {base}/chat/completions and returns its response:
// text, call fragments and usage, then LLMDone. The deadlines run from
// here: ConnectTimeout to the response headers, FirstEventTimeout to the
// first event, IdleTimeout between events; each is a Timeout. A non-2xx
// status is a Rejected with a short excerpt of the body.
func (a *Adapter) Stream(ctx context.Context, req *providers.Request) (providers.LLMStream, error) {
	return a.core.Stream(ctx, req)
}
