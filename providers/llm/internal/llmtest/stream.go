package llmtest

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/providers"
)

// maxEvents bounds Collect: a stream still going after this many events
// does not end.
const maxEvents = 100000

// Collect reads s to its end and closes it: the events before io.EOF (Done
// included), or those before the error that ended it and the error. A
// stream that does not end fails the test.
func Collect(t testing.TB, s providers.LLMStream) ([]providers.LLMEvent, error) {
	t.Helper()
	defer s.Close()
	var evs []providers.LLMEvent
	for range maxEvents {
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

// Run streams req on p and collects the stream: Stream's error, or
// Collect's result.
func Run(t testing.TB, p providers.LLM, req *providers.Request) ([]providers.LLMEvent, error) {
	t.Helper()
	s, err := p.Stream(context.Background(), req)
	if err != nil {
		return nil, err
	}
	return Collect(t, s)
}

// Assemble feeds evs to the engine's assembler as the llm actor does (text,
// call fragments, provider data; the other kinds pass it by) and returns
// the response. An event the assembler refuses fails the test.
func Assemble(t testing.TB, evs []providers.LLMEvent) *agent.Response {
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

// SimpleRequest is a one-message request.
func SimpleRequest() *providers.Request {
	return &providers.Request{Messages: []agent.Message{agent.User("hi")}}
}

// EndsTyped reads s until Recv fails, at most limit times, and fails the
// test unless that error is io.EOF or wraps providers.ErrProtocol,
// ErrRejected or ErrDisconnected: the ends a stream over any body may
// have (a fuzz target's check). A stream still going after limit Recvs
// fails the test. The caller closes s.
func EndsTyped(t testing.TB, s providers.LLMStream, limit int) {
	t.Helper()
	for range limit {
		_, err := s.Recv()
		if err == nil {
			continue
		}
		if !errors.Is(err, io.EOF) && !errors.Is(err, providers.ErrProtocol) &&
			!errors.Is(err, providers.ErrRejected) && !errors.Is(err, providers.ErrDisconnected) {
			t.Fatalf("unexpected error %v", err)
		}
		return
	}
	t.Fatal("stream did not end")
}

// warmRecvs is how many events RecvAllocs reads before it counts, so that
// the stream's buffers have grown to their size.
const warmRecvs = 5

// RecvAllocs reads 5 events from s to warm its buffers, then returns the
// average allocations of one Recv over runs more; each must give an event
// whose text is text (s must hold 5+runs+1 such events: AllocsPerRun makes
// one call more to warm up). Counts differ under -race: the caller skips
// there.
func RecvAllocs(t testing.TB, s providers.LLMStream, runs int, text string) float64 {
	t.Helper()
	for range warmRecvs {
		if _, err := s.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	return testing.AllocsPerRun(runs, func() {
		if ev, err := s.Recv(); err != nil || ev.Text != text {
			t.Fatalf("%+v %v", ev, err)
		}
	})
}

// BenchRecv measures one s.Recv per iteration of b.Loop. s starts with n
// events ready; after every n, with the timer stopped, refill must make n
// more ready (reset the reader under s to the same body, say).
func BenchRecv(b *testing.B, s providers.LLMStream, n int, refill func()) {
	b.Helper()
	left := n
	for b.Loop() {
		if left == 0 {
			b.StopTimer()
			refill()
			left = n
			b.StartTimer()
		}
		if _, err := s.Recv(); err != nil {
			b.Fatal(err)
		}
		left--
	}
}
