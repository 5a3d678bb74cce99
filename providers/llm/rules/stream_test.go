package rules_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/llm/rules"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		cfg     rules.Config
		wantErr bool
	}{
		{name: "zero: no delay", cfg: rules.Config{}},
		{name: "5 s each", cfg: rules.Config{FirstToken: 5 * time.Second, TokenGap: 5 * time.Second}},
		{name: "1 ns each", cfg: rules.Config{FirstToken: 1, TokenGap: 1}},
		{name: "negative first token", cfg: rules.Config{FirstToken: -1}, wantErr: true},
		{name: "negative gap", cfg: rules.Config{TokenGap: -time.Millisecond}, wantErr: true},
		{name: "first token over 5 s", cfg: rules.Config{FirstToken: 5*time.Second + 1}, wantErr: true},
		{name: "gap over 5 s", cfg: rules.Config{TokenGap: time.Minute}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if (err != nil) != tt.wantErr {
				t.Fatalf("Validate: %v, want error %v", err, tt.wantErr)
			}
			l, nerr := rules.New(tt.cfg)
			if tt.wantErr {
				if !errors.Is(nerr, rules.ErrInvalidConfig) || l != nil {
					t.Errorf("New: %v, %v; want ErrInvalidConfig", l, nerr)
				}
				return
			}
			if nerr != nil {
				t.Fatal(nerr)
			}
			if got := l.Config(); got != tt.cfg {
				t.Errorf("config %+v, want %+v as given", got, tt.cfg)
			}
		})
	}
}

// offered are the tools of the default agent, as the engine offers them.
func offered() []providers.ToolDef {
	return []providers.ToolDef{
		{Name: "book_table", Parameters: json.RawMessage(`{"type":"object"}`)},
		{Name: agent.ConfirmPendingTool, Parameters: json.RawMessage(`{"type":"object"}`)},
		{Name: agent.EndCallTool, Parameters: json.RawMessage(`{"type":"object"}`)},
		{Name: "get_time", Parameters: json.RawMessage(`{"type":"object","properties":{"timezone":{"type":"string"}}}`)},
	}
}

// timed is an event and when it came, from the Stream call.
type timed struct {
	at time.Duration
	ev providers.LLMEvent
}

// readAll streams req to its end and returns the events with their times.
func readAll(t *testing.T, l *rules.LLM, req *providers.Request) []timed {
	t.Helper()
	start := time.Now()
	s, err := l.Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var out []timed
	for {
		ev, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("Recv after %d events: %v", len(out), err)
		}
		out = append(out, timed{time.Since(start), ev})
	}
}

func kindName(k providers.LLMEventKind) string {
	return map[providers.LLMEventKind]string{providers.LLMText: "text", providers.LLMToolCall: "call",
		providers.LLMDone: "done", providers.LLMUsage: "usage"}[k]
}

// describe writes events as "at kind payload" lines.
func describe(evs []timed) string {
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&b, "%v %s", e.at, kindName(e.ev.Kind))
		switch e.ev.Kind {
		case providers.LLMText:
			fmt.Fprintf(&b, " %q", e.ev.Text)
		case providers.LLMToolCall:
			fmt.Fprintf(&b, " %d %q %q %q", e.ev.Index, e.ev.ID, e.ev.Name, e.ev.Args)
		case providers.LLMUsage:
			fmt.Fprintf(&b, " %d/%d", e.ev.Usage.InputTokens, e.ev.Usage.OutputTokens)
		case providers.LLMDone:
			fmt.Fprintf(&b, " %s", e.ev.StopReason)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// TestStreamTimetable pins the events, their order and their times in
// virtual time: the first at FirstToken, each later content event TokenGap
// after the one before, Usage and Done with the last.
func TestStreamTimetable(t *testing.T) {
	tests := []struct {
		name string
		cfg  rules.Config
		msgs []agent.Message
		want string
	}{
		{
			// Catches a gap missing or counted from the wrong event.
			name: "text", cfg: rules.Config{FirstToken: 100 * time.Millisecond, TokenGap: 10 * time.Millisecond},
			msgs: []agent.Message{agent.User("do you sell shoes")},
			want: `100ms text "I "
110ms text "can "
120ms text "tell "
130ms text "you "
140ms text "the "
150ms text "time "
160ms text "or "
170ms text "book "
180ms text "a "
190ms text "table."
190ms usage 4/10
190ms done stop
`,
		},
		{
			// Catches arguments sent in one fragment, or the id and
			// name missing from the first; and a delay in the zero
			// Config (the keyless agent answers at once: every event
			// at 0, seen failing with the old 250 ms/40 ms defaults).
			name: "text and a call, zero config",
			msgs: []agent.Message{agent.User("bye")},
			want: `0s text "Thank "
0s text "you "
0s text "for "
0s text "calling. "
0s text "Goodbye!"
0s call 0 "rules-1" "end_call" ""
0s call 0 "" "" "{\"reason\":\"the cal"
0s call 0 "" "" "ler said goodbye\"}"
0s usage 1/12
0s done tool_calls
`,
		},
		{
			// Catches an id not derived from the calls already made.
			name: "a call after two earlier calls", cfg: rules.Config{FirstToken: 50 * time.Millisecond, TokenGap: 50 * time.Millisecond},
			msgs: []agent.Message{
				agent.User("what time is it"), agent.Assistant("", nil),
				agent.User("x"), agent.Assistant("ok", []messages.ToolCall{{ID: "t1.0", Name: "lookup", Arguments: json.RawMessage(`{}`)}, {ID: "t1.1", Name: "lookup", Arguments: json.RawMessage(`{}`)}}),
				agent.Message{Role: agent.RoleTool, ToolCallID: "t1.0", Text: "a"},
				agent.Message{Role: agent.RoleTool, ToolCallID: "t1.1", Text: "b"},
				agent.User("what time is it"),
			},
			want: `50ms call 0 "rules-3" "get_time" ""
100ms call 0 "" "" "{\"timezon"
150ms call 0 "" "" "e\":\"UTC\"}"
150ms usage 14/4
150ms done tool_calls
`,
		},
		{
			name: "nothing to say", cfg: rules.Config{FirstToken: 70 * time.Millisecond},
			msgs: []agent.Message{agent.User("bye"), agent.Assistant("Bye.", []messages.ToolCall{{ID: "t1.0", Name: agent.EndCallTool, Arguments: json.RawMessage(`{}`)}}),
				{Role: agent.RoleTool, ToolCallID: "t1.0", Text: "ending"}},
			want: `70ms usage 5/0
70ms done stop
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l, err := rules.New(tt.cfg)
				if err != nil {
					t.Fatal(err)
				}
				req := &providers.Request{Messages: tt.msgs, Tools: offered()}
				got := describe(readAll(t, l, req))
				if got != tt.want {
					t.Errorf("events\n%s\nwant\n%s", got, tt.want)
				}
				// The same request gets the same answer: no state.
				if again := describe(readAll(t, l, req)); again != got {
					t.Errorf("second stream differs:\n%s", again)
				}
			})
		})
	}
}

// TestCancelMidStream: cancelling the context makes a waiting Recv return
// at once with the context's error; no goroutine is left (the bubble
// checks).
func TestCancelMidStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, _ := rules.New(rules.Config{FirstToken: time.Second, TokenGap: time.Second})
		ctx, cancel := context.WithCancel(context.Background())
		s, err := l.Stream(ctx, &providers.Request{Messages: []agent.Message{agent.User("hello")}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Recv(); err != nil {
			t.Fatal(err)
		}
		time.AfterFunc(300*time.Millisecond, cancel)
		start := time.Now()
		_, err = s.Recv()
		// Catches a Recv that sleeps out its gap before it looks at the
		// context.
		if !errors.Is(err, context.Canceled) || time.Since(start) != 300*time.Millisecond {
			t.Errorf("Recv: %v after %v, want context.Canceled at the cancel (300ms)", err, time.Since(start))
		}
		if _, err := s.Recv(); !errors.Is(err, context.Canceled) {
			t.Errorf("Recv after the cancel: %v", err)
		}
		if err := s.Close(); err != nil {
			t.Error(err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})
}

// TestCloseWhileWaiting: Close from another goroutine ends a waiting Recv
// at once with ErrClosed.
func TestCloseWhileWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, _ := rules.New(rules.Config{FirstToken: 5 * time.Second})
		s, err := l.Stream(context.Background(), &providers.Request{Messages: []agent.Message{agent.User("hello")}})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var got error
		var took time.Duration
		wg.Go(func() {
			start := time.Now()
			_, got = s.Recv()
			took = time.Since(start)
		})
		time.Sleep(time.Second)
		s.Close()
		wg.Wait()
		// Catches a Close that a waiting Recv does not see.
		if !errors.Is(got, providers.ErrClosed) || took != time.Second {
			t.Errorf("Recv: %v after %v, want ErrClosed at the Close (1s)", got, took)
		}
	})
}

func TestStreamRefusals(t *testing.T) {
	l, _ := rules.New(rules.Config{})
	if _, err := l.Stream(context.Background(), nil); !errors.Is(err, rules.ErrInvalidRequest) {
		t.Errorf("nil request: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if s, err := l.Stream(ctx, &providers.Request{}); !errors.Is(err, context.Canceled) || s != nil {
		t.Errorf("cancelled context: %v %v", s, err)
	}
	if err := l.Warm(context.Background()); err != nil {
		t.Errorf("Warm: %v", err)
	}
}

// TestEOFAfterDone: after Done, Recv answers io.EOF, again and again.
func TestEOFAfterDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, _ := rules.New(rules.Config{})
		s, _ := l.Stream(context.Background(), &providers.Request{Messages: []agent.Message{agent.User("hi")}})
		defer s.Close()
		for {
			ev, err := s.Recv()
			if err != nil {
				t.Fatal(err)
			}
			if ev.Kind == providers.LLMDone {
				break
			}
		}
		for range 2 {
			if _, err := s.Recv(); !errors.Is(err, io.EOF) {
				t.Errorf("after Done: %v, want io.EOF", err)
			}
		}
	})
}

// typicalRequest is a booking's third turn with the default agent's tools.
func typicalRequest() *providers.Request {
	return &providers.Request{
		Messages: []agent.Message{
			agent.System("You are the host of a bistro in Europe/Paris. Be brief."),
			agent.User("hello"), agent.Assistant("Hello! I can tell you the time or book a table. How can I help?", nil),
			agent.User("book a table for four at seven"), agent.Assistant("A table for four at seven PM. Under what name?", nil),
			agent.User("sam"),
		},
		Tools: offered(),
	}
}

// streamOnce streams req to its end with no pacing to wait for.
func streamOnce(l *rules.LLM, req *providers.Request) (int, error) {
	s, err := l.Stream(context.Background(), req)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	n := 0
	for {
		if _, err := s.Recv(); err != nil {
			if errors.Is(err, io.EOF) {
				return n, nil
			}
			return n, err
		}
		n++
	}
}

// The allocations of a whole typical stream (decide, lay out, read) are
// pinned: the matcher runs once per round, but a regression that makes it
// quadratic in the history would show here first.
func TestStreamAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation counts")
	}
	l, _ := rules.New(rules.Config{FirstToken: 1, TokenGap: 1})
	req := typicalRequest()
	allocs := testing.AllocsPerRun(50, func() {
		if _, err := streamOnce(l, req); err != nil {
			t.Fatal(err)
		}
	})
	const budget = 80
	if allocs > budget {
		t.Errorf("%v allocations per stream, budget %d", allocs, budget)
	}
	t.Logf("%v allocations per stream", allocs)
}

func BenchmarkStream(b *testing.B) {
	l, _ := rules.New(rules.Config{FirstToken: 1, TokenGap: 1})
	req := typicalRequest()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := streamOnce(l, req); err != nil {
			b.Fatal(err)
		}
	}
}
