package main

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brisvox/brisvox/cmd/internal/gate"
	"github.com/coder/websocket"
)

// TestServeGuardedEndpoints: with token_env and signing_secret_env in
// the agent file, serve's /pcm and POST /webrtc/offer refuse a caller
// without a credential (401) and take one with the bearer token or a
// signed URL. Mutation caught: mountTransports mounting the handlers
// without their gate (the bare dial is upgraded).
func TestServeGuardedEndpoints(t *testing.T) {
	if testing.Short() {
		t.Skip("real sockets and engines on loopback")
	}
	const token = "a-bearer-token-of-more-than-32-characters"
	secret := "a-signing-secret-of-more-than-32-characters"
	t.Setenv("BV_TEST_TOKEN", token)
	t.Setenv("BV_TEST_SECRET", secret)
	local, err := os.ReadFile(filepath.Join(moduleRoot(t), "examples", "agents", "local.toml"))
	if err != nil {
		t.Fatal(err)
	}
	access := "token_env = \"BV_TEST_TOKEN\"\nsigning_secret_env = \"BV_TEST_SECRET\"\n"
	file := strings.Replace(string(local), "[transports.pcm]\n", "[transports.pcm]\n"+access, 1)
	file = strings.Replace(file, "[transports.webrtc]\n", "[transports.webrtc]\n"+access, 1)
	agent := filepath.Join(t.TempDir(), "guarded.toml")
	if err := os.WriteFile(agent, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	base, stop, stderr := servedWith(t, serveFlags{agent: agent, maxCalls: 4, drain: 2 * time.Second, sipAddr: "127.0.0.1:0"})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ws := "ws" + strings.TrimPrefix(base, "http")

	if _, resp, err := websocket.Dial(ctx, ws+"/pcm?rate=16000", nil); err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("/pcm without a credential: %v %v, want 401", resp, err)
	}
	c, _, err := websocket.Dial(ctx, ws+"/pcm?rate=16000", &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}})
	if err != nil {
		t.Errorf("/pcm with the bearer token: %v", err)
	} else {
		_ = c.CloseNow()
	}
	q := gate.Sign([]byte(secret), http.MethodGet, "/pcm", url.Values{"rate": {"16000"}}, time.Now().Add(time.Minute))
	c, _, err = websocket.Dial(ctx, ws+"/pcm?"+q, nil)
	if err != nil {
		t.Errorf("/pcm with a signed URL: %v", err)
	} else {
		_ = c.CloseNow()
	}

	offer := func(h http.Header) int {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/webrtc/offer", strings.NewReader(`{"type":"offer","sdp":"v=0"}`))
		req.Header = h
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := offer(http.Header{}); got != http.StatusUnauthorized {
		t.Errorf("offer without a credential: %d, want 401", got)
	}
	// Past the gate, the offer is refused for what it is (a bad SDP).
	if got := offer(http.Header{"Authorization": {"Bearer " + token}}); got == http.StatusUnauthorized || got == http.StatusForbidden {
		t.Errorf("offer with the bearer token: %d", got)
	}
	if code := stop(); code != 0 {
		t.Errorf("serve exited %d:\n%s", code, stderr)
	}
}
