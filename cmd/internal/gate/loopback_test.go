package gate

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/goleak"
)

// TestLoopbackWebsocket puts the gate in front of a websocket endpoint
// on a real loopback socket: the upgrade passes the gate (Hijack
// reaches the handler's writer) with a token or a signed URL, is refused
// before any upgrade without one, and the source's burst holds. Counts
// only, no timings.
func TestLoopbackWebsocket(t *testing.T) {
	if testing.Short() {
		t.Skip("loopback sockets")
	}
	before := goleak.IgnoreCurrent()
	defer goleak.VerifyNone(t, before)

	const burst = 6
	g, err := New(Config{Token: testToken, Secret: []byte(testSecret), Burst: burst, RatePerSec: 0.001})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	upgraded := 0
	srv := httptest.NewServer(g.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			t.Errorf("accept: %v", err)
			return
		}
		upgraded++
		c.Close(websocket.StatusNormalClosure, "")
	})))
	defer srv.Close()
	base := "ws" + strings.TrimPrefix(srv.URL, "http")

	dial := func(target, auth string) int {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		opts := &websocket.DialOptions{HTTPHeader: http.Header{}}
		if auth != "" {
			opts.HTTPHeader.Set("Authorization", auth)
		}
		c, resp, err := websocket.Dial(ctx, base+target, opts)
		if err == nil {
			c.Close(websocket.StatusNormalClosure, "")
			return http.StatusSwitchingProtocols
		}
		if resp == nil {
			t.Fatalf("dial %s: %v", target, err)
		}
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("dial %s timed out", target)
		}
		if resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("Retry-After") == "" {
			t.Errorf("429 without Retry-After")
		}
		return resp.StatusCode
	}
	signedURL := signed(testSecret, "GET", "/pcm", url.Values{"k": {"v"}}, time.Now().Add(time.Minute))
	steps := []struct {
		target, auth string
		want         int
	}{
		{"/pcm", "Bearer " + testToken, 101},
		{signedURL, "", 101},
		{"/pcm", "", 401},
		{"/pcm", "Bearer " + testSecret, 403},
		{signedURL + "&k=w", "", 403},
		{"/pcm", "Bearer " + testToken, 101},
		{"/pcm", "Bearer " + testToken, 429}, // the burst of 6 is spent
		{signedURL, "", 429},
	}
	for i, s := range steps {
		if got := dial(s.target, s.auth); got != s.want {
			t.Errorf("step %d (%s): %d, want %d", i, s.target, got, s.want)
		}
	}
	srv.Close()
	if upgraded != 3 {
		t.Errorf("%d upgrades reached the handler, want 3", upgraded)
	}
	st := g.Stats()
	if st[CauseUnauthorized] != 1 || st[CauseForbidden] != 2 || st[CauseRateLimited] != 2 {
		t.Errorf("stats %v", st)
	}
}
