package gemini

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/llm/gemini/geminimock"
	"github.com/brisvox/brisvox/providers/llm/openai/openaimock"
)

const (
	testKeyEnv = "BRISVOX_TEST_GEMINI_KEY"
	testKey    = "AIza-test-SECRET"
)

// piped starts the mock on an in-memory listener and an adapter dialing
// it, with the test key; both are closed at the end of the test. Call it
// inside a synctest bubble.
func piped(t *testing.T, mutate func(*Config), script ...geminimock.Response) (*Adapter, *geminimock.Server) {
	t.Helper()
	l := openaimock.NewPipeListener()
	srv := geminimock.NewWithListener(l, script...)
	t.Cleanup(srv.Close)
	t.Setenv(testKeyEnv, testKey)
	cfg := Config{BaseURL: srv.URL(), Model: "mock-model", APIKeyEnv: testKeyEnv, DialContext: l.DialContext}
	if mutate != nil {
		mutate(&cfg)
	}
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a, srv
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
		case providers.LLMProviderData:
			err = as.SetProviderData(ev.ProviderData)
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
