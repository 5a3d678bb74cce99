package httpx

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/brisvox/brisvox/providers"
)

// MaxErrorBody bounds what is read of an error response.
const MaxErrorBody = 2 << 10

// ClientConfig sets up NewClient.
type ClientConfig struct {
	// ConnectTimeout bounds the default dial and the TLS handshake.
	ConnectTimeout time.Duration
	// DialContext opens the connections; nil: a net.Dialer bounded by
	// ConnectTimeout.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
	// MaxIdleConnsPerHost is the keep-alive pool per host; 0: 8.
	MaxIdleConnsPerHost int
}

// NewClient builds an adapter's client and its transport (for
// CloseIdleConnections). It does no I/O.
func NewClient(cfg ClientConfig) (*http.Client, *http.Transport) {
	dial := cfg.DialContext
	if dial == nil {
		dial = (&net.Dialer{Timeout: cfg.ConnectTimeout, KeepAlive: 30 * time.Second}).DialContext
	}
	idle := cfg.MaxIdleConnsPerHost
	if idle <= 0 {
		idle = 8
	}
	tr := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         dial,
		ForceAttemptHTTP2:   true,
		TLSHandshakeTimeout: cfg.ConnectTimeout,
		MaxIdleConnsPerHost: idle,
		IdleConnTimeout:     90 * time.Second,
		// A compressed stream would hold deltas or audio back in the
		// decompressor; ask for none.
		DisableCompression: true,
	}
	return &http.Client{
		Transport: tr,
		// A redirect is an answer, not a hop: the key goes to the
		// configured host only.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}, tr
}

// KeyFromEnv reads the API key from the environment variable named env,
// trimmed; an empty env means no key. An unset or empty variable is
// missing (the adapter's sentinel) wrapped with the variable's name, never
// a value.
func KeyFromEnv(env string, missing error) (string, error) {
	if env == "" {
		return "", nil
	}
	key := strings.TrimSpace(os.Getenv(env))
	if key == "" {
		return "", fmt.Errorf("%w: %s", missing, env)
	}
	return key, nil
}

// Rejected reads a short, key-free excerpt of an error response (at most
// MaxErrorBody of its body) into a providers.Rejected with its status.
// The caller closes the body.
func Rejected(resp *http.Response, key string) *providers.Rejected {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, MaxErrorBody))
	return &providers.Rejected{Status: resp.StatusCode, Detail: Excerpt(b, key)}
}
