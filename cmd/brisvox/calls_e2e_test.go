package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brisvox/brisvox/actors/session"
	"github.com/brisvox/brisvox/cmd/internal/serve"
	"github.com/brisvox/brisvox/media/carrier/pcmws"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/coder/websocket"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"
)

// opsAgent is the operator tests' agent: the mock providers (the mock
// STT hears each burst of loud audio as its next utterance).
type opsAgent struct{}

func (opsAgent) Name() string { return "ops" }

func (opsAgent) Session(serve.CallEnv) (session.Config, error) {
	return session.Config{
		STT: providertest.NewMockSTT(providertest.STTConfig{}, []string{"what time is it", "and now", "thanks"}),
		LLM: providertest.NewMockLLM(providertest.LLMConfig{}, providertest.Response{Text: "It is noon."}, providertest.Response{Text: "Still noon."}),
		TTS: providertest.NewMockTTS(providertest.TTSConfig{}),
	}, nil
}

// opsServer is serve.Server with the PCM websocket and the operator API
// on token, on 127.0.0.1; stop shuts it down.
func opsServer(t *testing.T, token string) (base string, stop func()) {
	t.Helper()
	srv, err := serve.New(serve.Config{MaxCalls: 2, Node: "n1", DrainTimeout: time.Second, ClosingTimeout: time.Second, Log: zerolog.Nop()}, opsAgent{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := pcmws.New(pcmws.Config{OnCall: func(c *pcmws.Call) { srv.Start(c) }, Admit: srv.Admit})
	if err != nil {
		t.Fatal(err)
	}
	srv.Handle("/pcm", h, "pcm", h.Stats, h.Close)
	if err := srv.EnableOperator(token); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	var once sync.Once
	return "http://" + ln.Addr().String(), func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("serve: %v", err)
			}
		})
	}
}

// opsCaller is a caller of the PCM websocket in real time: a frame every
// 20 ms, silence unless told to speak, each mark echoed at once.
type opsCaller struct {
	ws     *websocket.Conn
	speak  atomic.Int32 // frames of speech still to send
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func dialOpsCaller(t *testing.T, base string) *opsCaller {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/pcm?rate=16000", &websocket.DialOptions{HTTPClient: client})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	c := &opsCaller{ws: ws, cancel: cancel}
	c.wg.Go(func() {
		for {
			typ, data, err := ws.Read(ctx)
			if err != nil {
				cancel()
				return
			}
			if typ == websocket.MessageText && strings.Contains(string(data), `"mark"`) {
				_ = ws.Write(ctx, websocket.MessageText, data)
			}
		}
	})
	c.wg.Go(func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		frame := make([]byte, 640)
		for n := 0; ; n++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			loud := c.speak.Add(-1) >= 0
			for j := range 320 {
				var v int16
				if loud && ((n*320+j)/40)%2 == 0 { // a 200 Hz square wave
					v = 8000
				} else if loud {
					v = -8000
				}
				binary.LittleEndian.PutUint16(frame[2*j:], uint16(v))
			}
			if err := ws.Write(ctx, websocket.MessageBinary, frame); err != nil {
				return
			}
		}
	})
	return c
}

// say sends a second of speech.
func (c *opsCaller) say() { c.speak.Store(50) }

func (c *opsCaller) close() {
	c.cancel()
	_ = c.ws.CloseNow()
	c.wg.Wait()
}

// lockedBuffer is a buffer the watch writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// watching runs `brisvox calls list --watch` until its context ends.
type watching struct {
	out, errs lockedBuffer
	cancel    context.CancelFunc
	code      chan int
}

func startWatch(env map[string]string) *watching {
	ctx, cancel := context.WithCancel(context.Background())
	w := &watching{cancel: cancel, code: make(chan int, 1)}
	go func() {
		w.code <- callsWith(ctx, []string{"list", "--watch"}, callsEnv{stdout: &w.out, stderr: &w.errs, lookupEnv: func(k string) (string, bool) {
			v, ok := env[k]
			return v, ok
		}})
	}()
	return w
}

// eventually polls cond every 50 ms until it holds or d passes.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
	}
}

// TestCallsAgainstServe runs `brisvox calls` against a live serve.Server
// with a real call over the PCM websocket (the mock providers): list
// shows the call, show prints its tree and its turn's waterfall, restart
// stt succeeds and the call goes on (its next turn is answered), hangup
// ends it, --watch sees it appear and end, a wrong token, an unknown
// call, an unknown stage and a stopped server give their one-line
// errors, a watch ends when the server does, and no goroutine is left.
// Mutations caught (each seen failing): the watch not applying ended
// events (the call stays in its last table); the stream's end not
// ending the watch (it hangs after the server stops).
func TestCallsAgainstServe(t *testing.T) {
	if testing.Short() {
		t.Skip("a real-time call on loopback")
	}
	leaks := goleak.IgnoreCurrent()
	const token = "op-token-e2e-0123456789abcdef"
	base, stop := opsServer(t, token)
	defer stop()
	env := map[string]string{"BRISVOX_OPERATOR_TOKEN": token, "BRISVOX_OPERATOR_ADDR": base}
	ctx := context.Background()

	watch := startWatch(env)
	eventually(t, 5*time.Second, "the watch's first table", func() bool { return strings.Contains(watch.out.String(), "no live calls") })

	caller := dialOpsCaller(t, base)
	defer caller.close()
	var id string
	listed := func() []map[string]any {
		code, out, errs := runCalls(ctx, env, "list", "--json")
		if code != 0 {
			t.Fatalf("list --json: %d %s", code, errs)
		}
		var l struct{ Calls []map[string]any }
		if err := json.Unmarshal([]byte(out), &l); err != nil {
			t.Fatalf("list --json: %v in %q", err, out)
		}
		return l.Calls
	}
	eventually(t, 10*time.Second, "the call listed", func() bool {
		calls := listed()
		if len(calls) == 1 {
			id, _ = calls[0]["id"].(string)
		}
		return id != ""
	})
	code, out, errs := runCalls(ctx, env, "list")
	if code != 0 || !strings.Contains(out, id) || !strings.Contains(out, "pcm") || !strings.Contains(out, "ops") || !strings.Contains(out, "n1") {
		t.Fatalf("list: %d %q %q", code, out, errs)
	}
	checkColumns(t, out)
	eventually(t, 5*time.Second, "the watch sees the call", func() bool { return strings.Contains(watch.out.String(), id) })

	turns := func() float64 {
		for _, c := range listed() {
			if c["id"] == id {
				n, _ := c["turns"].(float64)
				return n
			}
		}
		t.Fatalf("the call %s left the list", id)
		return 0
	}
	caller.say()
	eventually(t, 20*time.Second, "the first turn answered", func() bool { return turns() >= 1 })

	code, out, errs = runCalls(ctx, env, "show", id)
	if code != 0 {
		t.Fatalf("show: %d %s", code, errs)
	}
	checkColumns(t, out)
	t.Logf("brisvox calls show %s:\n%s", id, out)
	for _, want := range []string{"call " + id + " on n1 (pcm, agent ops)", "ACTOR", "session", "├─ ", "└─ ", "stt", "V vad_stop  S stt_final", "1 turn"} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	sttRestarts := func() float64 {
		code, out, errs := runCalls(ctx, env, "show", id, "--json")
		if code != 0 {
			t.Fatalf("show --json: %d %s", code, errs)
		}
		var d struct {
			Tree struct {
				Children []struct {
					Name     string
					Restarts float64
				}
			}
		}
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatal(err)
		}
		for _, ch := range d.Tree.Children {
			if ch.Name == "stt" {
				return ch.Restarts
			}
		}
		t.Fatalf("no stt in the tree: %s", out)
		return 0
	}
	if code, out, errs := runCalls(ctx, env, "restart", id, "stt"); code != 0 || !strings.Contains(out, "restarted the stt stage of call "+id) {
		t.Fatalf("restart: %d %q %q", code, out, errs)
	}
	eventually(t, 5*time.Second, "stt restarted once", func() bool { return sttRestarts() == 1 })
	caller.say()
	eventually(t, 20*time.Second, "a turn answered after the restart", func() bool { return turns() >= 2 })

	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"wrong token", map[string]string{"BRISVOX_OPERATOR_TOKEN": "op-token-wrong-0123456789", "BRISVOX_OPERATOR_ADDR": base}, []string{"list"},
			"brisvox calls: the operator API at " + base + " refused the token: check the variable BRISVOX_OPERATOR_TOKEN\n"},
		{"unknown call", env, []string{"show", "nope"}, "brisvox calls: no live call nope at the operator API at " + base + " (brisvox calls list shows the live calls)\n"},
		{"unknown stage", env, []string{"restart", id, "mixer"}, "brisvox calls: \"mixer\" is not a stage a restart can name: want one of transport, vad, stt, turn, llm, tools, tts, pacer\n"},
		{"unknown node", env, []string{"drain", "n9"}, "brisvox calls: no node n9 at the operator API at " + base + " (brisvox calls nodes lists them)\n"},
	} {
		if code, _, errs := runCalls(ctx, tc.env, tc.args...); code != 1 || errs != tc.want {
			t.Errorf("%s: exit %d, stderr %q, want 1 and %q", tc.name, code, errs, tc.want)
		}
	}
	if code, out, _ := runCalls(ctx, env, "nodes"); code != 0 || !strings.Contains(out, "n1") || !strings.Contains(out, "admitting") {
		t.Errorf("nodes: %d %q", code, out)
	}

	// A drain: the node admits no new call, the live one goes on.
	if code, out, errs := runCalls(ctx, env, "drain", "n1"); code != 0 || !strings.Contains(out, "node n1 is draining (operator): it admits no new call; its live call goes on to its end") {
		t.Fatalf("drain: %d %q %q", code, out, errs)
	}
	if code, out, _ := runCalls(ctx, env, "nodes"); code != 0 || !strings.Contains(out, "draining (operator)") {
		t.Errorf("nodes while drained: %d %q", code, out)
	}
	if _, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/pcm?rate=16000", &websocket.DialOptions{HTTPClient: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}}); err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("a new call while drained: %v, want 503", err)
	}
	if n := len(listed()); n != 1 {
		t.Errorf("%d calls live while drained, want the 1", n)
	}
	if code, out, errs := runCalls(ctx, env, "undrain", "n1"); code != 0 || out != "node n1 admits calls again\n" {
		t.Fatalf("undrain: %d %q %q", code, out, errs)
	}

	if code, out, errs := runCalls(ctx, env, "hangup", id); code != 0 || !strings.Contains(out, "hung up call "+id) {
		t.Fatalf("hangup: %d %q %q", code, out, errs)
	}
	eventually(t, 10*time.Second, "the call ended", func() bool { return len(listed()) == 0 })
	eventually(t, 5*time.Second, "the watch sees the end", func() bool {
		tables := strings.Split(watch.out.String(), "\n\n")
		last := tables[len(tables)-1]
		return strings.Contains(last, "no live calls") && strings.Contains(last, "ended: "+id)
	})
	t.Logf("brisvox calls list --watch:\n%s", watch.out.String())
	watch.cancel()
	if code := <-watch.code; code != 0 {
		t.Errorf("the watch ended with %d: %s", code, watch.errs.String())
	}

	// A watch ends with the server.
	last := startWatch(env)
	eventually(t, 5*time.Second, "the second watch's table", func() bool { return strings.Contains(last.out.String(), "no live calls") })
	stop()
	select {
	case code := <-last.code:
		if code != 0 || !strings.Contains(last.errs.String(), "ended the event stream") {
			t.Errorf("the watch at the server's end: %d %q", code, last.errs.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the watch did not end with the server")
	}
	last.cancel()
	code, _, errs = runCalls(ctx, env, "list")
	if want := fmt.Sprintf("brisvox calls: cannot reach the operator API at %s: ", base); code != 1 || !strings.HasPrefix(errs, want) || !strings.HasSuffix(errs, "; is brisvox serve running with --operator-token-env?\n") {
		t.Errorf("a stopped server: %d %q", code, errs)
	}
	caller.close()
	for deadline := time.Now().Add(3 * time.Second); goleak.Find(leaks) != nil && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
	}
	goleak.VerifyNone(t, leaks)
}
