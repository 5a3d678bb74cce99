package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/goleak"
)

// TestServeSecondSignalForces: a second Ctrl-C during a drain ends the
// live call with the closing line at once and serve exits, instead of
// waiting for the 10 min drain. The call is a PCM websocket that stays
// silent; it hears the closing line's words and is closed "going away"
// (1001). Real sockets and engines: skipped with -short. Mutation caught:
// runServe not relaying f.force to the server (the test's 2 min bound
// passes with the drain still waiting).
func TestServeSecondSignalForces(t *testing.T) {
	if testing.Short() {
		t.Skip("real sockets and engines on loopback")
	}
	leaks := goleak.IgnoreCurrent()
	force := make(chan struct{}, 1)
	base, stop, stderr := servedWith(t, serveFlags{
		agent: filepath.Join(moduleRoot(t), "examples", "agents", "local.toml"), maxCalls: 4,
		drain: 10 * time.Minute, sipAddr: "127.0.0.1:0", force: force,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/pcm?rate=16000", nil)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		words []string
	)
	greeted := make(chan struct{})
	closed := make(chan websocket.StatusCode, 1)
	go func() {
		var once sync.Once
		for {
			typ, data, err := ws.Read(ctx)
			if err != nil {
				closed <- websocket.CloseStatus(err)
				return
			}
			if typ == websocket.MessageBinary {
				continue
			}
			var m struct {
				Type string
				Data struct{ Kind, Text string }
			}
			if json.Unmarshal(data, &m) != nil {
				continue
			}
			switch {
			case m.Type == "mark":
				_ = ws.Write(ctx, websocket.MessageText, data)
			case m.Type == "event" && m.Data.Kind == "bot_done":
				once.Do(func() { close(greeted) })
			case m.Type == "event" && m.Data.Kind == "bot_word":
				mu.Lock()
				words = append(words, m.Data.Text)
				mu.Unlock()
			}
		}
	}()
	// Silence in real time keeps the call alive until the greeting played.
	go func() {
		frame := make([]byte, 640)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for ctx.Err() == nil {
			<-tick.C
			if ws.Write(ctx, websocket.MessageBinary, frame) != nil {
				return
			}
		}
	}()
	select {
	case <-greeted:
	case <-ctx.Done():
		t.Fatal("no greeting")
	}
	mu.Lock()
	words = nil
	mu.Unlock()
	stopped := make(chan int, 1)
	go func() { stopped <- stop() }()
	force <- struct{}{} // the second signal
	var code int
	select {
	case code = <-stopped:
	case <-ctx.Done():
		t.Fatalf("serve did not stop after the second signal:\n%s", stderr)
	}
	if code != 0 {
		t.Errorf("serve exited %d:\n%s", code, stderr)
	}
	if got := <-closed; got != websocket.StatusGoingAway {
		t.Errorf("the call closed with %d, want 1001 (going away)", got)
	}
	mu.Lock()
	said := strings.Join(words, " ")
	mu.Unlock()
	if !strings.Contains(said, "restarting") {
		t.Errorf("closing words %q, want the closing line", said)
	}
	cancel()
	_ = ws.CloseNow()
	verifyNoLeaks(t, leaks)
}
