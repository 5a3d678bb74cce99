package contracttest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/providertest"
)

// movesCallID moves every tool call's id and name from the first fragment
// to the second: the joined arguments stay right. Mutation caught: without
// streaming's checks of the id and name (on the first fragment and against
// the script) this double passes.
type movesCallID struct{ providers.LLM }

func (m movesCallID) Stream(ctx context.Context, req *providers.Request) (providers.LLMStream, error) {
	s, err := m.LLM.Stream(ctx, req)
	if err != nil {
		return nil, err
	}
	return &movesCallIDStream{LLMStream: s, held: map[int]providers.LLMEvent{}}, nil
}

type movesCallIDStream struct {
	providers.LLMStream
	held map[int]providers.LLMEvent
}

func (s *movesCallIDStream) Recv() (providers.LLMEvent, error) {
	ev, err := s.LLMStream.Recv()
	if err != nil || ev.Kind != providers.LLMToolCall {
		return ev, err
	}
	if first, ok := s.held[ev.Index]; ok {
		ev.ID, ev.Name = first.ID, first.Name
		delete(s.held, ev.Index)
		return ev, nil
	}
	s.held[ev.Index] = ev
	ev.ID, ev.Name = "", ""
	return ev, nil
}

func TestFirstFragmentWithoutIDFailsStreaming(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		rep := runSuite(t, movesCallID{reference(t, h)}, h)
		if got := failedNames(rep); !slices.Equal(got, []string{CheckStreaming}) {
			t.Fatalf("failed %q, want streaming only\n%v", got, rep)
		}
	})
}

func TestRunLLMRejectsInvalidArguments(t *testing.T) {
	h, err := NewMockHarness(MockHarnessConfig{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		p    providers.LLM
		h    LLMHarness
		cfg  Config
	}{
		{"nil provider", nil, h, Config{}},
		{"nil harness", h.Provider(), nil, Config{}},
		{"negative slack", h.Provider(), h, Config{TimeoutSlack: -1}},
		{"negative long response", h.Provider(), h, Config{LongResponseWords: -1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := RunLLM(t.Context(), tt.p, tt.h, tt.cfg); !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("err %v, want ErrInvalidConfig", err)
			}
		})
	}
}

func TestConfigValidation(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
	}{
		{"deadlines negative", Deadlines{Idle: -time.Second}.Validate()},
		{"harness negative io timeout", MockHarnessConfig{IOTimeout: -1}.Validate()},
		{"harness negative token interval", MockHarnessConfig{LLM: providertest.LLMConfig{TokenInterval: -1}}.Validate()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if !errors.Is(tt.err, ErrInvalidConfig) {
				t.Fatalf("err %v, want ErrInvalidConfig", tt.err)
			}
		})
	}
	if _, err := WithDeadlines(nil, Deadlines{}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("WithDeadlines(nil): %v, want ErrInvalidConfig", err)
	}
}

func TestReport(t *testing.T) {
	var empty Report
	if empty.Passed() {
		t.Error("an empty report passed")
	}
	rep := Report{Kind: "llm", Checks: []CheckResult{
		{Name: "a", Passed: true, Elapsed: time.Second},
		{Name: "b", Detail: "broken", Elapsed: 2 * time.Second},
	}}
	if rep.Passed() {
		t.Error("a report with a failure passed")
	}
	if f := rep.Failures(); len(f) != 1 || f[0].Name != "b" {
		t.Errorf("failures %+v, want b", f)
	}
	if c, ok := rep.Check("a"); !ok || !c.Passed {
		t.Errorf("Check(a) = %+v, %v", c, ok)
	}
	if rep.Elapsed() != 3*time.Second {
		t.Errorf("elapsed %v, want 3s", rep.Elapsed())
	}
}

// WithDeadlines times a stalled stream out at its idle deadline and keeps
// failing afterwards; the stream's context is cancelled, so the mock stops.
func TestWithDeadlinesIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		p := must(WithDeadlines(h.Provider(), Deadlines{Idle: time.Second}))
		h.Script(Response{Text: "one two three"})
		h.Inject(stallBefore(1))
		s, err := p.Stream(t.Context(), &providers.Request{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, err := s.Recv(); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err = s.Recv()
		var to *providers.Timeout
		if !errors.As(err, &to) || to.Op != "idle" || time.Since(start) != time.Second {
			t.Fatalf("got %v after %v, want an idle Timeout after 1s", err, time.Since(start))
		}
		if _, err := s.Recv(); !errors.As(err, &to) {
			t.Fatalf("after the timeout: %v, want the Timeout again", err)
		}
	})
}

func TestRunSTTAndRunTTSRejectInvalidArguments(t *testing.T) {
	sh, err := NewMockSTTHarness(MockSTTHarnessConfig{})
	if err != nil {
		t.Fatal(err)
	}
	th, err := NewMockTTSHarness(MockTTSHarnessConfig{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		run  func() error
	}{
		{"stt nil provider", func() error { _, err := RunSTT(t.Context(), nil, sh, Config{}); return err }},
		{"stt nil harness", func() error { _, err := RunSTT(t.Context(), sh.Provider(), nil, Config{}); return err }},
		{"stt negative settle", func() error { _, err := RunSTT(t.Context(), sh.Provider(), sh, Config{CancelSettle: -1}); return err }},
		{"tts nil provider", func() error { _, err := RunTTS(t.Context(), nil, th, Config{}); return err }},
		{"tts nil harness", func() error { _, err := RunTTS(t.Context(), th.Provider(), nil, Config{}); return err }},
		{"tts negative quiet window", func() error { _, err := RunTTS(t.Context(), th.Provider(), th, Config{QuietWindow: -1}); return err }},
		{"stt harness negative io timeout", func() error { _, err := NewMockSTTHarness(MockSTTHarnessConfig{IOTimeout: -1}); return err }},
		{"tts harness invalid mock", func() error {
			_, err := NewMockTTSHarness(MockTTSHarnessConfig{TTS: providertest.TTSConfig{Rate: 10}})
			return err
		}},
		{"stt deadlines nil", func() error { _, err := STTWithDeadlines(nil, Deadlines{}); return err }},
		{"tts deadlines negative", func() error { _, err := TTSWithDeadlines(th.Provider(), Deadlines{Idle: -1}); return err }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.run(); !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("err %v, want ErrInvalidConfig", err)
			}
		})
	}
}

// The STT mock harness hands a fault injected after the first connect to
// the live mock, and makes a fresh mock for an utterance scripted after
// it. Mutation caught: Inject that only queues for the next fresh mock
// loses the fault (the second connect is not refused).
func TestMockSTTHarnessLateScriptAndInject(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, err := NewMockSTTHarness(MockSTTHarnessConfig{})
		if err != nil {
			t.Fatal(err)
		}
		h.Script("first")
		s, err := h.Provider().Connect(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		h.Inject(providertest.Fault{Kind: providertest.FaultReject, Status: 503})
		var rej *providers.Rejected
		if _, err := h.Provider().Connect(t.Context()); !errors.As(err, &rej) || rej.Status != 503 {
			t.Fatalf("connect after a late Inject: %v, want Rejected 503", err)
		}
		h.Script("second")
		s, err = h.Provider().Connect(t.Context())
		if err != nil {
			t.Fatalf("connect after a late Script: %v", err)
		}
		defer s.Close()
		if err := s.SendAudio(speechFrame(h.SampleRate(), 100*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		if err := s.Finalize(); err != nil {
			t.Fatal(err)
		}
		if ev := <-s.Events(); ev.Text != "second" || !ev.Final {
			t.Fatalf("event %+v, want the final of the late script", ev)
		}
	})
}
