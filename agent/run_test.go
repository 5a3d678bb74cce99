package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/brisvox/brisvox/messages"
)

func TestRunCall(t *testing.T) {
	// env is what a case's tool body may use.
	type env struct {
		cancelParent context.CancelFunc
		release      chan struct{} // closed by the test after RunCall returns
	}
	tests := []struct {
		name         string
		effect       Effect
		timeout      time.Duration // default DefaultTimeout (NewSpec)
		params       string        // the tool's schema; default none
		callName     string        // default "probe"
		args         string
		cancelBefore bool
		body         func(e env) CallFunc
		wantKind     string // "" for a success
		wantContent  string // exact content of a success
		wantDetail   string // substring of an error's detail
		wantIssues   string // substring of an error's issues, as JSON
		wantRuns     int32
		wantElapsed  time.Duration // on the bubble's clock
	}{
		{
			name: "success echoes the arguments and call info",
			args: `{"q":"x"}`,
			body: func(env) CallFunc {
				return func(_ context.Context, args json.RawMessage, info CallInfo) (Output, error) {
					return Output{Content: string(args) + " " + info.Session + " " + info.CallID + " " + info.IdempotencyKey.CallID}, nil
				}
			},
			wantContent: `{"q":"x"} s1 t1.0 t1.0`,
			wantRuns:    1,
		},
		{
			name: "empty arguments become an empty object",
			args: " \n",
			body: func(env) CallFunc {
				return func(_ context.Context, args json.RawMessage, _ CallInfo) (Output, error) {
					return Output{Content: string(args)}, nil
				}
			},
			wantContent: "{}",
			wantRuns:    1,
		},
		{name: "unknown tool does not run", callName: "nope", wantKind: KindUnknownTool},
		{name: "arguments not JSON", args: `{"q":`, wantKind: KindInvalidArguments, wantDetail: "not valid JSON"},
		{name: "arguments an array", args: `["q"]`, wantKind: KindInvalidArguments, wantDetail: "JSON object"},
		{name: "arguments null", args: `null`, wantKind: KindInvalidArguments, wantDetail: "JSON object"},
		{
			// Catches RunCall skipping the schema: the tool would get
			// arguments it never declared.
			name:   "arguments against the schema do not run, with issues",
			params: `{"type":"object","properties":{"q":{"type":"integer"}},"required":["q"]}`,
			args:   `{"q":"x"}`, wantKind: KindInvalidArguments,
			wantDetail: "fix the issues", wantIssues: `[{"path":"/q","reason":"got string, want integer"}]`,
		},
		{
			name:   "missing required argument does not run",
			params: `{"type":"object","required":["q"]}`,
			args:   `{}`, wantKind: KindInvalidArguments,
			wantIssues: `[{"path":"(root)","reason":"missing property 'q'"}]`,
		},
		{
			name:   "valid arguments run",
			params: `{"type":"object","properties":{"q":{"type":"integer"}},"required":["q"]}`,
			args:   `{"q":1}`, wantContent: "ran", wantRuns: 1,
		},
		{
			// Catches the cap checked after the schema (or not at all).
			name: "arguments over the cap do not run",
			args: argsOfSize(MaxArgumentBytes + 1), wantKind: KindArgumentsTooLarge, wantDetail: "not checked",
		},
		{
			name: "tool error is tool_failed with its text",
			body: func(env) CallFunc {
				return func(context.Context, json.RawMessage, CallInfo) (Output, error) {
					return Output{}, errors.New("upstream 503")
				}
			},
			wantKind: KindToolFailed, wantDetail: "upstream 503", wantRuns: 1,
		},
		{
			// Catches a panic escaping the tool's goroutine, which would end
			// the process.
			name: "panic is tool_failed",
			body: func(env) CallFunc {
				return func(context.Context, json.RawMessage, CallInfo) (Output, error) {
					panic("boom")
				}
			},
			wantKind: KindToolFailed, wantDetail: "the tool panicked: boom", wantRuns: 1,
		},
		{
			name:    "timeout at exactly the spec's limit",
			timeout: 2 * time.Second,
			body: func(env) CallFunc {
				return func(ctx context.Context, _ json.RawMessage, _ CallInfo) (Output, error) {
					<-ctx.Done()
					return Output{}, ctx.Err()
				}
			},
			wantKind: KindTimeout, wantDetail: "limit 2s", wantRuns: 1, wantElapsed: 2 * time.Second,
		},
		{
			name: "NewSpec's timeout is the default",
			body: func(env) CallFunc {
				return func(ctx context.Context, _ json.RawMessage, _ CallInfo) (Output, error) {
					<-ctx.Done()
					return Output{}, ctx.Err()
				}
			},
			wantKind: KindTimeout, wantRuns: 1, wantElapsed: DefaultTimeout,
		},
		{
			// Catches RunCall waiting for a tool that ignores its context:
			// the caller would hang past the timeout.
			name:    "tool ignoring its context does not hold the caller",
			timeout: time.Second,
			body: func(e env) CallFunc {
				return func(context.Context, json.RawMessage, CallInfo) (Output, error) {
					<-e.release
					return Output{Content: "too late"}, nil
				}
			},
			wantKind: KindTimeout, wantRuns: 1, wantElapsed: time.Second,
		},
		{
			// A SideEffect call is not cut at its timeout (the engine
			// answers its slot and lets it run) but at the 120 s backstop,
			// and then its outcome is unknown. (Mutation seen failing: the
			// SideEffect limit left at the spec's timeout.)
			name:    "side effect runs to the backstop, then its outcome is unknown",
			effect:  SideEffect,
			timeout: time.Second,
			body: func(env) CallFunc {
				return func(ctx context.Context, _ json.RawMessage, _ CallInfo) (Output, error) {
					<-ctx.Done()
					return Output{}, ctx.Err()
				}
			},
			wantKind: KindUnknownOutcome, wantDetail: "do not repeat", wantRuns: 1, wantElapsed: SideEffectBackstop,
		},
		{
			name:         "cancelled before it starts does not run",
			cancelBefore: true,
			wantKind:     KindInterrupted, wantDetail: "did not run",
		},
		{
			name: "cancelled while running",
			body: func(e env) CallFunc {
				return func(ctx context.Context, _ json.RawMessage, _ CallInfo) (Output, error) {
					time.Sleep(300 * time.Millisecond)
					e.cancelParent()
					<-ctx.Done()
					return Output{}, ctx.Err()
				}
			},
			wantKind: KindInterrupted, wantRuns: 1, wantElapsed: 300 * time.Millisecond,
		},
		{
			// Catches mapping any DeadlineExceeded to timeout: the tool's own
			// inner deadline is a failure of the tool.
			name: "tool's own deadline is tool_failed",
			body: func(env) CallFunc {
				return func(context.Context, json.RawMessage, CallInfo) (Output, error) {
					return Output{}, context.DeadlineExceeded
				}
			},
			wantKind: KindToolFailed, wantDetail: "deadline exceeded", wantRuns: 1,
		},
		{
			name: "long error text is bounded",
			body: func(env) CallFunc {
				return func(context.Context, json.RawMessage, CallInfo) (Output, error) {
					return Output{}, errors.New(strings.Repeat("e", 5000))
				}
			},
			wantKind: KindToolFailed, wantDetail: "eee…", wantRuns: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				parent, cancel := context.WithCancel(context.Background())
				defer cancel()
				e := env{cancelParent: cancel, release: make(chan struct{})}
				defer close(e.release)

				var runs atomic.Int32
				effect := tt.effect
				if effect == 0 {
					effect = ReadOnly
				}
				body := tt.body
				if body == nil {
					body = func(env) CallFunc {
						return func(context.Context, json.RawMessage, CallInfo) (Output, error) { return Output{Content: "ran"}, nil }
					}
				}
				fn := body(e)
				spec := NewSpec("probe", "", effect)
				spec.Parameters = json.RawMessage(tt.params)
				if tt.timeout != 0 {
					spec.Timeout = tt.timeout
				}
				reg, err := NewRegistry(NewFuncTool(spec,
					func(ctx context.Context, args json.RawMessage, info CallInfo) (Output, error) {
						runs.Add(1)
						return fn(ctx, args, info)
					}))
				if err != nil {
					t.Fatal(err)
				}
				if tt.cancelBefore {
					cancel()
				}
				name := tt.callName
				if name == "" {
					name = "probe"
				}
				call := messages.ToolCall{ID: "t1.0", Name: name, Arguments: json.RawMessage(tt.args)}

				start := time.Now()
				got := RunCall(parent, reg, call, CallInfo{Session: "s1", Epoch: 1, IdempotencyKey: IdempotencyKey{Session: "s1", Epoch: 1, CallID: "t1.0"}})
				elapsed := time.Since(start)

				if got.CallID != "t1.0" || got.Name != name {
					t.Fatalf("result ids = %q %q", got.CallID, got.Name)
				}
				if tt.wantKind == "" {
					if got.IsError || got.Content != tt.wantContent {
						t.Fatalf("RunCall() = %+v, want content %q", got, tt.wantContent)
					}
				} else {
					var body struct {
						Error, Tool, Detail string
						Issues              json.RawMessage
					}
					if err := json.Unmarshal([]byte(got.Content), &body); err != nil || !got.IsError {
						t.Fatalf("RunCall() = %+v, want an error result", got)
					}
					if body.Error != tt.wantKind || body.Tool != name || !strings.Contains(body.Detail, tt.wantDetail) {
						t.Fatalf("RunCall() = %s, want kind %s with detail containing %q", got.Content, tt.wantKind, tt.wantDetail)
					}
					if (tt.wantKind == KindInvalidArguments) != (body.Issues != nil) || !strings.Contains(string(body.Issues), tt.wantIssues) {
						t.Fatalf("RunCall() = %s, want issues containing %s", got.Content, tt.wantIssues)
					}
				}
				if runs.Load() != tt.wantRuns {
					t.Fatalf("tool ran %d times, want %d", runs.Load(), tt.wantRuns)
				}
				if elapsed != tt.wantElapsed {
					t.Fatalf("RunCall took %v, want %v", elapsed, tt.wantElapsed)
				}
			})
		})
	}
}

func TestRunCallNilRegistry(t *testing.T) {
	got := RunCall(context.Background(), nil, messages.ToolCall{ID: "t1.0", Name: "x"}, CallInfo{})
	if !got.IsError || !strings.Contains(got.Content, KindUnknownTool) {
		t.Fatalf("RunCall(nil registry) = %+v", got)
	}
}

// Catches a tool reading arguments the caller mutates afterwards: the tool
// gets its own copy.
func TestRunCallArgumentsAreCopied(t *testing.T) {
	var seen json.RawMessage
	reg, err := NewRegistry(NewFuncTool(NewSpec("x", "", ReadOnly), func(_ context.Context, args json.RawMessage, _ CallInfo) (Output, error) {
		seen = args
		return Output{}, nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	args := json.RawMessage(`{"a":1}`)
	RunCall(context.Background(), reg, messages.ToolCall{ID: "t1.0", Name: "x", Arguments: args}, CallInfo{})
	args[2] = 'b'
	if string(seen) != `{"a":1}` {
		t.Fatalf("tool saw %s after the caller edited its arguments", seen)
	}
}

// TestRunCallOutcomesAndLimits: the outcome names the record keeps, and the
// 64 KiB result limit: a SideEffect result is cut with the mark (its action
// happened), a ReadOnly one refused; a panicking SideEffect is lost.
// (Mutations seen failing: a result of exactly the limit refused; a
// SideEffect panic answered tool_failed.)
func TestRunCallOutcomesAndLimits(t *testing.T) {
	big := strings.Repeat("é", MaxResultBytes) // two bytes a rune: over the limit
	exact := strings.Repeat("a", MaxResultBytes)
	tests := []struct {
		name        string
		effect      Effect
		content     string
		panics      bool
		wantOutcome string
		wantKind    string
		check       func(t *testing.T, content string)
	}{
		{name: "ok", effect: ReadOnly, content: "fine", wantOutcome: OutcomeOK},
		{name: "exactly the limit", effect: ReadOnly, content: exact, wantOutcome: OutcomeOK},
		{name: "read-only over the limit", effect: ReadOnly, content: big, wantOutcome: OutcomeResultTooLarge, wantKind: KindResultTooLarge},
		{name: "side effect over the limit is cut", effect: SideEffect, content: big, wantOutcome: OutcomeOKTruncated,
			check: func(t *testing.T, c string) {
				if len(c) > MaxResultBytes || !strings.HasSuffix(c, TruncatedMark) || !utf8.ValidString(c) {
					t.Errorf("cut result: %d bytes, suffix %q, valid UTF-8 %v", len(c), c[max(0, len(c)-20):], utf8.ValidString(c))
				}
				if len(c) < MaxResultBytes-len(TruncatedMark)-4 {
					t.Errorf("cut too short: %d bytes", len(c))
				}
			}},
		{name: "read-only panic", effect: ReadOnly, panics: true, wantOutcome: OutcomeFailed, wantKind: KindToolFailed},
		{name: "side effect panic is lost", effect: SideEffect, panics: true, wantOutcome: OutcomeLost, wantKind: KindUnknownOutcome},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := NewSpec("probe", "", tt.effect)
			reg, err := NewRegistry(NewFuncTool(spec, func(context.Context, json.RawMessage, CallInfo) (Output, error) {
				if tt.panics {
					panic("boom")
				}
				return Output{Content: tt.content}, nil
			}))
			if err != nil {
				t.Fatal(err)
			}
			r := RunCall(context.Background(), reg, messages.ToolCall{ID: "t1.0", Name: "probe", Arguments: []byte(`{}`)}, CallInfo{})
			if r.Outcome != tt.wantOutcome {
				t.Errorf("outcome %q, want %q", r.Outcome, tt.wantOutcome)
			}
			if tt.wantKind != "" && !strings.Contains(r.Content, `"`+tt.wantKind+`"`) {
				t.Errorf("content %.120q, want kind %s", r.Content, tt.wantKind)
			}
			if tt.check != nil {
				tt.check(t, r.Content)
			}
		})
	}
}

// TestRunAdmittedSkipsValidation: RunAdmitted runs arguments the caller
// checked already, and gives the tool {} for empty arguments.
func TestRunAdmittedSkipsValidation(t *testing.T) {
	var got string
	spec := NewSpec("probe", "", ReadOnly)
	spec.Parameters = json.RawMessage(`{"type":"object","required":["x"]}`)
	reg, err := NewRegistry(NewFuncTool(spec, func(_ context.Context, args json.RawMessage, _ CallInfo) (Output, error) {
		got = string(args)
		return Output{Content: "ran"}, nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	call := messages.ToolCall{ID: "t1.0", Name: "probe", Arguments: []byte(" ")}
	if r := RunCall(context.Background(), reg, call, CallInfo{}); !r.IsError {
		t.Fatalf("RunCall ran arguments that miss x: %+v", r)
	}
	if r := RunAdmitted(context.Background(), reg, call, CallInfo{}); r.IsError || got != "{}" {
		t.Fatalf("RunAdmitted: %+v, the tool got %q", r, got)
	}
}
