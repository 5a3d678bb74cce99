package fleet

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/cluster/clusterproviders/test"
	"github.com/brisvox/brisvox/actors/session"
	"github.com/brisvox/brisvox/cmd/internal/serve"
	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/sim"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"
)

const testToken = "fleet-test-token-0123456789"

// leakOptions are the goroutines goleak may find after every node
// stopped, none of them ours:
//   - protoactor's in-memory test provider (clusterproviders/test, tests
//     only) ranges over its TTL ticker's channel, which its Shutdown
//     stops but never closes, so that goroutine outlives the node; no
//     production membership runs it;
//   - protoactor's log throttles (actor.NewThrottle and
//     NewThrottleWithLogger): the first throttled line of a period (a
//     gossip request to a node that just left, a dead letter) starts a
//     goroutine that waits out the period, 60 s for the gossip's and 1 s
//     for the dead letters', holding nothing, then ends. Their names are
//     the closures' as inlined at their call sites (go1.26), and as
//     not inlined.
var leakOptions = []goleak.Option{
	goleak.IgnoreAnyFunction("github.com/asynkron/protoactor-go/cluster/clusterproviders/test.(*Provider).startTtlReport.func1"),
	goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/cluster.(*Gossiper).StartGossiping.NewThrottle.func3.1"),
	goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/cluster.NewGossipActor.NewThrottleWithLogger.func2.1"),
	goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.NewDeadLetter.NewThrottle.func4.1"),
	goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.NewThrottle.func1.1"),
	goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.NewThrottleWithLogger.func1.1"),
}

// testAgent answers with the simulator's mock providers: the scripted
// caller's words for a simulated call, nothing for an idle one.
type testAgent struct{}

func (testAgent) Name() string { return "fleet test agent" }

func (testAgent) Session(env serve.CallEnv) (session.Config, error) {
	var heard []string
	if c, ok := env.Conn.(*simConn); ok {
		heard = c.scenario.Utterances()
	}
	return session.Config{
		STT: providertest.NewMockSTT(providertest.STTConfig{}, heard),
		LLM: providertest.NewMockLLM(providertest.LLMConfig{}, providertest.Response{Text: "Sure."}, providertest.Response{Text: "Fine."}),
		TTS: providertest.NewMockTTS(providertest.TTSConfig{}),
	}, nil
}

// simConn is a call over the simulator's loopback caller.
type simConn struct {
	*sim.Loopback
	id       string
	scenario *sim.Scenario
}

func newSimConn(id string, s *sim.Scenario) *simConn {
	return &simConn{Loopback: sim.NewLoopback(sim.LoopbackConfig{}, s, time.Now()), id: id, scenario: s}
}

func (c *simConn) ID() string                  { return c.id }
func (c *simConn) Hangup(conn.EndKind, string) { c.HangUp() }
func (c *simConn) Transport() string           { return "sim" }

// idleConn is a live call whose caller says nothing and reads nothing:
// it costs its session's actors and no audio (the list benchmarks' 1 000
// calls).
type idleConn struct {
	id   string
	hang chan struct{}
	once sync.Once
}

func newIdleConn(id string) *idleConn { return &idleConn{id: id, hang: make(chan struct{})} }

func (c *idleConn) ID() string      { return c.id }
func (c *idleConn) InputRate() int  { return 16000 }
func (c *idleConn) OutputRate() int { return 16000 }
func (c *idleConn) ReadFrame(ctx context.Context, _ *messages.AudioFrame) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-c.hang:
		return fmt.Errorf("%w: the idle caller hung up", conn.ErrClosed)
	}
}
func (c *idleConn) WriteFrame(*messages.OutputAudio) error { return nil }
func (c *idleConn) Clear(messages.Epoch) error             { return nil }
func (c *idleConn) Mark(string) error                      { return nil }
func (c *idleConn) OnMarkEcho(func(string))                {}
func (c *idleConn) Close() error                           { c.once.Do(func() { close(c.hang) }); return nil }
func (c *idleConn) Hangup(conn.EndKind, string)            { _ = c.Close() }

// logSink keeps a node's log lines; shown when the test fails.
type logSink struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logSink) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logSink) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// testNode is a server with its operator API on a loopback port and its
// member of the fleet.
type testNode struct {
	name  string
	srv   *serve.Server
	fleet *Fleet
	url   string
	log   *logSink

	cancel context.CancelFunc
	errc   chan error

	mu    sync.Mutex
	ended map[messages.CallID]string // call -> reason
}

// skipUnderRace skips a test of several nodes in one process under the
// race detector, which finds two races inside protoactor-go
// (v0.0.0-20240822202345-3c0e61ca19c9), none in this package: every
// remote.Start sets grpc's process-wide logger (grpclog.SetLoggerV2)
// while another node's gRPC server logs through it (one remote per
// process in production, so tests alone meet it), and
// endpointManager.stop clears its connections while an endpoint
// writer's failed connection removes itself (at a node's stop). The
// package's single-node tests run under -race.
func skipUnderRace(t testing.TB) {
	t.Helper()
	if raceEnabled {
		t.Skip("several protoactor remotes in one process race inside protoactor-go and grpc (grpclog.SetLoggerV2, endpointManager.stop): run without -race")
	}
}

// startNode serves a node named name, a member of agent's cluster;
// opts change its serve.Config.
func startNode(t testing.TB, name string, agent *test.InMemAgent, maxCalls int, opts ...func(*serve.Config)) *testNode {
	t.Helper()
	n := &testNode{name: name, log: &logSink{}, ended: map[messages.CallID]string{}}
	log := zerolog.New(n.log).Level(zerolog.WarnLevel).With().Timestamp().Logger()
	cfg := serve.Config{
		Node: name, MaxCalls: maxCalls, Log: log, IdleFree: -1,
		DrainTimeout: 200 * time.Millisecond, ClosingTimeout: 200 * time.Millisecond,
		ObserveEnd: func(e messages.CallEnded) {
			n.mu.Lock()
			n.ended[e.Call] = e.Reason
			n.mu.Unlock()
		},
	}
	for _, o := range opts {
		o(&cfg)
	}
	srv, err := serve.New(cfg, testAgent{})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.EnableOperator(testToken); err != nil {
		t.Fatal(err)
	}
	f, err := New(Config{Addr: "127.0.0.1:0", Log: log}, srv, WithProvider(test.NewTestProvider(agent)))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Start(); err != nil {
		t.Fatal(err)
	}
	srv.JoinFleet(f)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n.srv, n.fleet, n.url, n.cancel, n.errc = srv, f, "http://"+ln.Addr().String(), cancel, make(chan error, 1)
	go func() { n.errc <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s's log:\n%s", name, n.log.String())
		}
	})
	return n
}

// stop shuts the server down (its live calls are ended by its drain),
// then leaves the fleet.
func (n *testNode) stop(t testing.TB) {
	t.Helper()
	if n.cancel == nil {
		return
	}
	n.cancel()
	n.cancel = nil
	if err := <-n.errc; err != nil {
		t.Errorf("%s: serve: %v", n.name, err)
	}
	n.fleet.Stop()
}

func (n *testNode) endReason(id messages.CallID) (string, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	r, ok := n.ended[id]
	return r, ok
}

// api sends an operator request to n and decodes its JSON answer.
func (n *testNode) api(t testing.TB, method, path string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, n.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s on %s: %v", method, path, n.name, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatalf("%s %s on %s: %v in %q", method, path, n.name, err, body)
	}
	return resp.StatusCode, out
}

// snapshot is the first event of n's operator event stream.
func (n *testNode) snapshot(t testing.TB) map[string]any {
	t.Helper()
	req, err := http.NewRequest("GET", n.url+"/operator/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("events on %s: %v", n.name, err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<20)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: ") && event == "snapshot":
			var out map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &out); err != nil {
				t.Fatalf("snapshot on %s: %v", n.name, err)
			}
			return out
		}
	}
	t.Fatalf("events on %s: no snapshot (%v)", n.name, sc.Err())
	return nil
}

// listed is the calls n's operator API lists, by id, with their node.
func (n *testNode) listed(t testing.TB) map[string]map[string]any {
	t.Helper()
	code, body := n.api(t, "GET", "/operator/calls")
	if code != http.StatusOK {
		t.Fatalf("list on %s: %d %v", n.name, code, body)
	}
	out := map[string]map[string]any{}
	calls, _ := body["calls"].([]any)
	for _, c := range calls {
		m := c.(map[string]any)
		out[m["id"].(string)] = m
	}
	return out
}

// eventually polls cond every 20 ms until it holds or d passed; it
// returns how long it took, failing the test with cond's last word.
func eventually(t testing.TB, d time.Duration, what string, cond func() (bool, string)) time.Duration {
	t.Helper()
	start := time.Now()
	var last string
	for {
		ok, why := cond()
		if ok {
			return time.Since(start)
		}
		last = why
		if time.Since(start) > d {
			t.Fatalf("%s: not within %v: %s", what, d, last)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
