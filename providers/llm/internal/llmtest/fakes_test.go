package llmtest

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/llm/internal/llmmock"
)

// recorder is a testing.TB that records a failure instead of failing the
// test, so that a check can be shown to bite. Fatal ends the goroutine of
// the check, as it does on a *testing.T; run calls the check on a
// goroutine of its own for that.
type recorder struct {
	testing.TB

	mu     sync.Mutex
	failed bool
	msg    string
}

func (r *recorder) Helper() {}

func (r *recorder) fail(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed, r.msg = true, msg
}

func (r *recorder) Error(args ...any)                 { r.fail(fmt.Sprint(args...)) }
func (r *recorder) Errorf(format string, args ...any) { r.fail(fmt.Sprintf(format, args...)) }
func (r *recorder) Fatal(args ...any)                 { r.fail(fmt.Sprint(args...)); runtime.Goexit() }
func (r *recorder) Fatalf(format string, args ...any) {
	r.fail(fmt.Sprintf(format, args...))
	runtime.Goexit()
}

// run calls check with a recorder over t and reports whether it failed,
// and how.
func run(t *testing.T, check func(tb testing.TB)) (failed bool, msg string) {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		check(r)
	}()
	<-done
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed, r.msg
}

// fakeStream gives its events, then ends with end (io.EOF when nil). With
// stall set, the Recv after the events first waits that long, or, when
// heed is set, until its context is done (then it returns the context's
// error).
type fakeStream struct {
	ctx     context.Context
	evs     []providers.LLMEvent
	end     error
	stall   time.Duration
	heed    bool
	endless bool // text events forever
	closes  int
}

func (s *fakeStream) Recv() (providers.LLMEvent, error) {
	if s.endless {
		return providers.LLMEvent{Kind: providers.LLMText, Text: "x"}, nil
	}
	if len(s.evs) > 0 {
		ev := s.evs[0]
		s.evs = s.evs[1:]
		return ev, nil
	}
	if s.stall > 0 {
		var done <-chan struct{}
		if s.heed {
			done = s.ctx.Done()
		}
		select {
		case <-time.After(s.stall):
		case <-done:
			return providers.LLMEvent{}, s.ctx.Err()
		}
	}
	if s.end == nil {
		return providers.LLMEvent{}, io.EOF
	}
	return providers.LLMEvent{}, s.end
}

func (s *fakeStream) Close() error {
	s.closes++
	return nil
}

// fakeLLM answers its streams with streams[0], streams[1], ... (the last
// repeats), each a template copied for the call; a template's end of
// kind *providers.Rejected is Stream's error instead. With leak set, each
// stream starts a goroutine that waits for release to be closed.
type fakeLLM struct {
	streams []fakeStream
	leak    bool
	release chan struct{}

	mu     sync.Mutex
	n      int
	closed bool
}

var _ Adapter = (*fakeLLM)(nil)

func (f *fakeLLM) Warm(context.Context) error { return nil }

func (f *fakeLLM) Stream(ctx context.Context, _ *providers.Request) (providers.LLMStream, error) {
	f.mu.Lock()
	s := f.streams[min(f.n, len(f.streams)-1)]
	f.n++
	f.mu.Unlock()
	if rej, ok := s.end.(*providers.Rejected); ok && len(s.evs) == 0 {
		return nil, rej
	}
	if f.leak {
		go func() { <-f.release }()
	}
	s.ctx = ctx
	s.evs = append([]providers.LLMEvent(nil), s.evs...)
	return &s, nil
}

func (f *fakeLLM) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	return nil
}

// fakeMock is a Mock that records what is done to it; Close closes
// release (once), if set.
type fakeMock struct {
	release chan struct{}
	events  int
	closeFn func()

	mu     sync.Mutex
	source func() llmmock.Response
	closes int
	reqs   int
}

var _ Mock = (*fakeMock)(nil)

func (m *fakeMock) URL() string { return "http://mock" }

func (m *fakeMock) SetSource(f func() llmmock.Response) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.source = f
}

func (m *fakeMock) Events() int   { return m.events }
func (m *fakeMock) Conns() int    { return 1 }
func (m *fakeMock) WarmHits() int { return 1 }

func (m *fakeMock) Requests() []map[string]any { return make([]map[string]any, m.reqs) }

func (m *fakeMock) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closes == 0 && m.release != nil {
		close(m.release)
	}
	m.closes++
	if m.closeFn != nil {
		m.closeFn()
	}
}
