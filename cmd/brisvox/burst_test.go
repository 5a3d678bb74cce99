package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/goleak"
)

// TestServeBurstAdmitsExactlyTheLimit: 60 PCM websockets dialled at once
// through the whole serve chain (the gate, admission, the upgrade)
// against a limit of 8: exactly 8 are upgraded, the 52 others get 503
// with Retry-After and the cause "full" before any upgrade; once the 8
// hung up, a call is admitted again (no slot leaked). Issue 14 defect 1:
// 22-49 of 200 were upgraded for a limit of 20 and the extra ones closed
// with 1000. Here the window between the check and the start is too
// short to show that race; serve's TestAdmissionReserves pins it
// deterministically. This one guards the chain end to end: mutation
// caught, the transport's 503 without Retry-After (52 "other"). Real
// sockets and engines: skipped with -short.
func TestServeBurstAdmitsExactlyTheLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("real sockets and engines on loopback")
	}
	leaks := goleak.IgnoreCurrent()
	local, err := os.ReadFile(filepath.Join(moduleRoot(t), "examples", "agents", "local.toml"))
	if err != nil {
		t.Fatal(err)
	}
	// One source dials them all: its rate limit must not be what
	// refuses them here.
	agent := filepath.Join(t.TempDir(), "burst.toml")
	if err := os.WriteFile(agent, append(local, "\n[serve]\nburst = 1000\nrate_limit = 1000\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	base, stop, stderr := servedWith(t, serveFlags{agent: agent, maxCalls: 8, drain: 2 * time.Second, sipAddr: "127.0.0.1:0"})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	url := "ws" + strings.TrimPrefix(base, "http") + "/pcm?rate=16000"
	const n = 60
	var (
		mu       sync.Mutex
		admitted []*websocket.Conn
		refused  int
		other    []string
		wg       sync.WaitGroup
	)
	start := make(chan struct{})
	for range n {
		wg.Go(func() {
			<-start
			ws, resp, err := websocket.Dial(ctx, url, nil)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				admitted = append(admitted, ws)
			case resp != nil && resp.StatusCode == http.StatusServiceUnavailable:
				body, _ := io.ReadAll(resp.Body)
				var b struct{ Cause string }
				_ = json.Unmarshal(body, &b)
				if resp.Header.Get("Retry-After") == "" || b.Cause != "full" {
					other = append(other, "503 without Retry-After or cause full: "+string(body))
					return
				}
				refused++
			default:
				other = append(other, err.Error())
			}
		})
	}
	close(start)
	wg.Wait()
	if len(admitted) != 8 || refused != n-8 || len(other) > 0 {
		t.Errorf("admitted %d, refused %d, other %v; want 8 and %d", len(admitted), refused, other, n-8)
	}
	for _, ws := range admitted {
		_ = ws.Write(ctx, websocket.MessageText, []byte(`{"type":"hangup"}`))
		_ = ws.CloseNow()
	}
	// The slots come back as the calls end.
	var again *websocket.Conn
	for again == nil && ctx.Err() == nil {
		ws, _, err := websocket.Dial(ctx, url, nil)
		if err == nil {
			again = ws
			break
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			time.Sleep(100 * time.Millisecond)
		}
	}
	if again == nil {
		t.Fatal("no call admitted after the burst's calls ended")
	}
	_ = again.CloseNow()
	if code := stop(); code != 0 {
		t.Errorf("serve exited %d:\n%s", code, stderr)
	}
	cancel()
	verifyNoLeaks(t, leaks)
}
