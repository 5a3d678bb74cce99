package openai

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/llm/openai/openaimock"
)

const (
	testKeyEnv = "BRISVOX_TEST_OPENAI_KEY"
	testKey    = "sk-test-SECRET"
)

// newAdapter builds an adapter on the mock with the test key.
func newAdapter(t *testing.T, srv *openaimock.Server, mutate func(*Config)) *Adapter {
	t.Helper()
	t.Setenv(testKeyEnv, testKey)
	cfg := Config{BaseURL: srv.URL(), Model: "mock-model", APIKeyEnv: testKeyEnv}
	if mutate != nil {
		mutate(&cfg)
	}
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a
}

// newMock starts a mock closed at the end of the test.
func newMock(t *testing.T, script ...openaimock.Response) *openaimock.Server {
	t.Helper()
	if testing.Short() {
		// Loopback-socket tests are kept apart: -short skips them.
		t.Skip("loopback-socket test (skipped under -short)")
	}
	srv := openaimock.New(script...)
	t.Cleanup(srv.Close)
	return srv
}

// collect reads a stream to its end: the events before io.EOF (Done
// included) or the error that ended it.
func collect(t *testing.T, s providers.LLMStream) ([]providers.LLMEvent, error) {
	t.Helper()
	defer s.Close()
	var evs []providers.LLMEvent
	for range 100000 {
		ev, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return evs, nil
		}
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	t.Fatal("stream did not end")
	return nil, nil
}

// run streams one request on the adapter and collects it.
func run(t *testing.T, a *Adapter, req *providers.Request) ([]providers.LLMEvent, error) {
	t.Helper()
	s, err := a.Stream(context.Background(), req)
	if err != nil {
		return nil, err
	}
	return collect(t, s)
}

// assemble feeds events to the engine's assembler, as the llm actor does.
func assemble(t *testing.T, evs []providers.LLMEvent) *agent.Response {
	t.Helper()
	as, err := agent.NewAssembler(agent.AssemblerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		switch ev.Kind {
		case providers.LLMText:
			err = as.AppendText(ev.Text)
		case providers.LLMToolCall:
			err = as.AppendCall(agent.CallFragment{Index: ev.Index, ID: ev.ID, Name: ev.Name, Arguments: ev.Args, ProviderData: ev.ProviderData})
		}
		if err != nil {
			t.Fatalf("assembler refused %+v: %v", ev, err)
		}
	}
	r, err := as.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// simpleReq is a one-message request.
func simpleReq() *providers.Request {
	return &providers.Request{Messages: []agent.Message{agent.User("hi")}}
}

// within fails the test if d is over limit: a generous bound for
// deadline tests on real sockets.
func within(t *testing.T, d, limit time.Duration, what string) {
	t.Helper()
	if d > limit {
		t.Fatalf("%s took %v, want under %v", what, d, limit)
	}
}
