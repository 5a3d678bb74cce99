package stock_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/agent/stock"
	"github.com/brisvox/brisvox/messages"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// fixedClock is a Clock stopped at one instant.
type fixedClock time.Time

func (c fixedClock) Now() time.Time { return time.Time(c) }

// errorBody is the body of an error result.
type errorBody struct {
	Error  string `json:"error"`
	Tool   string `json:"tool"`
	Detail string `json:"detail"`
}

func decodeError(t *testing.T, r messages.ToolResult) errorBody {
	t.Helper()
	if !r.IsError {
		t.Fatalf("want an error result, got %q", r.Content)
	}
	var b errorBody
	if err := json.Unmarshal([]byte(r.Content), &b); err != nil {
		t.Fatalf("error body %q: %v", r.Content, err)
	}
	return b
}

func TestRegisterBoth(t *testing.T) {
	reg, err := agent.NewRegistry(stock.GetTime(fixedClock{}), stock.SaveNote(stock.NewNoteStore()))
	if err != nil {
		t.Fatalf("register: %v", err)
	}
	want := map[string]agent.Effect{stock.GetTimeTool: agent.ReadOnly, stock.SaveNoteTool: agent.SideEffect}
	for name, effect := range want {
		_, spec, ok := reg.Lookup(name)
		if !ok {
			t.Fatalf("%s not registered", name)
		}
		if spec.Effect != effect {
			t.Errorf("%s: effect %v, want %v", name, spec.Effect, effect)
		}
	}
}

func TestGetTime(t *testing.T) {
	winter := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	summer := time.Date(2026, 7, 1, 9, 30, 0, 0, time.UTC)
	const hint = ": ask the caller for their city or use an IANA name like Europe/Paris"
	tests := []struct {
		name       string
		now        time.Time // default winter
		args       string
		wantTime   string // the answer's time, for a success
		wantKind   string // for an error result
		wantDetail string // exact detail of an error result; "" to skip
	}{
		{name: "Paris in winter", args: `{"timezone":"Europe/Paris"}`, wantTime: "2026-12-01T10:30:00+01:00"},
		{name: "Paris in summer", now: summer, args: `{"timezone":"Europe/Paris"}`, wantTime: "2026-07-01T11:30:00+02:00"},
		{name: "New York", args: `{"timezone":"America/New_York"}`, wantTime: "2026-12-01T04:30:00-05:00"},
		{name: "half-hour zone", args: `{"timezone":"Asia/Kolkata"}`, wantTime: "2026-12-01T15:00:00+05:30"},
		{name: "UTC", args: `{"timezone":"UTC"}`, wantTime: "2026-12-01T09:30:00Z"},
		{
			// Catches a bad zone answered as UTC, or as an error that
			// does not tell the model what to do.
			name: "unknown zone tells the model what to do", args: `{"timezone":"Mars/Olympus"}`,
			wantKind: agent.KindToolFailed, wantDetail: `unknown timezone "Mars/Olympus"` + hint,
		},
		{name: "city name is not a zone", args: `{"timezone":"paris"}`, wantKind: agent.KindToolFailed, wantDetail: `unknown timezone "paris"` + hint},
		// Catches "Local" answering the server's zone as the caller's.
		{name: "Local is refused", args: `{"timezone":"Local"}`, wantKind: agent.KindToolFailed, wantDetail: `unknown timezone "Local"` + hint},
		{name: "path is refused", args: `{"timezone":"../../etc/passwd"}`, wantKind: agent.KindToolFailed},
		{name: "missing timezone", args: `{}`, wantKind: agent.KindInvalidArguments},
		{name: "empty timezone", args: `{"timezone":""}`, wantKind: agent.KindInvalidArguments},
		{name: "unknown argument", args: `{"timezone":"UTC","format":"unix"}`, wantKind: agent.KindInvalidArguments},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := tt.now
			if now.IsZero() {
				now = winter
			}
			reg, err := agent.NewRegistry(stock.GetTime(fixedClock(now)))
			if err != nil {
				t.Fatal(err)
			}
			call := messages.ToolCall{ID: "t1.0", Name: stock.GetTimeTool, Arguments: json.RawMessage(tt.args)}
			r := agent.RunCall(context.Background(), reg, call, agent.CallInfo{Epoch: 1})
			if tt.wantKind != "" {
				b := decodeError(t, r)
				if b.Error != tt.wantKind || b.Tool != stock.GetTimeTool {
					t.Fatalf("error %q of tool %q, want %q of %q", b.Error, b.Tool, tt.wantKind, stock.GetTimeTool)
				}
				if tt.wantDetail != "" && b.Detail != tt.wantDetail {
					t.Errorf("detail %q, want %q", b.Detail, tt.wantDetail)
				}
				return
			}
			if r.IsError {
				t.Fatalf("unexpected error result %s", r.Content)
			}
			if want := `{"time":"` + tt.wantTime + `"}`; r.Content != want {
				t.Errorf("content %s, want %s", r.Content, want)
			}
			// The page's line: the local time and the zone asked for.
			// Mutation seen failing: the summary in the server's zone
			// (now, not now.In(loc)) -> Paris reads 09:30.
			if want := tt.wantTime[11:16] + " in " + strings.Trim(tt.args[13:], `"}`); r.Summary != want {
				t.Errorf("summary %q, want %q", r.Summary, want)
			}
		})
	}
}

func TestGetTimeErrorWrapsSentinel(t *testing.T) {
	_, err := stock.GetTime(fixedClock{}).Call(context.Background(), json.RawMessage(`{"timezone":"Nowhere/Land"}`), agent.CallInfo{})
	if !errors.Is(err, stock.ErrUnknownTimezone) {
		t.Errorf("err %v, want it to wrap ErrUnknownTimezone", err)
	}
}

// delivery is one delivery of a save_note call.
type delivery struct {
	session, callID string // make the idempotency key; no key when session is ""
	text            string
	wantNoteID      string // for a success
	wantKind        string // for an error result
	wantDetail      string // substring of the error's detail
}

func TestSaveNote(t *testing.T) {
	accents := strings.Repeat("é", stock.MaxNoteRunes) // 1000 bytes, 500 characters
	tests := []struct {
		name       string
		deliveries []delivery
		wantNotes  []string // the texts saved, in order
	}{
		{
			name:       "one call saves one note",
			deliveries: []delivery{{session: "s1", callID: "t1.0", text: "call back at 5", wantNoteID: "note-1"}},
			wantNotes:  []string{"call back at 5"},
		},
		{
			// Catches a store that ignores the key: the redelivery would
			// save a second note.
			name: "a redelivery gets the same note and saves nothing",
			deliveries: []delivery{
				{session: "s1", callID: "t1.0", text: "call back at 5", wantNoteID: "note-1"},
				{session: "s1", callID: "t1.0", text: "call back at 5", wantNoteID: "note-1"},
				{session: "s1", callID: "t1.0", text: "call back at 5", wantNoteID: "note-1"},
			},
			wantNotes: []string{"call back at 5"},
		},
		{
			name: "another call saves another note, even with the same text",
			deliveries: []delivery{
				{session: "s1", callID: "t1.0", text: "call back at 5", wantNoteID: "note-1"},
				{session: "s1", callID: "t1.1", text: "call back at 5", wantNoteID: "note-2"},
			},
			wantNotes: []string{"call back at 5", "call back at 5"},
		},
		{
			// Call ids restart in every session: the key must tell them apart.
			name: "the same call id in another session is another call",
			deliveries: []delivery{
				{session: "s1", callID: "t1.0", text: "from s1", wantNoteID: "note-1"},
				{session: "s2", callID: "t1.0", text: "from s2", wantNoteID: "note-2"},
			},
			wantNotes: []string{"from s1", "from s2"},
		},
		{
			name: "a key reused with other text saves nothing",
			deliveries: []delivery{
				{session: "s1", callID: "t1.0", text: "first", wantNoteID: "note-1"},
				{session: "s1", callID: "t1.0", text: "second", wantKind: agent.KindToolFailed, wantDetail: "already used"},
			},
			wantNotes: []string{"first"},
		},
		{
			// Catches the empty key treated as a key: every keyless call
			// would answer with the first keyless note.
			name: "no idempotency key saves nothing",
			deliveries: []delivery{
				{text: "a", wantKind: agent.KindToolFailed, wantDetail: "no idempotency key"},
				{text: "b", wantKind: agent.KindToolFailed, wantDetail: "no idempotency key"},
			},
		},
		{
			name:       "500 characters of two bytes each fit",
			deliveries: []delivery{{session: "s1", callID: "t1.0", text: accents, wantNoteID: "note-1"}},
			wantNotes:  []string{accents},
		},
		{
			name:       "501 characters do not",
			deliveries: []delivery{{session: "s1", callID: "t1.0", text: accents + "x", wantKind: agent.KindInvalidArguments}},
		},
		{
			name:       "empty text",
			deliveries: []delivery{{session: "s1", callID: "t1.0", text: "", wantKind: agent.KindInvalidArguments}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := stock.NewNoteStore()
			reg, err := agent.NewRegistry(stock.SaveNote(store))
			if err != nil {
				t.Fatal(err)
			}
			for i, d := range tt.deliveries {
				args, err := json.Marshal(map[string]string{"text": d.text})
				if err != nil {
					t.Fatal(err)
				}
				call := messages.ToolCall{ID: d.callID, Name: stock.SaveNoteTool, Arguments: args}
				info := agent.CallInfo{CallID: d.callID, Epoch: 1}
				if d.session != "" {
					info.IdempotencyKey = agent.IdempotencyKey{Session: d.session, Epoch: 1, CallID: d.callID}
				}
				r := agent.RunCall(context.Background(), reg, call, info)
				if d.wantKind != "" {
					b := decodeError(t, r)
					if b.Error != d.wantKind || !strings.Contains(b.Detail, d.wantDetail) {
						t.Errorf("delivery %d: error %q %q, want %q containing %q", i, b.Error, b.Detail, d.wantKind, d.wantDetail)
					}
					continue
				}
				if want := `{"note_id":"` + d.wantNoteID + `"}`; r.IsError || r.Content != want {
					t.Errorf("delivery %d: %s, want %s", i, r.Content, want)
				}
			}
			var got []string
			for _, n := range store.Notes() {
				got = append(got, n.Text)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.wantNotes) || len(got) != len(tt.wantNotes) {
				t.Errorf("saved %q, want %q", got, tt.wantNotes)
			}
		})
	}
}

// Catches a store whose check and insert are not one step: concurrent
// deliveries of one call would each save a note.
func TestNoteStoreConcurrentDeliveries(t *testing.T) {
	store := stock.NewNoteStore()
	reg, err := agent.NewRegistry(stock.SaveNote(store))
	if err != nil {
		t.Fatal(err)
	}
	const calls, deliveries = 8, 8
	ids := make([][]string, calls)
	var wg sync.WaitGroup
	for c := range calls {
		ids[c] = make([]string, deliveries)
		callID := fmt.Sprintf("t1.%d", c)
		key := agent.IdempotencyKey{Session: "s1", Epoch: 1, CallID: callID}
		for d := range deliveries {
			wg.Go(func() {
				call := messages.ToolCall{ID: callID, Name: stock.SaveNoteTool, Arguments: json.RawMessage(`{"text":"` + callID + `"}`)}
				r := agent.RunCall(context.Background(), reg, call, agent.CallInfo{CallID: callID, Epoch: 1, IdempotencyKey: key})
				ids[c][d] = r.Content
			})
		}
	}
	wg.Wait()
	if n := len(store.Notes()); n != calls {
		t.Fatalf("%d notes saved for %d calls", n, calls)
	}
	seen := map[string]bool{}
	for c := range calls {
		for d := range deliveries {
			if ids[c][d] != ids[c][0] {
				t.Errorf("call %d: delivery %d answered %s, delivery 0 %s", c, d, ids[c][d], ids[c][0])
			}
		}
		if seen[ids[c][0]] {
			t.Errorf("call %d answered %s, as another call did", c, ids[c][0])
		}
		seen[ids[c][0]] = true
	}
}

// The schema's maxLength and MaxNoteRunes must agree, or the tool would
// refuse what the schema let through (or the other way round).
func TestSaveNoteSchemaBound(t *testing.T) {
	var schema struct {
		Properties struct {
			Text struct {
				MaxLength int `json:"maxLength"`
			} `json:"text"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(stock.SaveNote(nil).Spec().Parameters, &schema); err != nil {
		t.Fatal(err)
	}
	if schema.Properties.Text.MaxLength != stock.MaxNoteRunes {
		t.Errorf("schema maxLength %d, MaxNoteRunes %d", schema.Properties.Text.MaxLength, stock.MaxNoteRunes)
	}
}
