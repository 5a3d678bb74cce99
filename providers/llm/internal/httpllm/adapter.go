package httpllm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/providers"
)

// AdapterConfig is all of a vendor's adapter but its request encoding and
// its decoder, which come as functions.
type AdapterConfig struct {
	Client ClientConfig
	// Name is what String prints ("openai.Adapter(base, model)"), never
	// the key.
	Name string
	// BaseURL is the API root the other URLs start with: what the probe
	// names leave out (a host is never in a message about a probe).
	BaseURL string
	// StreamURL is posted each request; WarmURL is what Warm reads (the
	// model list).
	StreamURL, WarmURL string
	// NilRequest and InvalidRequest are the vendor's sentinels: Stream
	// given no request, and a request Body cannot encode (wrapped around
	// Body's error).
	NilRequest, InvalidRequest error
	// Body encodes a request as the vendor's JSON.
	Body func(*providers.Request) ([]byte, error)
	// ProbeBody encodes WarmRequest's probe as the vendor's JSON: Body's
	// encoding with the answer capped at one token (and whatever else the
	// vendor must change for that cap to be accepted).
	ProbeBody func(*providers.Request) ([]byte, error)
	// NewStream makes the stream of one response: what the caller gets,
	// the Stream it embeds (zero, for Open) and the decoder it reads with.
	NewStream func() (providers.LLMStream, *Stream, Decoder)
}

// Adapter implements providers.LLM over a Client for one vendor. A
// vendor's Adapter embeds it through an unexported alias, so these are
// the vendor Adapter's methods and nothing else shows. It is safe for
// concurrent use: each Stream is independent; they share the connection
// pool.
type Adapter struct {
	cfg    AdapterConfig
	client *Client
}

var (
	_ providers.LLM           = (*Adapter)(nil)
	_ providers.RequestWarmer = (*Adapter)(nil)
)

// ProbeText is the user message of WarmRequest's probe.
const ProbeText = "Hi"

// NewAdapter builds the client. It does no I/O (Warm does).
func NewAdapter(cfg AdapterConfig) *Adapter {
	return &Adapter{cfg: cfg, client: NewClient(cfg.Client)}
}

// String names the adapter without its key.
func (a *Adapter) String() string { return a.cfg.Name }

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
	return a.client.Warm(ctx, a.cfg.WarmURL)
}

// WarmRequest warms up with a minimal real request: one short user
// message (ProbeText) with the answer capped at one token, posted to
// StreamURL and streamed as Stream streams, read to its end. It serves a
// server without the model list; it costs a request's input tokens. The
// wait is bounded by ctx and the stream's deadlines; a refusal is a
// Rejected, a stream that fails is what Recv returned.
func (a *Adapter) WarmRequest(ctx context.Context) error {
	req := &providers.Request{Messages: []agent.Message{{Role: agent.RoleUser, Text: ProbeText}}}
	body, err := a.cfg.ProbeBody(req)
	if err != nil {
		return fmt.Errorf("%w: %v", a.cfg.InvalidRequest, err)
	}
	s, core, dec := a.cfg.NewStream()
	if err := a.client.Open(ctx, core, a.cfg.StreamURL, body, dec); err != nil {
		return err
	}
	defer s.Close()
	for {
		if _, err := s.Recv(); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
	}
}

// WarmProbes names what Warm and WarmRequest send: the method and the
// path under BaseURL, without host or query ("GET /models", "POST
// /chat/completions").
func (a *Adapter) WarmProbes() (warm, request string) {
	return "GET " + a.probePath(a.cfg.WarmURL), "POST " + a.probePath(a.cfg.StreamURL)
}

// probePath is url under the base URL, without its query.
func (a *Adapter) probePath(url string) string {
	p, _, _ := strings.Cut(strings.TrimPrefix(url, a.cfg.BaseURL), "?")
	return p
}

// Stream posts req and returns its response. The deadlines run from here:
// ConnectTimeout to the response headers, FirstEventTimeout to the first
// event, IdleTimeout between events; each is a Timeout. A non-2xx status
// is a Rejected with a short excerpt of the body.
func (a *Adapter) Stream(ctx context.Context, req *providers.Request) (providers.LLMStream, error) {
	if req == nil {
		return nil, a.cfg.NilRequest
	}
	body, err := a.cfg.Body(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", a.cfg.InvalidRequest, err)
	}
	s, core, dec := a.cfg.NewStream()
	if err := a.client.Open(ctx, core, a.cfg.StreamURL, body, dec); err != nil {
		return nil, err
	}
	return s, nil
}
