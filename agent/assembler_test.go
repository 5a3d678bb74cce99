package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/brisvox/brisvox/messages"
)

// asmFeed is one delta given to an Assembler, with the error it must return
// (nil: accepted).
type asmFeed struct {
	do   func(*Assembler) error
	want error
}

func asmText(s string) func(*Assembler) error {
	return func(a *Assembler) error { return a.AppendText(s) }
}

func asmData(v string) func(*Assembler) error {
	return func(a *Assembler) error { return a.SetProviderData([]byte(v)) }
}

func asmFrag(i int, id, name, args string) func(*Assembler) error {
	return func(a *Assembler) error {
		return a.AppendCall(CallFragment{Index: i, ID: id, Name: name, Arguments: args})
	}
}

func asmFragData(i int, args, data string) func(*Assembler) error {
	return func(a *Assembler) error {
		return a.AppendCall(CallFragment{Index: i, Arguments: args, ProviderData: []byte(data)})
	}
}

// asmOK is an accepted delta.
func asmOK(do func(*Assembler) error) asmFeed { return asmFeed{do: do} }

// asmRefused is a delta refused with an error wrapping want.
func asmRefused(do func(*Assembler) error, want error) asmFeed { return asmFeed{do: do, want: want} }

// assembleAll feeds an assembler with cfg and finishes it.
func assembleAll(t testing.TB, cfg AssemblerConfig, feeds []asmFeed) *Response {
	t.Helper()
	a, err := NewAssembler(cfg)
	if err != nil {
		t.Fatalf("NewAssembler(%+v) = %v", cfg, err)
	}
	for i, f := range feeds {
		err := f.do(a)
		switch {
		case f.want == nil && err != nil:
			t.Fatalf("delta %d: unexpected error %v", i, err)
		case f.want != nil && !errors.Is(err, f.want):
			t.Fatalf("delta %d: error %v, want one wrapping %v", i, err, f.want)
		}
	}
	r, err := a.Finish()
	if err != nil {
		t.Fatalf("Finish() = %v", err)
	}
	return r
}

// describe renders a response one line per part, for exact comparisons.
func describeResponse(r *Response) string {
	var b strings.Builder
	fmt.Fprintf(&b, "text=%q data=%q\n", r.Text, r.ProviderData)
	for _, c := range r.Calls {
		fmt.Fprintf(&b, "%d id=%q name=%q args=%s data=%q", c.Index, c.Call.ID, c.Call.Name, c.Call.Arguments, c.ProviderData)
		if c.Invalid != nil {
			fmt.Fprintf(&b, " invalid=%s raw=%q", c.Invalid.Kind, c.Invalid.RawArguments)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func TestAssemblerStreaming(t *testing.T) {
	tests := []struct {
		name  string
		feeds []asmFeed
		want  string
	}{
		{
			name:  "nothing",
			feeds: nil,
			want:  "text=\"\" data=\"\"\n",
		},
		{
			name:  "text appended in order",
			feeds: []asmFeed{asmOK(asmText("Hel")), asmOK(asmText("")), asmOK(asmText("lo, ")), asmOK(asmText("world"))},
			want:  "text=\"Hello, world\" data=\"\"\n",
		},
		{
			// JSON split inside a key, a string, an escape (\u00e9) and a
			// number, with text and the other call in between. Catches
			// parsing while streaming and fragments of one index leaking
			// into another.
			name: "text and two calls interleaved, JSON split anywhere",
			feeds: []asmFeed{
				asmOK(asmText("Let me ")),
				asmOK(asmFrag(0, "call_a", "weather", `{"ci`)),
				asmOK(asmFrag(1, "call_b", "", `{"n":1`)),
				asmOK(asmFrag(0, "", "", `ty":"Par\u0`)),
				asmOK(asmText("check.")),
				asmOK(asmFrag(1, "", "time", `2.5`)),
				asmOK(asmFrag(0, "", "", `0e9s"}`)),
				asmOK(asmFrag(1, "", "", `}`)),
			},
			want: "text=\"Let me check.\" data=\"\"\n" +
				"0 id=\"call_a\" name=\"weather\" args={\"city\":\"Par\\u00e9s\"} data=\"\"\n" +
				"1 id=\"call_b\" name=\"time\" args={\"n\":12.5} data=\"\"\n",
		},
		{
			// Catches calls kept in arrival order instead of index order.
			name: "index order, not arrival order, with sparse indexes",
			feeds: []asmFeed{
				asmOK(asmFrag(7, "c7", "late", `{}`)),
				asmOK(asmFrag(2, "c2", "early", `{}`)),
				asmOK(asmFrag(4, "c4", "middle", `{}`)),
			},
			want: "text=\"\" data=\"\"\n" +
				"2 id=\"c2\" name=\"early\" args={} data=\"\"\n" +
				"4 id=\"c4\" name=\"middle\" args={} data=\"\"\n" +
				"7 id=\"c7\" name=\"late\" args={} data=\"\"\n",
		},
		{
			name: "id and name on a later fragment",
			feeds: []asmFeed{
				asmOK(asmFrag(0, "", "", `{"a":`)),
				asmOK(asmFrag(0, "", "lookup", `1`)),
				asmOK(asmFrag(0, "id9", "", `}`)),
			},
			want: "text=\"\" data=\"\"\n0 id=\"id9\" name=\"lookup\" args={\"a\":1} data=\"\"\n",
		},
		{
			// Catches the literal "first non-None" reading: an empty value
			// repeated on every chunk would then conflict with the real one.
			name: "empty id and name repeated on every chunk count as absent",
			feeds: []asmFeed{
				asmOK(asmFrag(0, "", "", `{`)),
				asmOK(asmFrag(0, "real", "f", ``)),
				asmOK(asmFrag(0, "", "", `}`)),
			},
			want: "text=\"\" data=\"\"\n0 id=\"real\" name=\"f\" args={} data=\"\"\n",
		},
		{
			// Catches a repeat of the same value treated as a conflict.
			name: "the same id and name repeated are accepted",
			feeds: []asmFeed{
				asmOK(asmFrag(0, "x", "f", `{"a"`)),
				asmOK(asmFrag(0, "x", "f", `:2}`)),
			},
			want: "text=\"\" data=\"\"\n0 id=\"x\" name=\"f\" args={\"a\":2} data=\"\"\n",
		},
		{
			// Catches last-wins ids, a conflict that is not reported, and a
			// refused fragment whose arguments are appended anyway.
			name: "a different later id is refused and not applied",
			feeds: []asmFeed{
				asmOK(asmFrag(0, "first", "f", `{"a":`)),
				asmRefused(asmFrag(0, "second", "", `"JUNK`), ErrIDConflict),
				asmOK(asmFrag(0, "", "", `1}`)),
			},
			want: "text=\"\" data=\"\"\n0 id=\"first\" name=\"f\" args={\"a\":1} data=\"\"\n",
		},
		{
			// Catches last-wins names and partial application.
			name: "a different later name is refused and not applied",
			feeds: []asmFeed{
				asmOK(asmFrag(0, "i", "book", `{`)),
				asmRefused(asmFrag(0, "i", "cancel", `"JUNK"`), ErrNameConflict),
				asmOK(asmFrag(0, "", "book", `}`)),
			},
			want: "text=\"\" data=\"\"\n0 id=\"i\" name=\"book\" args={} data=\"\"\n",
		},
		{
			// Ids are per call; duplicates across calls are the context's
			// business. Catches a conflict check that reads another call.
			name: "the same id on two calls is not a conflict of the assembler",
			feeds: []asmFeed{
				asmOK(asmFrag(0, "dup", "f", ``)),
				asmOK(asmFrag(1, "dup", "g", ``)),
			},
			want: "text=\"\" data=\"\"\n" +
				"0 id=\"dup\" name=\"f\" args={} data=\"\"\n" +
				"1 id=\"dup\" name=\"g\" args={} data=\"\"\n",
		},
		{
			// Catches per-call data that is concatenated, last-wins or not
			// conflict-checked, null taken as a value, and a refused
			// fragment's arguments appended.
			name: "call provider data: first present value wins",
			feeds: []asmFeed{
				asmOK(asmFrag(0, "i", "f", `{`)),
				asmOK(asmFragData(0, ``, `null`)),
				asmOK(asmFragData(0, ``, `{"sig":"A"}`)),
				asmOK(asmFragData(0, ``, `{"sig":"A"}`)),
				asmRefused(asmFragData(0, `"JUNK"`, `{"sig":"B"}`), ErrCallProviderDataConflict),
				asmOK(asmFragData(0, `}`, ``)),
				asmOK(asmFrag(1, "j", "g", ``)),
			},
			want: "text=\"\" data=\"\"\n" +
				"0 id=\"i\" name=\"f\" args={} data=\"{\\\"sig\\\":\\\"A\\\"}\"\n" +
				"1 id=\"j\" name=\"g\" args={} data=\"\"\n",
		},
		{
			// Catches response data that is last-wins, concatenated or not
			// conflict-checked, and null taken as a value.
			name: "response provider data: first present value wins",
			feeds: []asmFeed{
				asmOK(asmData(``)),
				asmOK(asmData(`null`)),
				asmOK(asmData(`"sig-1"`)),
				asmOK(asmData(`"sig-1"`)),
				asmRefused(asmData(`"sig-2"`), ErrResponseProviderDataConflict),
				asmOK(asmText("hi")),
			},
			want: "text=\"hi\" data=\"\\\"sig-1\\\"\"\n",
		},
		{
			name:  "a negative index is refused",
			feeds: []asmFeed{asmRefused(asmFrag(-1, "i", "f", `{}`), ErrInvalidFragment)},
			want:  "text=\"\" data=\"\"\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := assembleAll(t, AssemblerConfig{}, tt.feeds)
			if got := describeResponse(r); got != tt.want {
				t.Fatalf("response:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

// TestAssemblerDefaults pins the contract's numbers.
// Catches a changed default (256 KiB, 32 calls, 64 bytes a slot).
func TestAssemblerDefaults(t *testing.T) {
	if DefaultMaxResponseBytes != 262144 || DefaultMaxCalls != 32 || CallSlotBytes != 64 {
		t.Fatalf("defaults = %d bytes, %d calls, %d a slot; want 262144, 32, 64", DefaultMaxResponseBytes, DefaultMaxCalls, CallSlotBytes)
	}
}

func TestAssemblerByteCap(t *testing.T) {
	const max = DefaultMaxResponseBytes
	x := func(n int) string { return strings.Repeat("x", n) }
	tests := []struct {
		name      string
		feeds     []asmFeed
		wantText  int // length of the text
		wantCalls int
		wantArgs  int // length of call 0's raw arguments, when there is a call
	}{
		{
			// Catches > turned into >= (the cap itself refused).
			name:     "text exactly at the cap",
			feeds:    []asmFeed{asmOK(asmText(x(max)))},
			wantText: max,
		},
		{
			// Catches a missing cap, and a refused delta appended anyway.
			name:     "one byte over the cap is refused and not applied",
			feeds:    []asmFeed{asmOK(asmText(x(max - 1))), asmRefused(asmText("ab"), ErrResponseTooLarge), asmOK(asmText("a")), asmRefused(asmText("b"), ErrResponseTooLarge)},
			wantText: max,
		},
		{
			// 64 (slot) + 2 (id) + 1 (name) + args fills the cap exactly.
			// Catches ids, names or arguments not charged.
			name:      "a call exactly at the cap",
			feeds:     []asmFeed{asmOK(asmFrag(0, "id", "f", x(max-64-3)))},
			wantCalls: 1,
			wantArgs:  max - 64 - 3,
		},
		{
			name:      "a call one byte over the cap is refused and opens nothing",
			feeds:     []asmFeed{asmRefused(asmFrag(0, "id", "f", x(max-64-2)), ErrResponseTooLarge), asmOK(asmText(x(max)))},
			wantText:  max,
			wantCalls: 0,
		},
		{
			// Catches a new slot charged nothing, or less than 64 bytes.
			name:     "an empty fragment opening a call costs 64 bytes: one short",
			feeds:    []asmFeed{asmOK(asmText(x(max - 63))), asmRefused(asmFrag(0, "", "", ""), ErrResponseTooLarge)},
			wantText: max - 63,
		},
		{
			// Catches a slot charged more than 64 bytes.
			name:      "an empty fragment opening a call costs 64 bytes: exact",
			feeds:     []asmFeed{asmOK(asmText(x(max - 64))), asmOK(asmFrag(0, "", "", ""))},
			wantText:  max - 64,
			wantCalls: 1,
		},
		{
			// Catches the slot charged again on every fragment of an open
			// call, and a repeated id or name charged again.
			name: "the slot and a repeated id and name are charged once",
			feeds: []asmFeed{
				asmOK(asmFrag(0, "id", "f", "")),
				asmOK(asmText(x(max - 64 - 3 - 10))),
				asmOK(asmFrag(0, "id", "f", x(10))),
				asmRefused(asmFrag(0, "", "", "y"), ErrResponseTooLarge),
			},
			wantText:  max - 64 - 3 - 10,
			wantCalls: 1,
			wantArgs:  10,
		},
		{
			// Catches response provider data not charged, or charged again
			// when repeated.
			name: "response provider data charged at its size, once",
			feeds: []asmFeed{
				asmOK(asmData(`"` + x(98) + `"`)),
				asmOK(asmData(`"` + x(98) + `"`)),
				asmOK(asmText(x(max - 100))),
				asmRefused(asmText("y"), ErrResponseTooLarge),
			},
			wantText: max - 100,
		},
		{
			// Catches call provider data not charged, or charged again.
			name: "call provider data charged at its size, once",
			feeds: []asmFeed{
				asmOK(asmFragData(0, "", `"`+x(98)+`"`)),
				asmOK(asmFragData(0, "", `"`+x(98)+`"`)),
				asmOK(asmText(x(max - 64 - 100))),
				asmRefused(asmText("y"), ErrResponseTooLarge),
			},
			wantText:  max - 64 - 100,
			wantCalls: 1,
		},
		{
			// Catches charging before a conflict check: the refused
			// fragment's 10 argument bytes would leave the text no room.
			name: "a refused conflicting fragment is not charged",
			feeds: []asmFeed{
				asmOK(asmFrag(0, "a", "f", "")),
				asmRefused(asmFrag(0, "b", "", x(10)), ErrIDConflict),
				asmOK(asmText(x(max - 64 - 2))),
			},
			wantText:  max - 64 - 2,
			wantCalls: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := assembleAll(t, AssemblerConfig{}, tt.feeds)
			if len(r.Text) != tt.wantText || len(r.Calls) != tt.wantCalls {
				t.Fatalf("text %d bytes, %d calls; want %d bytes, %d calls", len(r.Text), len(r.Calls), tt.wantText, tt.wantCalls)
			}
			if tt.wantCalls > 0 && tt.wantArgs > 0 {
				raw := len(r.Calls[0].Call.Arguments)
				if r.Calls[0].Invalid != nil {
					raw = len(r.Calls[0].Invalid.RawArguments)
				}
				if raw != tt.wantArgs {
					t.Fatalf("call 0 arguments %d bytes, want %d", raw, tt.wantArgs)
				}
			}
		})
	}
}

func TestAssemblerCallCap(t *testing.T) {
	openAll := func(n int) []asmFeed {
		var fs []asmFeed
		for i := range n {
			fs = append(fs, asmOK(asmFrag(i, fmt.Sprintf("c%d", i), "f", `{"i":`)))
		}
		return fs
	}
	closeAll := func(n int) []asmFeed {
		var fs []asmFeed
		for i := range n {
			fs = append(fs, asmOK(asmFrag(i, "", "", `1}`)))
		}
		return fs
	}
	tests := []struct {
		name      string
		cfg       AssemblerConfig
		feeds     []asmFeed
		wantCalls int
		wantLast  int // index of the last call
	}{
		{
			// Catches the cap at 33 (> instead of >=) and a refused fragment
			// that opens a call anyway.
			name:      "default cap: a 33rd call is refused",
			feeds:     append(append(openAll(32), asmRefused(asmFrag(32, "c32", "f", `{}`), ErrTooManyCalls)), closeAll(32)...),
			wantCalls: 32,
			wantLast:  31,
		},
		{
			// Catches the cap applied to every fragment once it is reached:
			// fragments of open calls, first and last, are still accepted.
			name: "fragments of open calls are accepted at the cap",
			feeds: append(append(openAll(32),
				asmRefused(asmFrag(99, "", "", ``), ErrTooManyCalls),
				asmOK(asmFrag(0, "", "", ` `)),
				asmOK(asmFrag(31, "", "", ` `)),
				asmRefused(asmFrag(32, "", "", ``), ErrTooManyCalls),
			), closeAll(32)...),
			wantCalls: 32,
			wantLast:  31,
		},
		{
			// Catches a refused call charged: 2 slots (128) + names (2) leave
			// exactly 70 bytes for text only if the refused fragment cost
			// nothing.
			name: "custom limits: the refused call costs nothing",
			cfg:  AssemblerConfig{MaxBytes: 200, MaxCalls: 2},
			feeds: []asmFeed{
				asmOK(asmFrag(0, "", "f", ``)),
				asmOK(asmFrag(5, "", "g", ``)),
				asmRefused(asmFrag(1, "", "h", `{}`), ErrTooManyCalls),
				asmOK(asmText(strings.Repeat("x", 70))),
				asmRefused(asmText("y"), ErrResponseTooLarge),
			},
			wantCalls: 2,
			wantLast:  5,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := assembleAll(t, tt.cfg, tt.feeds)
			if len(r.Calls) != tt.wantCalls || r.Calls[len(r.Calls)-1].Index != tt.wantLast {
				t.Fatalf("%d calls, last index %d; want %d, %d", len(r.Calls), r.Calls[len(r.Calls)-1].Index, tt.wantCalls, tt.wantLast)
			}
			for _, c := range r.Calls {
				if c.Invalid != nil {
					t.Fatalf("call %d invalid: %+v", c.Index, c.Invalid)
				}
			}
		})
	}
}

func TestAssemblerFinish(t *testing.T) {
	tests := []struct {
		name     string
		call     CallFragment
		wantArgs string // the arguments recorded
		wantKind string // "" for a valid call
	}{
		// Catches empty arguments passed on as nothing (providers reject it).
		{name: "empty arguments mean {}", call: CallFragment{Name: "f"}, wantArgs: `{}`},
		// Catches a blank string sent to the JSON check.
		{name: "blank arguments mean {}", call: CallFragment{Name: "f", Arguments: " \n\t "}, wantArgs: `{}`},
		{name: "object kept verbatim", call: CallFragment{Name: "f", Arguments: `{"b":1, "a":[2]}`}, wantArgs: `{"b":1, "a":[2]}`},
		{name: "surrounding whitespace dropped", call: CallFragment{Name: "f", Arguments: "\n {\"a\":1} \n"}, wantArgs: `{"a":1}`},
		// Catches a prefix check only (partial JSON must never execute).
		{name: "truncated JSON", call: CallFragment{Name: "f", Arguments: `{"a":`}, wantArgs: `{}`, wantKind: KindInvalidArguments},
		{name: "trailing garbage", call: CallFragment{Name: "f", Arguments: `{} x`}, wantArgs: `{}`, wantKind: KindInvalidArguments},
		{name: "two objects", call: CallFragment{Name: "f", Arguments: `{}{}`}, wantArgs: `{}`, wantKind: KindInvalidArguments},
		// Catches non-objects accepted as arguments.
		{name: "array", call: CallFragment{Name: "f", Arguments: `[1]`}, wantArgs: `{}`, wantKind: KindInvalidArguments},
		{name: "string", call: CallFragment{Name: "f", Arguments: `"x"`}, wantArgs: `{}`, wantKind: KindInvalidArguments},
		{name: "number", call: CallFragment{Name: "f", Arguments: `3`}, wantArgs: `{}`, wantKind: KindInvalidArguments},
		{name: "null", call: CallFragment{Name: "f", Arguments: `null`}, wantArgs: `{}`, wantKind: KindInvalidArguments},
		{name: "boolean", call: CallFragment{Name: "f", Arguments: `true`}, wantArgs: `{}`, wantKind: KindInvalidArguments},
		// Catches invalid UTF-8 passed on (encoding/json accepts it;
		// providers reject the request).
		{name: "invalid UTF-8 in a string", call: CallFragment{Name: "f", Arguments: "{\"a\":\"\xff\"}"}, wantArgs: `{}`, wantKind: KindInvalidArguments},
		// Catches a nameless call run (or recorded nameless).
		{name: "no name", call: CallFragment{Arguments: `{"a":1}`}, wantArgs: `{}`, wantKind: KindUnknownTool},
		// Catches the argument check done before the name check.
		{name: "no name and bad JSON", call: CallFragment{Arguments: `{`}, wantArgs: `{}`, wantKind: KindUnknownTool},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The call under test sits between two valid siblings.
			call := tt.call
			call.Index, call.ID = 1, "mid"
			r := assembleAll(t, AssemblerConfig{}, []asmFeed{
				asmOK(asmFrag(0, "before", "g", `{"k":0}`)),
				asmOK(func(a *Assembler) error { return a.AppendCall(call) }),
				asmOK(asmFrag(2, "after", "h", ``)),
			})
			if len(r.Calls) != 3 {
				t.Fatalf("%d calls, want 3", len(r.Calls))
			}
			c := r.Calls[1]
			if string(c.Call.Arguments) != tt.wantArgs || c.Call.ID != "mid" {
				t.Fatalf("call = %+v, want id mid, arguments %s", c.Call, tt.wantArgs)
			}
			gotKind := ""
			if c.Invalid != nil {
				gotKind = c.Invalid.Kind
				if c.Invalid.RawArguments != tt.call.Arguments || c.Invalid.Name != tt.call.Name {
					t.Fatalf("invalid = %+v, want raw %q, name %q", c.Invalid, tt.call.Arguments, tt.call.Name)
				}
			}
			if gotKind != tt.wantKind {
				t.Fatalf("kind %q, want %q", gotKind, tt.wantKind)
			}
			// Catches one invalid call spoiling its siblings.
			if r.Calls[0].Invalid != nil || string(r.Calls[0].Call.Arguments) != `{"k":0}` ||
				r.Calls[2].Invalid != nil || string(r.Calls[2].Call.Arguments) != `{}` {
				t.Fatalf("siblings = %+v, %+v", r.Calls[0], r.Calls[2])
			}
			wantValid := 3
			if tt.wantKind != "" {
				wantValid = 2
			}
			if n := len(r.ValidCalls()); n != wantValid || len(r.ErrorResults()) != 3-wantValid {
				t.Fatalf("%d valid calls and %d error results, want %d and %d", n, len(r.ErrorResults()), wantValid, 3-wantValid)
			}
			for _, vc := range r.ValidCalls() {
				var obj map[string]any
				if err := json.Unmarshal(vc.Arguments, &obj); err != nil {
					t.Fatalf("valid call %s has arguments %s: %v", vc.ID, vc.Arguments, err)
				}
			}
		})
	}
}

func TestAssistantMessage(t *testing.T) {
	tests := []struct {
		name      string
		feeds     []asmFeed
		wantNone  bool
		wantText  string
		wantCalls []messages.ToolCall
		wantData  string
		wantErrs  []string // error result bodies, in index order
	}{
		{
			name:     "nothing: no message",
			wantNone: true,
		},
		{
			// Catches provider data counted as content: the message would be
			// empty and Context.Validate rejects it.
			name:     "provider data alone: no message",
			feeds:    []asmFeed{asmOK(asmData(`"sig"`))},
			wantNone: true,
		},
		{
			name:     "text only, with the response's provider data",
			feeds:    []asmFeed{asmOK(asmText("hello")), asmOK(asmData(`"sig"`))},
			wantText: "hello",
			wantData: `"sig"`,
		},
		{
			name:      "a call alone, no text",
			feeds:     []asmFeed{asmOK(asmFrag(0, "c0", "f", `{"a":1}`))},
			wantCalls: []messages.ToolCall{tc("c0", "f", `{"a":1}`)},
		},
		{
			// Catches an invalid call left out of the message (its error
			// result would answer an unknown call) or recorded with its raw
			// arguments (not an object) or with no name.
			name: "invalid calls recorded beside a valid one",
			feeds: []asmFeed{
				asmOK(asmText("ok")),
				asmOK(asmFrag(0, "c0", "book", `{"slot":`)),
				asmOK(asmFrag(1, "c1", "look", `{"q":"x"}`)),
				asmOK(asmFrag(2, "c2", "", `{}`)),
				asmOK(asmFrag(3, "c3", "list", `[]`)),
			},
			wantText: "ok",
			wantCalls: []messages.ToolCall{
				tc("c0", "book", `{}`),
				tc("c1", "look", `{"q":"x"}`),
				tc("c2", "unknown_tool", `{}`),
				tc("c3", "list", `{}`),
			},
			wantErrs: []string{
				`{"error":"invalid_arguments","tool":"book","detail":"the arguments are not valid JSON: unexpected end of JSON input"}`,
				`{"error":"unknown_tool","tool":"unknown_tool","detail":"the tool call has no tool name"}`,
				`{"error":"invalid_arguments","tool":"list","detail":"the arguments must be a JSON object, not an array"}`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := assembleAll(t, AssemblerConfig{}, tt.feeds)
			m, some := r.AssistantMessage()
			if some == tt.wantNone {
				t.Fatalf("AssistantMessage() = %+v, %v; want a message: %v", m, some, !tt.wantNone)
			}
			if tt.wantNone {
				return
			}
			if m.Role != RoleAssistant || m.Text != tt.wantText || string(m.ProviderData) != tt.wantData {
				t.Fatalf("message = %+v", m)
			}
			if got, want := formatCalls(m.ToolCalls), formatCalls(tt.wantCalls); got != want {
				t.Fatalf("calls = %s, want %s", got, want)
			}
			results := r.ErrorResults()
			var bodies []string
			for _, res := range results {
				if !res.IsError {
					t.Fatalf("error result not marked: %+v", res)
				}
				bodies = append(bodies, res.Content)
			}
			if got, want := strings.Join(bodies, "\n"), strings.Join(tt.wantErrs, "\n"); got != want {
				t.Fatalf("error results:\n%s\nwant:\n%s", got, want)
			}
			// The recorded message, answered by the error results and a
			// result per valid call, is a valid context.
			ctx := ctxOf(User("hi"), m)
			for _, res := range results {
				ctx.Append(ToolMessage(res))
			}
			for _, vc := range r.ValidCalls() {
				ctx.Append(answer(vc.ID, "done"))
			}
			if err := ctx.Validate(); err != nil {
				t.Fatalf("context with the message: %v", err)
			}
		})
	}
}

// formatCalls renders calls as "id name args" lines.
func formatCalls(calls []messages.ToolCall) string {
	var b strings.Builder
	for _, c := range calls {
		fmt.Fprintf(&b, "%s %s %s\n", c.ID, c.Name, c.Arguments)
	}
	return b.String()
}

// Catches ids minted here, or error results built at Finish from the
// provider's ids: the caller that mints ids sets them on the response, and
// the message and the error results must both use them.
func TestAssemblerIDsAsGiven(t *testing.T) {
	r := assembleAll(t, AssemblerConfig{}, []asmFeed{
		asmOK(asmFrag(0, "", "f", `{}`)),
		asmOK(asmFrag(1, "", "", `{}`)),
	})
	for _, c := range r.Calls {
		if c.Call.ID != "" {
			t.Fatalf("call %d got id %q; the assembler mints none", c.Index, c.Call.ID)
		}
	}
	for i := range r.Calls {
		r.Calls[i].Call.ID = fmt.Sprintf("t1.%d", i)
	}
	m, _ := r.AssistantMessage()
	res := r.ErrorResults()
	if m.ToolCalls[0].ID != "t1.0" || m.ToolCalls[1].ID != "t1.1" || len(res) != 1 || res[0].CallID != "t1.1" {
		t.Fatalf("message calls %+v, results %+v", m.ToolCalls, res)
	}
}

// Per-call provider data is kept verbatim on the call, invalid calls
// included, so an adapter can echo a signature back.
// Catches data dropped on invalid calls.
func TestAssemblerCallProviderDataOnInvalidCall(t *testing.T) {
	r := assembleAll(t, AssemblerConfig{}, []asmFeed{
		asmOK(func(a *Assembler) error {
			return a.AppendCall(CallFragment{Index: 0, Name: "f", Arguments: `[`, ProviderData: []byte(`{"thought":"s"}`)})
		}),
	})
	if c := r.Calls[0]; c.Invalid == nil || string(c.ProviderData) != `{"thought":"s"}` {
		t.Fatalf("call = %+v", c)
	}
}

// Catches provider data kept by reference: an adapter reuses its buffer.
func TestAssemblerCopiesProviderData(t *testing.T) {
	a, _ := NewAssembler(AssemblerConfig{})
	buf := []byte(`"one"`)
	if err := a.SetProviderData(buf); err != nil {
		t.Fatal(err)
	}
	if err := a.AppendCall(CallFragment{Index: 0, Name: "f", ProviderData: buf}); err != nil {
		t.Fatal(err)
	}
	copy(buf, `"two"`)
	r, _ := a.Finish()
	if string(r.ProviderData) != `"one"` || string(r.Calls[0].ProviderData) != `"one"` {
		t.Fatalf("data = %s, %s", r.ProviderData, r.Calls[0].ProviderData)
	}
}

func TestAssemblerLifecycle(t *testing.T) {
	deltas := []struct {
		name string
		do   func(*Assembler) error
	}{
		{"text", asmText("x")},
		{"provider data", asmData(`"s"`)},
		{"call fragment", asmFrag(0, "i", "f", `{}`)},
		{"finish", func(a *Assembler) error { _, err := a.Finish(); return err }},
	}
	tests := []struct {
		name string
		end  func(*Assembler)
		want error
	}{
		// Catches a Cancel that does not stop Finish: a cancelled response
		// must yield no text and no calls.
		{name: "after Cancel", end: (*Assembler).Cancel, want: ErrCancelled},
		// Catches a second Finish returning the calls again (they would
		// run twice).
		{name: "after Finish", end: func(a *Assembler) { _, _ = a.Finish() }, want: ErrFinished},
		// Catches a Cancel that reopens a finished assembler.
		{name: "after Finish then Cancel", end: func(a *Assembler) { _, _ = a.Finish(); a.Cancel() }, want: ErrFinished},
	}
	for _, tt := range tests {
		for _, d := range deltas {
			t.Run(tt.name+"/"+d.name, func(t *testing.T) {
				a, _ := NewAssembler(AssemblerConfig{})
				if err := a.AppendText("before"); err != nil {
					t.Fatal(err)
				}
				tt.end(a)
				if err := d.do(a); !errors.Is(err, tt.want) {
					t.Fatalf("%s = %v, want %v", d.name, err, tt.want)
				}
			})
		}
	}
}

func TestAssemblerConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  AssemblerConfig
		want error
	}{
		{name: "zero means defaults", cfg: AssemblerConfig{}},
		{name: "custom", cfg: AssemblerConfig{MaxBytes: 1, MaxCalls: 1}},
		{name: "negative bytes", cfg: AssemblerConfig{MaxBytes: -1}, want: ErrInvalidAssemblerConfig},
		{name: "negative calls", cfg: AssemblerConfig{MaxCalls: -1}, want: ErrInvalidAssemblerConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := NewAssembler(tt.cfg)
			if !errors.Is(err, tt.want) || (err == nil) != (a != nil) {
				t.Fatalf("NewAssembler() = %v, %v; want error %v", a, err, tt.want)
			}
		})
	}
}

// FuzzAssemblerSplit feeds arguments split at any byte, with text between
// the pieces, and checks the result does not depend on the split, that a
// valid call's arguments are a JSON object and an invalid call is recorded
// with {}. The arguments are model output: outside input.
func FuzzAssemblerSplit(f *testing.F) {
	for _, s := range []string{``, ` `, `{}`, `{"a":"\u00e9\n"}`, `{"a":`, `[1,2]`, `null`, `{"n":-1.5e3}`, "{\"a\":\"\xff\"}", `{}{}`} {
		f.Add(s, uint(len(s)/2))
	}
	f.Fuzz(func(t *testing.T, args string, cut uint) {
		at := int(cut % uint(len(args)+1))
		whole := assembleAll(t, AssemblerConfig{}, []asmFeed{asmOK(asmFrag(0, "i", "f", args))})
		split := assembleAll(t, AssemblerConfig{}, []asmFeed{
			asmOK(asmFrag(0, "i", "", args[:at])),
			asmOK(asmText("t")),
			asmOK(asmFrag(0, "", "f", args[at:])),
		})
		w, s := whole.Calls[0], split.Calls[0]
		if string(w.Call.Arguments) != string(s.Call.Arguments) || (w.Invalid == nil) != (s.Invalid == nil) {
			t.Fatalf("whole %+v, split at %d %+v", w, at, s)
		}
		var obj map[string]any
		if err := json.Unmarshal(w.Call.Arguments, &obj); err != nil || obj == nil {
			t.Fatalf("recorded arguments %q are not an object: %v", w.Call.Arguments, err)
		}
		if w.Invalid != nil && string(w.Call.Arguments) != `{}` {
			t.Fatalf("invalid call recorded with %q", w.Call.Arguments)
		}
	})
}

// TestAssistantMessageKeepsCallProviderData: a call's provider data (a
// Gemini thought signature) is recorded on the call in the assistant
// message, so the next request can send it back with the call; the
// vendor rejects a signed call that comes back unsigned. (Mutation seen
// failing: AssistantMessage copying only the call, as before.)
func TestAssistantMessageKeepsCallProviderData(t *testing.T) {
	a, err := NewAssembler(AssemblerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.AppendCall(CallFragment{Index: 0, ID: "c1", Name: "lookup", Arguments: `{}`, ProviderData: []byte(`"sig-A"`)}); err != nil {
		t.Fatal(err)
	}
	if err := a.AppendCall(CallFragment{Index: 1, ID: "c2", Name: "lookup", Arguments: `{}`}); err != nil {
		t.Fatal(err)
	}
	r, err := a.Finish()
	if err != nil {
		t.Fatal(err)
	}
	m, ok := r.AssistantMessage()
	if !ok || len(m.ToolCalls) != 2 || string(m.ToolCalls[0].ProviderData) != `"sig-A"` || m.ToolCalls[1].ProviderData != nil {
		t.Fatalf("assistant message calls %+v", m.ToolCalls)
	}
}
