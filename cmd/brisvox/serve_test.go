package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brisvox/brisvox/internal/logtest"
	"github.com/brisvox/brisvox/media/webrtc/webrtctest"
	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/tts/flite"
	"github.com/coder/websocket"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"
)

// say synthesizes text with the flite engine: the test caller's voice.
func say(t *testing.T, text string) []int16 {
	t.Helper()
	tts, err := flite.New(flite.Config{Voice: "slt", Rate: 16000})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := tts.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Push("q", text); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush("q"); err != nil {
		t.Fatal(err)
	}
	var pcm []int16
	for ev := range s.Events() {
		switch ev.Kind {
		case providers.TTSAudio:
			pcm = append(pcm, ev.PCM...)
		case providers.TTSFlushed:
			return pcm
		case providers.TTSError:
			t.Fatal(ev.Err)
		}
	}
	t.Fatal("flite: events closed before the end")
	return nil
}

func rms(s []int16) float64 {
	if len(s) == 0 {
		return 0
	}
	var sum float64
	for _, v := range s {
		sum += float64(v) * float64(v)
	}
	return math.Sqrt(sum / float64(len(s)))
}

// syncBuffer is a bytes.Buffer safe for the server's writes and the
// test's reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// served runs `brisvox serve` in process on 127.0.0.1 for agent; stop
// shuts it down (SIGTERM's path) and returns its exit status. Every log
// line the server wrote is then checked as strict JSON (one object, no
// key twice: issue 14's "webrtc call ended" line had call_id twice).
func served(t *testing.T, agent string) (base string, stop func() int, stderr *syncBuffer) {
	t.Helper()
	return servedWith(t, serveFlags{agent: agent, maxCalls: 4, drain: 2 * time.Second, sipAddr: "127.0.0.1:0"})
}

// servedWith is served with the flags given.
func servedWith(t *testing.T, f serveFlags) (base string, stop func() int, stderr *syncBuffer) {
	t.Helper()
	return servedOut(t, f, &syncBuffer{})
}

// servedOut is servedWith writing serve's standard output to stdout.
func servedOut(t *testing.T, f serveFlags, stdout *syncBuffer) (base string, stop func() int, stderr *syncBuffer) {
	t.Helper()
	if f.recordsDir == "" {
		// Each test its own records, never beside the shared agent
		// files (two servers of one file would share its journals).
		f.recordsDir = t.TempDir()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stderr = &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- runServe(ctx, f, ln, stdout, stderr, zerolog.New(stderr).Level(zerolog.InfoLevel).With().Timestamp().Logger())
	}()
	base = "http://" + ln.Addr().String()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if strings.Contains(stdout.String(), "serving agent") {
			break
		}
		select {
		case code := <-done:
			t.Fatalf("serve exited with %d:\n%s", code, stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not start:\n%s", stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return base, func() int {
		cancel()
		code := <-done
		if err := logtest.Check([]byte(stderr.String()), logtest.JSONLines); err != nil {
			t.Errorf("serve's log: %v", err)
		}
		return code
	}, stderr
}

// waitEvent waits for an event of the call that match accepts.
func waitEvent(t *testing.T, c *webrtctest.Caller, within time.Duration, what string, match func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.After(within)
	for {
		for _, ev := range c.Events() {
			if match(ev) {
				return ev
			}
		}
		select {
		case <-c.Notify():
		case <-deadline:
			t.Fatalf("no %s within %v; events: %v", what, within, c.Events())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func kind(k string) func(map[string]any) bool {
	return func(ev map[string]any) bool { return ev["type"] == "event" && ev["kind"] == k }
}

// TestServeWebRTCLoopback calls the keyless local agent (pocketsphinx,
// flite, Silero, the rules LLM) over WebRTC with a pion caller on
// loopback: the greeting plays, a flite question is heard and answered
// with audio, and speaking over the answer cuts it: the page is told the
// answer was cut, and no answer audio arrives while the caller talks.
// Real sockets and real engines: skipped with -short. Mutation: the turn
// actor ignoring speech over the bot (no barge-in) -> no cut event, and
// the answer's audio goes on under the caller.
func TestServeWebRTCLoopback(t *testing.T) {
	if testing.Short() {
		t.Skip("real sockets and engines on loopback")
	}
	leaks := goleak.IgnoreCurrent()
	question := say(t, "What time is it?")
	over := say(t, "Hello hello. Can you hear me? I am talking over you now. One two three four five.")
	base, stop, stderr := served(t, filepath.Join(moduleRoot(t), "examples", "agents", "local.toml"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := webrtctest.Dial(ctx, base+"/webrtc", webrtctest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	// The greeting plays whole before the caller speaks.
	waitEvent(t, c, 30*time.Second, "greeting", func(ev map[string]any) bool { return kind("bot_done")(ev) && ev["cut"] != true })
	if err := c.Play(question, 16000); err != nil {
		t.Fatal(err)
	}
	turn := waitEvent(t, c, 30*time.Second, "the question's turn", kind("user_turn"))
	if text, _ := turn["text"].(string); !strings.Contains(text, "time") {
		t.Fatalf("the question was heard as %q", text)
	}
	lat := waitEvent(t, c, 30*time.Second, "a latency", kind("latency"))
	epoch := turn["epoch"]
	// The answer starts playing: barge in at its first word, at once (the
	// answer is about 2 s long, and on a loaded machine the barge-in takes
	// a while to be detected).
	waitEvent(t, c, 30*time.Second, "the answer's first word", func(ev map[string]any) bool { return kind("bot_word")(ev) && ev["epoch"] == epoch })
	answerStart := len(c.Received())
	if err := c.Play(over, 16000); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, c, 10*time.Second, "the answer cut", func(ev map[string]any) bool {
		return kind("bot_done")(ev) && ev["epoch"] == epoch && ev["cut"] == true
	})
	// What arrived between the first word and the cut is the answer.
	answered := c.Received()[answerStart:]
	if rms(answered) < 300 {
		t.Errorf("the answer's audio is too quiet: rms %.0f over %d samples", rms(answered), len(answered))
	}
	// While the caller goes on talking, no answer audio arrives.
	time.Sleep(700 * time.Millisecond)
	from := len(c.Received())
	time.Sleep(time.Duration(len(over))*time.Second/16000 - 1500*time.Millisecond)
	during := c.Received()[from:]
	if r := rms(during); r > 100 {
		t.Errorf("audio kept coming while the caller talked over it: rms %.0f over %d samples", r, len(during))
	}
	t.Logf("heard %q; latency %v ms; answer rms %.0f; rms while talking over %.0f (%d samples)", turn["text"], lat["latency_ms"], rms(answered), rms(during), len(during))
	// The metrics saw the call: its turns, their latency, a barge-in, and
	// the Silero pool's work. Mutation: the pool's series not registered.
	metrics := httpGet(t, base+"/metrics")
	for _, want := range []string{
		`brisvox_calls_active{agent="local"} 1`,
		`brisvox_barge_ins_total{agent="local"} 1`,
		`brisvox_vad_pool_queue_depth{agent="local",rate="16000"}`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if !regexp.MustCompile(`brisvox_vad_pool_windows_total\{agent="local",rate="16000",result="completed"\} [1-9]`).MatchString(metrics) {
		t.Error("/metrics: no completed window of the Silero pool")
	}
	if !regexp.MustCompile(`brisvox_turn_latency_seconds_count\{agent="local"\} [1-9]`).MatchString(metrics) {
		t.Error("/metrics: no turn latency observed")
	}
	if err := c.Close(); err != nil {
		t.Error(err)
	}
	if code := stop(); code != 0 {
		t.Errorf("serve exited with %d:\n%s", code, stderr)
	}
	verifyNoLeaks(t, leaks)
}

// TestServeOperatorTokenFailsClosed: --operator-token-env naming a
// variable that is not set, or holds a short token, refuses to serve
// before anything else (the agent file here does not even exist). The
// token never appears in the message. Mutation: the unset variable taken
// as "no operator API" -> it goes on to the agent file.
func TestServeOperatorTokenFailsClosed(t *testing.T) {
	const name = "BRISVOX_TEST_OPERATOR_TOKEN"
	for _, tc := range []struct {
		name, value, want string
		set               bool
	}{
		{"unset", "", "BRISVOX_TEST_OPERATOR_TOKEN is not set", false},
		{"short", "secret-short", "holds 12 characters, want at least 16", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.set {
				t.Setenv(name, tc.value)
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			var stdout, stderr syncBuffer
			code := runServe(context.Background(), serveFlags{agent: filepath.Join(t.TempDir(), "none.toml"), maxCalls: 1, operatorTokenEnv: name}, ln, &stdout, &stderr, zerolog.Nop())
			if code != 1 || !strings.Contains(stderr.String(), tc.want) {
				t.Fatalf("exit %d, stderr %q; want 1 and %q", code, stderr.String(), tc.want)
			}
			if tc.set && strings.Contains(stderr.String(), tc.value) {
				t.Errorf("the token is in the message: %q", stderr.String())
			}
		})
	}
}

// TestServeFailsClosed: a file with a problem is not served; the
// diagnostic is printed with its position. Mutation: runServe ignoring
// the diagnostics -> it serves (and the test's listener is used).
func TestServeFailsClosed(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.toml")
	src := "prompt = \"p\"\n[stt]\nprovider = \"pocketsphinx\"\n[llm]\nprovider = \"rules\"\ntemprature = 1\n[tts]\nprovider = \"flite\"\n[transports.webrtc]\nenabled = true\n"
	if err := os.WriteFile(bad, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr syncBuffer
	code := runServe(context.Background(), serveFlags{agent: bad, maxCalls: 1}, ln, &stdout, &stderr, zerolog.Nop())
	if code != 1 || strings.Contains(stdout.String(), "serving") {
		t.Fatalf("served a broken file: %d\n%s", code, stdout.String())
	}
	if !strings.Contains(stderr.String(), "bad.toml:6:1") || !strings.Contains(stderr.String(), "not serving") {
		t.Errorf("stderr: %s", stderr.String())
	}
}

// TestServePCMWebsocket calls the local agent through `brisvox serve`'s
// PCM websocket (the carrier path): a flite question streamed in real
// time as 16 kHz PCM is heard, the answer's audio comes back, the live
// events arrive as text messages, and marks are echoed. Real sockets and
// engines: skipped with -short. Mutation: serve not mounting the PCM
// transport -> the dial fails with 404.
func TestServePCMWebsocket(t *testing.T) {
	if testing.Short() {
		t.Skip("real sockets and engines on loopback")
	}
	leaks := goleak.IgnoreCurrent()
	question := say(t, "What time is it?")
	base, stop, stderr := served(t, filepath.Join(moduleRoot(t), "examples", "agents", "local.toml"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/pcm?rate=16000", nil)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu       sync.Mutex
		received []int16
		events   []map[string]any
	)
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		for {
			typ, data, err := ws.Read(ctx)
			if err != nil {
				return
			}
			if typ == websocket.MessageBinary {
				mu.Lock()
				for i := 0; i+1 < len(data); i += 2 {
					received = append(received, int16(binary.LittleEndian.Uint16(data[i:])))
				}
				mu.Unlock()
				continue
			}
			var m map[string]any
			if json.Unmarshal(data, &m) != nil {
				continue
			}
			switch m["type"] {
			case "mark": // played at once: this client has no buffer
				_ = ws.Write(ctx, websocket.MessageText, data)
			case "event":
				mu.Lock()
				if d, ok := m["data"].(map[string]any); ok {
					events = append(events, d)
				}
				mu.Unlock()
			}
		}
	}()
	find := func(kind string) map[string]any {
		mu.Lock()
		defer mu.Unlock()
		for _, e := range events {
			if e["kind"] == kind {
				return e
			}
		}
		return nil
	}
	// Stream the question after a second of silence, then silence, in
	// real time, until the answer has played.
	pcm := append(make([]int16, 16000), question...)
	frame := make([]byte, 640)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var turn map[string]any
	answered := false
	for i := 0; ctx.Err() == nil && !answered; i++ {
		<-tick.C
		for j := range 320 {
			var v int16
			if k := i*320 + j; k < len(pcm) {
				v = pcm[k]
			}
			binary.LittleEndian.PutUint16(frame[2*j:], uint16(v))
		}
		if err := ws.Write(ctx, websocket.MessageBinary, frame); err != nil {
			t.Fatal(err)
		}
		if turn == nil {
			turn = find("user_turn")
		}
		if turn != nil {
			mu.Lock()
			for _, e := range events {
				if e["kind"] == "bot_done" && e["epoch"] == turn["epoch"] {
					answered = true
				}
			}
			mu.Unlock()
		}
	}
	if turn == nil || !strings.Contains(fmt.Sprint(turn["text"]), "time") {
		t.Fatalf("the question's turn: %v (events %v)", turn, events)
	}
	if !answered {
		t.Fatalf("no answer played: events %v", events)
	}
	mu.Lock()
	r := rms(received)
	mu.Unlock()
	if r < 300 || find("latency") == nil {
		t.Errorf("answer audio rms %.0f, latency event %v", r, find("latency"))
	}
	_ = ws.Write(ctx, websocket.MessageText, []byte(`{"type":"hangup"}`))
	<-readDone
	_ = ws.CloseNow()
	if code := stop(); code != 0 {
		t.Errorf("serve exited with %d:\n%s", code, stderr)
	}
	verifyNoLeaks(t, leaks)
}

// httpGet reads url's body, failing the test on any error or a status
// other than 200.
func httpGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return string(body)
}
