package agent

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brisvox/brisvox/messages"
)

// TestArgumentsDigestPinned pins the canonical encoding. The values were
// computed by hash/fnv over the documented bytes, not by ArgumentsDigest.
// Catches a change of tags, of length prefixes or of key order.
func TestArgumentsDigestPinned(t *testing.T) {
	cases := []struct {
		name string
		tool string
		args string
		want uint64
	}{
		{name: "booking", tool: "book_table", args: `{"party":2,"name":"Kaya"}`, want: 0xdd248003de4059c2},
		{name: "no arguments", tool: "end_call", args: `{}`, want: 0x46bd816758f367a8},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := ArgumentsDigest(tc.tool, json.RawMessage(tc.args)); got != tc.want {
				t.Errorf("ArgumentsDigest = %016x, want %016x", got, tc.want)
			}
		})
	}
}

// TestArgumentsDigestCompare: which arguments count as the same call.
func TestArgumentsDigestCompare(t *testing.T) {
	cases := []struct {
		name   string
		toolA  string
		a      string
		toolB  string
		b      string
		wantEq bool
	}{
		// Catches hashing the raw bytes (no canonical walk) or sorting only
		// the top level (mutation seen failing: no sort).
		{name: "key order", a: `{"party":2,"name":"Kaya"}`, b: `{"name":"Kaya","party":2}`, wantEq: true},
		{name: "nested key order", a: `{"who":{"first":"Ka","last":"Ya"},"at":[{"h":19,"m":30}]}`, b: `{"at":[{"m":30,"h":19}],"who":{"last":"Ya","first":"Ka"}}`, wantEq: true},
		{name: "whitespace", a: "{ \"party\" : 2 }\n", b: `{"party":2}`, wantEq: true},
		{name: "string escapes decoded", a: `{"name":"\u004baya"}`, b: `{"name":"Kaya"}`, wantEq: true},
		{name: "empty is {}", a: ``, b: `{}`, wantEq: true},
		{name: "other value", a: `{"party":2}`, b: `{"party":3}`},
		{name: "other tool", toolB: "cancel_table", a: `{"party":2}`, b: `{"party":2}`},
		{name: "array order matters", a: `{"seats":[1,2]}`, b: `{"seats":[2,1]}`},
		{name: "number text differs", a: `{"party":2}`, b: `{"party":2.0}`},
		{name: "number vs string", a: `{"party":2}`, b: `{"party":"2"}`},
		{name: "null vs missing", a: `{"note":null}`, b: `{}`},
		{name: "true vs false", a: `{"vip":true}`, b: `{"vip":false}`},
		// Catches a walk without length prefixes, where a key's bytes can
		// run into the next.
		{name: "key and value boundary", a: `{"ab":"c"}`, b: `{"a":"bc"}`},
		{name: "array nesting", a: `{"x":[[1],2]}`, b: `{"x":[1,[2]]}`},
		{name: "invalid JSON equals itself", a: `{"party":`, b: `{"party":`, wantEq: true},
		{name: "trailing data is not the value", a: `{"party":2} {}`, b: `{"party":2}`},
		{name: "invalid JSON is not the string of its bytes", a: `{`, b: `"{"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			toolA, toolB := "book_table", "book_table"
			if tc.toolA != "" {
				toolA = tc.toolA
			}
			if tc.toolB != "" {
				toolB = tc.toolB
			}
			da := ArgumentsDigest(toolA, json.RawMessage(tc.a))
			db := ArgumentsDigest(toolB, json.RawMessage(tc.b))
			if (da == db) != tc.wantEq {
				t.Errorf("digests %016x and %016x: equal = %v, want %v", da, db, da == db, tc.wantEq)
			}
		})
	}
}

func TestOrphanConfig(t *testing.T) {
	if _, err := NewOrphanTable(OrphanConfig{Capacity: -1}); !errors.Is(err, ErrInvalidOrphanConfig) {
		t.Errorf("negative capacity: %v", err)
	}
	tab, err := NewOrphanTable(OrphanConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if tab.cfg != (OrphanConfig{Capacity: 32, Window: 120 * time.Second}) {
		t.Errorf("defaults = %+v", tab.cfg)
	}
}

// orphanScene drives an OrphanTable on a virtual clock.
type orphanScene struct {
	t   *testing.T
	tab *OrphanTable
	now time.Time
}

var orphanT0 = time.Date(2026, 10, 8, 12, 0, 0, 0, time.UTC)

// orphanCall is a booking of the test session in the given turn and round, with
// the given arguments.
func orphanCall(epoch messages.Epoch, round, seq int, args string) TrackedCall {
	return TrackedCall{
		Key:    IdempotencyKey{Session: "s", Epoch: epoch, CallID: "t" + strconv.Itoa(int(epoch)) + "." + strconv.Itoa(seq)},
		Round:  round,
		Tool:   "book_table",
		Digest: ArgumentsDigest("book_table", json.RawMessage(args)),
	}
}

const kayaArgs = `{"name":"Kaya","party":2}`

func (s *orphanScene) wait(d time.Duration) { s.now = s.now.Add(d) }

func (s *orphanScene) start(c TrackedCall) { s.tab.Start(c, s.now) }

func (s *orphanScene) ok(c TrackedCall, content string) {
	s.t.Helper()
	if !s.tab.Settle(c.Key, messages.ToolResult{CallID: c.Key.CallID, Name: c.Tool, Content: content}, s.now) {
		s.t.Fatalf("Settle(%s): not remembered", c.Key.CallID)
	}
}

func (s *orphanScene) failed(c TrackedCall) {
	s.t.Helper()
	r := ErrorResult(messages.ToolCall{ID: c.Key.CallID, Name: c.Tool}, KindToolFailed, "no table")
	if !s.tab.Settle(c.Key, r, s.now) {
		s.t.Fatalf("Settle(%s): not remembered", c.Key.CallID)
	}
}

func (s *orphanScene) orphan(c TrackedCall) {
	s.t.Helper()
	if !s.tab.MarkOrphan(c.Key, s.now) {
		s.t.Fatalf("MarkOrphan(%s): not remembered", c.Key.CallID)
	}
}

func TestOrphanTableCheck(t *testing.T) {
	cases := []struct {
		name string
		cfg  OrphanConfig
		// scene sets the table up and returns the probe.
		scene      func(s *orphanScene) Probe
		want       Verdict
		wantResult string // content of Match.Result
		wantKind   string // error kind of the answer, "" for a plain result
	}{
		{
			// Catches a missing repeat check: BK-1002 (the S3 bug).
			name: "identical call of a later round of the same turn is already_done",
			scene: func(s *orphanScene) Probe {
				first := orphanCall(1, 0, 0, kayaArgs)
				s.start(first)
				s.ok(first, "BK-1001")
				return Probe{TrackedCall: orphanCall(1, 1, 1, kayaArgs)}
			},
			want: VerdictAlreadyDone, wantResult: "BK-1001", wantKind: KindAlreadyDone,
		},
		{
			// Catches comparing arguments by raw bytes: the model often
			// reorders keys.
			name: "reordered arguments are still a repeat",
			scene: func(s *orphanScene) Probe {
				first := orphanCall(1, 0, 0, `{"party":2,"name":"Kaya"}`)
				s.start(first)
				s.ok(first, "BK-1001")
				return Probe{TrackedCall: orphanCall(1, 1, 1, `{"name":"Kaya","party":2}`)}
			},
			want: VerdictAlreadyDone, wantResult: "BK-1001", wantKind: KindAlreadyDone,
		},
		{
			// Catches matching on tool alone (another booking refused).
			name: "other arguments run",
			scene: func(s *orphanScene) Probe {
				first := orphanCall(1, 0, 0, kayaArgs)
				s.start(first)
				s.ok(first, "BK-1001")
				return Probe{TrackedCall: orphanCall(1, 1, 1, `{"name":"Kaya","party":4}`)}
			},
			want: VerdictRun,
		},
		{
			// Catches a repeat check without the epoch test (mutation
			// seen failing): the caller may ask again next turn.
			name: "the next turn runs",
			scene: func(s *orphanScene) Probe {
				first := orphanCall(1, 0, 0, kayaArgs)
				s.start(first)
				s.ok(first, "BK-1001")
				return Probe{TrackedCall: orphanCall(2, 0, 0, kayaArgs)}
			},
			want: VerdictRun,
		},
		{
			// Catches a check without the same-run test: "book two tables
			// for Kaya" is two calls.
			name: "two identical calls of one response both run",
			scene: func(s *orphanScene) Probe {
				first := orphanCall(1, 0, 0, kayaArgs)
				s.start(first)
				s.ok(first, "BK-1001")
				return Probe{TrackedCall: orphanCall(1, 0, 1, kayaArgs)}
			},
			want: VerdictRun,
		},
		{
			// Catches failures counted as successes (mutation seen
			// failing): a failed SideEffect may be retried.
			name: "a retry of a failed call runs",
			scene: func(s *orphanScene) Probe {
				first := orphanCall(1, 0, 0, kayaArgs)
				s.start(first)
				s.failed(first)
				return Probe{TrackedCall: orphanCall(1, 1, 1, kayaArgs)}
			},
			want: VerdictRun,
		},
		{
			// Catches ignoring Repeatable (send_dtmf pressing 1 twice).
			name: "a repeatable tool runs",
			scene: func(s *orphanScene) Probe {
				first := orphanCall(1, 0, 0, kayaArgs)
				s.start(first)
				s.ok(first, "pressed")
				return Probe{TrackedCall: orphanCall(1, 1, 1, kayaArgs), Repeatable: true}
			},
			want: VerdictRun,
		},
		{
			// Catches Repeatable also switching the orphan answers off: a
			// regenerated press after a barge-in must not press twice.
			name: "a repeatable tool's orphan still replays",
			scene: func(s *orphanScene) Probe {
				first := orphanCall(1, 0, 0, kayaArgs)
				s.start(first)
				s.orphan(first)
				s.ok(first, "pressed")
				return Probe{TrackedCall: orphanCall(2, 0, 0, kayaArgs), Repeatable: true}
			},
			want: VerdictOrphanReplayed, wantResult: "pressed",
		},
		{
			// Catches a running call (not an orphan) treated as a repeat.
			name: "a running call that is not an orphan does not answer",
			scene: func(s *orphanScene) Probe {
				s.start(orphanCall(1, 0, 0, kayaArgs))
				return Probe{TrackedCall: orphanCall(1, 1, 1, kayaArgs)}
			},
			want: VerdictRun,
		},
		{
			// Catches the table shared across sessions leaking results.
			name: "another session runs",
			scene: func(s *orphanScene) Probe {
				first := orphanCall(1, 0, 0, kayaArgs)
				s.start(first)
				s.ok(first, "BK-1001")
				p := Probe{TrackedCall: orphanCall(1, 1, 1, kayaArgs)}
				p.Key.Session = "other"
				return p
			},
			want: VerdictRun,
		},
		{
			// Catches a regenerated call run again after a barge-in.
			name: "finished orphan is replayed under the new id",
			scene: func(s *orphanScene) Probe {
				first := orphanCall(1, 0, 0, kayaArgs)
				s.start(first)
				s.wait(time.Second)
				s.orphan(first) // interrupted while running
				s.wait(time.Second)
				s.ok(first, "BK-1001")
				return Probe{TrackedCall: orphanCall(2, 0, 0, kayaArgs)}
			},
			want: VerdictOrphanReplayed, wantResult: "BK-1001",
		},
		{
			// Catches an orphan's failure not replayed (the tool would run
			// again after the barge-in).
			name: "finished orphan that failed replays the failure",
			scene: func(s *orphanScene) Probe {
				first := orphanCall(1, 0, 0, kayaArgs)
				s.start(first)
				s.orphan(first)
				s.failed(first)
				return Probe{TrackedCall: orphanCall(2, 0, 0, kayaArgs)}
			},
			want: VerdictOrphanReplayed, wantResult: `{"error":"tool_failed","tool":"book_table","detail":"no table"}`, wantKind: KindToolFailed,
		},
		{
			// Catches the result read twice (note and replay).
			name: "orphan whose note was delivered is already_reported",
			scene: func(s *orphanScene) Probe {
				first := orphanCall(1, 0, 0, kayaArgs)
				s.start(first)
				s.orphan(first)
				s.ok(first, "BK-1001")
				s.tab.MarkReported(first.Key)
				return Probe{TrackedCall: orphanCall(2, 0, 0, kayaArgs)}
			},
			want: VerdictAlreadyReported, wantKind: KindAlreadyReported,
		},
		{
			// Catches a second run while the first still runs.
			name: "running orphan is duplicate_call",
			scene: func(s *orphanScene) Probe {
				first := orphanCall(1, 0, 0, kayaArgs)
				s.start(first)
				s.orphan(first)
				return Probe{TrackedCall: orphanCall(2, 0, 0, kayaArgs)}
			},
			want: VerdictOrphanInFlight, wantKind: KindDuplicateCall,
		},
		{
			// Catches a lost orphan run again.
			name: "lost orphan is unknown_outcome",
			scene: func(s *orphanScene) Probe {
				first := orphanCall(1, 0, 0, kayaArgs)
				s.start(first)
				s.orphan(first)
				s.tab.Lose(first.Key, s.now)
				return Probe{TrackedCall: orphanCall(2, 0, 0, kayaArgs)}
			},
			want: VerdictOrphanLost, wantKind: KindUnknownOutcome,
		},
		{
			// Catches the same-turn retry after a timeout the model was
			// told not to make.
			name: "timed-out orphan answers a later round of the same turn",
			scene: func(s *orphanScene) Probe {
				first := orphanCall(1, 0, 0, kayaArgs)
				s.start(first)
				s.wait(5 * time.Second)
				s.orphan(first)
				return Probe{TrackedCall: orphanCall(1, 1, 1, kayaArgs)}
			},
			want: VerdictOrphanInFlight, wantKind: KindDuplicateCall,
		},
		{
			// Catches a window test of > instead of >= (a mutation seen
			// failing): exactly 120 s after the last news has expired.
			name: "window expired exactly at 120 s",
			scene: func(s *orphanScene) Probe {
				first := orphanCall(1, 0, 0, kayaArgs)
				s.start(first)
				s.orphan(first)
				s.ok(first, "BK-1001")
				s.wait(120 * time.Second)
				return Probe{TrackedCall: orphanCall(2, 0, 0, kayaArgs)}
			},
			want: VerdictRun,
		},
		{
			// Catches an off-by-one the other way: just inside the window.
			name: "window open 1 ns before 120 s",
			scene: func(s *orphanScene) Probe {
				first := orphanCall(1, 0, 0, kayaArgs)
				s.start(first)
				s.orphan(first)
				s.ok(first, "BK-1001")
				s.wait(120*time.Second - time.Nanosecond)
				return Probe{TrackedCall: orphanCall(2, 0, 0, kayaArgs)}
			},
			want: VerdictOrphanReplayed, wantResult: "BK-1001",
		},
		{
			// Catches a window anchored at the start: a call that ran
			// 100 s and then settled is news from its settle time.
			name: "window counts from the last news",
			scene: func(s *orphanScene) Probe {
				first := orphanCall(1, 0, 0, kayaArgs)
				s.start(first)
				s.orphan(first)
				s.wait(100 * time.Second)
				s.ok(first, "BK-1001")
				s.wait(100 * time.Second)
				return Probe{TrackedCall: orphanCall(2, 0, 0, kayaArgs)}
			},
			want: VerdictOrphanReplayed, wantResult: "BK-1001",
		},
		{
			// Catches a negative window read as "forever".
			name: "window off",
			cfg:  OrphanConfig{Window: -1},
			scene: func(s *orphanScene) Probe {
				first := orphanCall(1, 0, 0, kayaArgs)
				s.start(first)
				s.orphan(first)
				s.ok(first, "BK-1001")
				return Probe{TrackedCall: orphanCall(2, 0, 0, kayaArgs)}
			},
			want: VerdictRun,
		},
		{
			// Catches the repeat check switched off with the window.
			name: "window off keeps the repeat check",
			cfg:  OrphanConfig{Window: -1},
			scene: func(s *orphanScene) Probe {
				first := orphanCall(1, 0, 0, kayaArgs)
				s.start(first)
				s.ok(first, "BK-1001")
				return Probe{TrackedCall: orphanCall(1, 1, 1, kayaArgs)}
			},
			want: VerdictAlreadyDone, wantResult: "BK-1001", wantKind: KindAlreadyDone,
		},
		{
			// Catches a delivered result treated as an orphan: a user who
			// asks again later runs it again.
			name: "consumed orphan runs in a later turn",
			scene: func(s *orphanScene) Probe {
				first := orphanCall(1, 0, 0, kayaArgs)
				s.start(first)
				s.orphan(first)
				s.ok(first, "BK-1001")
				s.tab.Consume(first.Key)
				return Probe{TrackedCall: orphanCall(2, 0, 0, kayaArgs)}
			},
			want: VerdictRun,
		},
		{
			// Catches Consume removing the entry: the model read the
			// replay, so a later round of that turn is already_done.
			name: "consumed orphan is a repeat in its own turn",
			scene: func(s *orphanScene) Probe {
				first := orphanCall(1, 0, 0, kayaArgs)
				s.start(first)
				s.wait(5 * time.Second)
				s.orphan(first)
				s.ok(first, "BK-1001")
				s.tab.Consume(first.Key)
				return Probe{TrackedCall: orphanCall(1, 2, 2, kayaArgs)}
			},
			want: VerdictAlreadyDone, wantResult: "BK-1001", wantKind: KindAlreadyDone,
		},
		{
			// Catches a scan from the oldest (a mutation seen failing):
			// the delivered booking of round 0 would answer already_done
			// while the newer retry of round 1 still runs.
			name: "the most recent matching call decides",
			scene: func(s *orphanScene) Probe {
				old := orphanCall(2, 0, 0, kayaArgs)
				s.start(old)
				s.ok(old, "BK-1001")
				recent := orphanCall(2, 1, 1, kayaArgs)
				s.start(recent)
				s.orphan(recent)
				return Probe{TrackedCall: orphanCall(2, 2, 2, kayaArgs)}
			},
			want: VerdictOrphanInFlight, wantKind: KindDuplicateCall,
		},
		{
			// Catches a table that grows past 32 or forgets the newest:
			// 32 later calls push the orphan out.
			name: "the 33rd call forgets the oldest",
			scene: func(s *orphanScene) Probe {
				first := orphanCall(1, 0, 0, kayaArgs)
				s.start(first)
				s.orphan(first)
				for i := 1; i <= 32; i++ {
					s.start(orphanCall(1, 0, i, `{"n":`+strconv.Itoa(i)+`}`))
				}
				if s.tab.Len() != 32 {
					s.t.Errorf("Len = %d, want 32", s.tab.Len())
				}
				return Probe{TrackedCall: orphanCall(2, 0, 0, kayaArgs)}
			},
			want: VerdictRun,
		},
		{
			// Catches an off-by-one in the capacity: with 31 later calls
			// the orphan is still the 32nd remembered.
			name: "capacity exactly 32 keeps the oldest",
			scene: func(s *orphanScene) Probe {
				first := orphanCall(1, 0, 0, kayaArgs)
				s.start(first)
				s.orphan(first)
				for i := 1; i <= 31; i++ {
					s.start(orphanCall(1, 0, i, `{"n":`+strconv.Itoa(i)+`}`))
				}
				if s.tab.Len() != 32 {
					s.t.Errorf("Len = %d, want 32", s.tab.Len())
				}
				return Probe{TrackedCall: orphanCall(2, 0, 0, kayaArgs)}
			},
			want: VerdictOrphanInFlight, wantKind: KindDuplicateCall,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tab, err := NewOrphanTable(c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			s := &orphanScene{t: t, tab: tab, now: orphanT0}
			p := c.scene(s)
			m := tab.Check(p, s.now)
			if m.Verdict != c.want {
				t.Fatalf("verdict = %v, want %v", m.Verdict, c.want)
			}
			if m.Result.Content != c.wantResult {
				t.Errorf("result = %q, want %q", m.Result.Content, c.wantResult)
			}
			newCall := messages.ToolCall{ID: p.Key.CallID, Name: p.Tool}
			got, answered := m.Answer(newCall)
			if answered != (c.want != VerdictRun) {
				t.Fatalf("answered = %v for %v", answered, m.Verdict)
			}
			if !answered {
				return
			}
			if got.CallID != newCall.ID || got.Name != newCall.Name {
				t.Errorf("answer is for %s/%s, want the new call %s/%s", got.CallID, got.Name, newCall.ID, newCall.Name)
			}
			if c.wantKind == "" {
				if got.IsError || got.Content != c.wantResult {
					t.Errorf("answer = %+v, want the recorded result", got)
				}
				return
			}
			var body struct{ Error string }
			if err := json.Unmarshal([]byte(got.Content), &body); err != nil || !got.IsError || body.Error != c.wantKind {
				t.Errorf("answer = %+v, want error kind %s", got, c.wantKind)
			}
		})
	}
}

// TestOrphanTableUnknownKeys: updates of a forgotten key report it and
// change nothing. Catches an update that appends or panics.
func TestOrphanTableUnknownKeys(t *testing.T) {
	tab, err := NewOrphanTable(OrphanConfig{})
	if err != nil {
		t.Fatal(err)
	}
	k := IdempotencyKey{Session: "s", Epoch: 1, CallID: "t1.0"}
	for name, ok := range map[string]bool{
		"Settle":       tab.Settle(k, messages.ToolResult{}, orphanT0),
		"Lose":         tab.Lose(k, orphanT0),
		"MarkOrphan":   tab.MarkOrphan(k, orphanT0),
		"MarkReported": tab.MarkReported(k),
		"Consume":      tab.Consume(k),
	} {
		if ok {
			t.Errorf("%s of an unknown key reported true", name)
		}
	}
	c := orphanCall(1, 0, 0, kayaArgs)
	tab.Start(c, orphanT0)
	tab.Start(c, orphanT0.Add(time.Second)) // a second Start is ignored
	if tab.Len() != 1 {
		t.Errorf("Len = %d, want 1", tab.Len())
	}
}

func TestVerdictString(t *testing.T) {
	want := []string{"run", "repeat_refused", "orphan_replayed", "orphan_reported", "orphan_in_flight", "orphan_lost"}
	for v, w := range want {
		if got := Verdict(v).String(); got != w {
			t.Errorf("Verdict(%d) = %s, want %s", v, got, w)
		}
	}
	if !strings.Contains(Verdict(99).String(), "unknown") {
		t.Error("an unknown verdict should say so")
	}
}
