package serve

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/brisvox/brisvox/media/conn"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/actors/session"
	"github.com/brisvox/brisvox/internal/pipetest"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/sim"
	"github.com/rs/zerolog"
)

const msec = time.Millisecond

// fakeConn is a served call over the simulator's loopback client.
type fakeConn struct {
	*sim.Loopback
	id       string
	scenario *sim.Scenario

	adm conn.Admission // nil: admitted by Start

	mu     sync.Mutex
	events []Event
	hangup []string
	kinds  []conn.EndKind
}

// Admission is the slot the test admitted the call into, if any.
func (c *fakeConn) Admission() conn.Admission { return c.adm }

func newFakeConn(id string, s *sim.Scenario) *fakeConn {
	return &fakeConn{Loopback: sim.NewLoopback(sim.LoopbackConfig{}, s, time.Now()), id: id, scenario: s}
}

func (c *fakeConn) ID() string { return c.id }

func (c *fakeConn) Hangup(kind conn.EndKind, reason string) {
	c.mu.Lock()
	c.hangup = append(c.hangup, reason)
	c.kinds = append(c.kinds, kind)
	c.mu.Unlock()
	c.HangUp()
}

func (c *fakeConn) Publish(v any) error {
	c.mu.Lock()
	c.events = append(c.events, v.(Event))
	c.mu.Unlock()
	return nil
}

func (c *fakeConn) snapshot() ([]Event, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Event(nil), c.events...), append([]string(nil), c.hangup...)
}

// simAgent answers with the simulator's mock providers.
type simAgent struct {
	responses []providertest.Response
	fail      error
}

func (a *simAgent) Name() string { return "test agent" }

func (a *simAgent) Session(env CallEnv) (session.Config, error) {
	if a.fail != nil {
		return session.Config{}, a.fail
	}
	fc := env.Conn.(*fakeConn)
	return session.Config{
		STT: providertest.NewMockSTT(providertest.STTConfig{}, fc.scenario.Utterances()),
		LLM: providertest.NewMockLLM(providertest.LLMConfig{}, a.responses...),
		TTS: providertest.NewMockTTS(providertest.TTSConfig{}),
	}, nil
}

// get asks the server over the in-memory listener.
func get(t *testing.T, ln *pipetest.Listener, path string) (int, map[string]any) {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{DialContext: ln.DialContext}}
	defer c.CloseIdleConnections()
	resp, err := c.Get("http://brisvox" + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(body, &out); err != nil {
			t.Fatalf("GET %s: %v in %q", path, err, body)
		}
	} else {
		out = map[string]any{"body": string(body)}
	}
	return resp.StatusCode, out
}

// serving runs a server on an in-memory listener until stop is called.
func serving(t *testing.T, cfg Config, a Agent) (s *Server, ln *pipetest.Listener, stop func() error) {
	t.Helper()
	s, err := New(cfg, a)
	if err != nil {
		t.Fatal(err)
	}
	ln = pipetest.New()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(ctx, ln) }()
	return s, ln, func() error { cancel(); return <-errc }
}

func wordsOf(evs []Event, kind string) []string {
	var out []string
	for _, e := range evs {
		if e.Kind == kind {
			out = append(out, e.Text)
		}
	}
	return out
}

// TestServeCall runs one call through the server: the page's events arrive
// through the connection, readyz counts the call, the caller's hang-up ends
// it and the server stops with nothing left running (the bubble checks).
func TestServeCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, ln, stop := serving(t, Config{MaxCalls: 2}, &simAgent{responses: []providertest.Response{{Text: "Hi, how can I help?"}}})
		if code, body := get(t, ln, "/healthz"); code != 200 || body["status"] != "ok" {
			t.Errorf("healthz %d %v", code, body)
		}
		if code, body := get(t, ln, "/"); code != 200 || !strings.Contains(body["body"].(string), "<button id=\"call\"") {
			t.Errorf("page %d %.80v", code, body["body"])
		}
		c := newFakeConn("c1", sim.NewScenario("hello").Silence(500*msec).Speak("Hello?", 800*msec).Silence(4*time.Second))
		a, err := s.Admit()
		if err != nil {
			t.Fatal(err)
		}
		c.adm = a
		s.Start(c)
		time.Sleep(3 * time.Second)
		if code, body := get(t, ln, "/readyz"); code != 200 || body["live_calls"] != 1.0 {
			t.Errorf("readyz %d %v", code, body)
		}
		time.Sleep(3 * time.Second)
		evs, _ := c.snapshot()
		if got := wordsOf(evs, "user_turn"); len(got) != 1 || got[0] != "Hello?" {
			t.Errorf("user turns %q", got)
		}
		if got := strings.Join(wordsOf(evs, "bot_word"), " "); got != "Hi, how can I help?" {
			t.Errorf("bot words %q", got)
		}
		lat := 0
		for _, e := range evs {
			if e.Kind == "latency" && e.LatencyMS > 0 {
				lat++
			}
		}
		if lat != 1 {
			t.Errorf("%d latency events, want 1", lat)
		}
		c.HangUp()
		time.Sleep(time.Second)
		if live := s.Live(); len(live) != 0 {
			t.Errorf("live after hang-up: %v", live)
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		_ = c.Close()
	})
}

// TestServeDrain: a shutdown stops admitting (readyz 503), lets the call
// run until DrainTimeout, then speaks the closing line and the call ends;
// Serve returns. Mutation: drain not waiting (ending calls at once) -> the
// call ends before the deadline; no closing line -> no bot words.
func TestServeDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, ln, stop := serving(t, Config{MaxCalls: 2, DrainTimeout: 3 * time.Second, ClosingLine: "We are closing, goodbye."},
			&simAgent{responses: []providertest.Response{{Text: "Hi."}}})
		c := newFakeConn("c1", sim.NewScenario("long").Silence(60*time.Second))
		s.Start(c)
		time.Sleep(time.Second)
		began := time.Now()
		errc := make(chan error, 1)
		go func() { errc <- stop() }()
		time.Sleep(500 * msec)
		if _, err := s.Admit(); conn.RefusalOf(err).Cause != conn.RefusedDraining || !errors.Is(err, conn.ErrRefused) {
			t.Errorf("Admit while draining: %v", err)
		}
		if code, body := get(t, ln, "/readyz"); code != http.StatusServiceUnavailable || body["ready"] != false {
			t.Errorf("readyz while draining: %d %v", code, body)
		}
		if len(s.Live()) != 1 {
			t.Errorf("the live call was ended before the drain deadline")
		}
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
		took := time.Since(began)
		if took < 3*time.Second || took > 3*time.Second+5*time.Second {
			t.Errorf("shutdown took %v, want the drain deadline plus the closing line", took)
		}
		evs, hang := c.snapshot()
		if got := strings.Join(wordsOf(evs, "bot_word"), " "); got != "We are closing, goodbye." {
			t.Errorf("closing words %q", got)
		}
		if len(hang) == 0 {
			t.Errorf("the connection was not hung up")
		}
		_ = c.Close()
	})
}

// TestServeRefusals: the admission limit and a call the agent cannot
// build (hung up with a reason, counted).
func TestServeRefusals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := &simAgent{responses: []providertest.Response{{Text: "Hi."}}}
		s, ln, stop := serving(t, Config{MaxCalls: 1}, a)
		c1 := newFakeConn("c1", sim.NewScenario("long").Silence(60*time.Second))
		s.Start(c1)
		synctest.Wait()
		if _, err := s.Admit(); conn.RefusalOf(err).Cause != conn.RefusedFull || !errors.Is(err, conn.ErrRefused) {
			t.Errorf("Admit at the limit: %v", err)
		}
		c1.HangUp()
		time.Sleep(time.Second)
		a.fail = errors.New("no such provider")
		c2 := newFakeConn("c2", sim.NewScenario("short").Silence(time.Second))
		s.Start(c2)
		time.Sleep(time.Second)
		if _, hang := c2.snapshot(); len(hang) != 1 || hang[0] != "the call could not be started" {
			t.Errorf("refused call hung up with %q", hang)
		}
		code, body := get(t, ln, "/stats")
		server, _ := body["server"].(map[string]any)
		if code != 200 || server["start_failures"] != 1.0 || server["refused_full"] != 1.0 {
			t.Errorf("stats %d %v", code, body)
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		_ = c1.Close()
		_ = c2.Close()
	})
}

// logSink is a log sink safe for the actors' goroutines.
type logSink struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *logSink) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logSink) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestServeLogContent: Config.LogContent reaches every call (what the
// caller said is in the debug log); off, it is not. Mutation caught: the
// server's switch not handed to the session.
func TestServeLogContent(t *testing.T) {
	for _, on := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			var sink logSink
			s, _, stop := serving(t, Config{Log: zerolog.New(&sink).Level(zerolog.DebugLevel), LogContent: on},
				&simAgent{responses: []providertest.Response{{Text: "Hi, how can I help?"}}})
			c := newFakeConn("c1", sim.NewScenario("hello").Silence(500*msec).Speak("Hello there?", 800*msec).Silence(4*time.Second))
			s.Start(c)
			time.Sleep(5 * time.Second)
			c.HangUp()
			time.Sleep(time.Second)
			if got := strings.Contains(sink.String(), "Hello there?"); got != on {
				t.Errorf("switch %v: the transcript in the log: %v", on, got)
			}
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			_ = c.Close()
		})
	}
}
