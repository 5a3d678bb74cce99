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
)

// fakeController records what the recording tools asked of the call and
// answers err.
type fakeController struct {
	mu  sync.Mutex
	got []string // "pause s1", "resume s1"
	err error
}

func (c *fakeController) PauseRecording(call messages.CallID) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, "pause "+string(call))
	return c.err
}

func (c *fakeController) ResumeRecording(call messages.CallID) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, "resume "+string(call))
	return c.err
}

var _ stock.RecordingController = (*fakeController)(nil)

var errDiskGone = errors.New("recorder stuck")

func TestRecordingTools(t *testing.T) {
	notRecorded := fmt.Errorf("%w: recordings are off on this node", stock.ErrNotRecorded)
	tests := []struct {
		name        string
		tool        string
		session     string
		args        string
		ctrlErr     error
		nilCtrl     bool
		cancelled   bool
		wantAsked   []string
		wantContent string // a success's status
		wantSummary string
		wantKind    string // an error result's kind
		wantDetail  []string
	}{
		// Catches a pause that never reaches the controller, or pauses
		// the wrong call (the session swapped for the tool call's id).
		{name: "pause", tool: stock.PauseRecordingTool, session: "s1", args: `{}`,
			wantAsked: []string{"pause s1"}, wantContent: `"status":"paused"`, wantSummary: "recording paused"},
		// Catches resume wired to PauseRecording (the recording would
		// stay silent for the rest of the call).
		{name: "resume", tool: stock.ResumeRecordingTool, session: "s1", args: `{}`,
			wantAsked: []string{"resume s1"}, wantContent: `"status":"recording"`, wantSummary: "recording resumed"},
		{name: "pause with no arguments at all", tool: stock.PauseRecordingTool, session: "s1", args: ``,
			wantAsked: []string{"pause s1"}, wantContent: `"status":"paused"`, wantSummary: "recording paused"},
		// Catches a schema that refuses an argument the model added: the
		// pause would wait for a retry while the caller reads digits.
		{name: "pause with a stray argument", tool: stock.PauseRecordingTool, session: "s1", args: `{"reason":"card"}`,
			wantAsked: []string{"pause s1"}, wantContent: `"status":"paused"`, wantSummary: "recording paused"},
		// Catches a call without a recording answered as paused, or as a
		// crash: the model is told, in words it can repeat.
		{name: "pause, not recorded", tool: stock.PauseRecordingTool, session: "s1", args: `{}`, ctrlErr: notRecorded,
			wantAsked: []string{"pause s1"}, wantKind: agent.KindToolFailed,
			wantDetail: []string{"this call is not being recorded", "nothing to pause"}},
		{name: "resume, not recorded", tool: stock.ResumeRecordingTool, session: "s1", args: `{}`, ctrlErr: notRecorded,
			wantAsked: []string{"resume s1"}, wantKind: agent.KindToolFailed,
			wantDetail: []string{"this call is not being recorded", "nothing to resume"}},
		// Catches another failure read as "not recorded": the model would
		// let the caller read a card number into a running recording.
		{name: "pause fails", tool: stock.PauseRecordingTool, session: "s1", args: `{}`, ctrlErr: errDiskGone,
			wantAsked: []string{"pause s1"}, wantKind: agent.KindToolFailed,
			wantDetail: []string{"could not be paused", "may still be recorded"}},
		{name: "resume fails", tool: stock.ResumeRecordingTool, session: "s1", args: `{}`, ctrlErr: errDiskGone,
			wantAsked: []string{"resume s1"}, wantKind: agent.KindToolFailed,
			wantDetail: []string{"could not be resumed"}},
		{name: "no controller", tool: stock.PauseRecordingTool, session: "s1", args: `{}`, nilCtrl: true,
			wantKind: agent.KindToolFailed, wantDetail: []string{"this call is not being recorded"}},
		{name: "no session", tool: stock.ResumeRecordingTool, args: `{}`,
			wantKind: agent.KindToolFailed, wantDetail: []string{"could not be resumed", "not known"}},
		{name: "cancelled before it ran", tool: stock.PauseRecordingTool, session: "s1", args: `{}`, cancelled: true,
			wantKind: agent.KindInterrupted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &fakeController{err: tt.ctrlErr}
			var rc stock.RecordingController = c
			if tt.nilCtrl {
				rc = nil
			}
			reg, err := agent.NewRegistry(stock.PauseRecording(rc), stock.ResumeRecording(rc))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancelled {
				cancel()
			}
			call := messages.ToolCall{ID: "t1.0", Name: tt.tool, Arguments: json.RawMessage(tt.args)}
			info := agent.CallInfo{Session: tt.session, CallID: "t1.0", Epoch: 1}
			r := agent.RunCall(ctx, reg, call, info)
			if tt.wantKind != "" {
				b := decodeError(t, r)
				if b.Error != tt.wantKind {
					t.Errorf("error kind %q (%q), want %q", b.Error, b.Detail, tt.wantKind)
				}
				for _, w := range tt.wantDetail {
					if !strings.Contains(b.Detail, w) {
						t.Errorf("detail %q, want it to say %q", b.Detail, w)
					}
				}
				if r.Summary != "" {
					t.Errorf("summary %q on an error result", r.Summary)
				}
			} else if r.IsError || !strings.Contains(r.Content, tt.wantContent) || r.Summary != tt.wantSummary {
				t.Errorf("result %s (summary %q), want %s and summary %q", r.Content, r.Summary, tt.wantContent, tt.wantSummary)
			}
			if strings.Join(c.got, "|") != strings.Join(tt.wantAsked, "|") {
				t.Errorf("controller asked %q, want %q", c.got, tt.wantAsked)
			}
		})
	}
}

// TestRecordingToolsErrors: the errors wrap what they say, so a caller
// tells a call without a recording from a failed pause.
func TestRecordingToolsErrors(t *testing.T) {
	notRecorded := fmt.Errorf("%w: recordings are off on this node", stock.ErrNotRecorded)
	tests := []struct {
		name    string
		tool    func(stock.RecordingController) agent.Tool
		err     error
		want    []error
		notWant error
	}{
		{name: "pause, not recorded", tool: stock.PauseRecording, err: notRecorded, want: []error{stock.ErrNotRecorded}, notWant: stock.ErrPauseRecording},
		{name: "pause fails", tool: stock.PauseRecording, err: errDiskGone, want: []error{stock.ErrPauseRecording, errDiskGone}, notWant: stock.ErrNotRecorded},
		{name: "resume fails", tool: stock.ResumeRecording, err: errDiskGone, want: []error{stock.ErrResumeRecording, errDiskGone}, notWant: stock.ErrNotRecorded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.tool(&fakeController{err: tt.err}).Call(context.Background(), nil, agent.CallInfo{Session: "s1"})
			for _, w := range tt.want {
				if !errors.Is(err, w) {
					t.Errorf("err %v, want it to wrap %v", err, w)
				}
			}
			if errors.Is(err, tt.notWant) {
				t.Errorf("err %v wraps %v", err, tt.notWant)
			}
		})
	}
	_, err := stock.PauseRecording(nil).Call(context.Background(), nil, agent.CallInfo{Session: "s1"})
	if !errors.Is(err, stock.ErrNotRecorded) {
		t.Errorf("no controller: err %v, want ErrNotRecorded", err)
	}
	_, err = stock.PauseRecording(&fakeController{}).Call(context.Background(), nil, agent.CallInfo{})
	if !errors.Is(err, stock.ErrNoSession) {
		t.Errorf("no session: err %v, want ErrNoSession", err)
	}
}

// TestRecordingSpecs pins the kinds chosen (docs/TOOLS.md).
func TestRecordingSpecs(t *testing.T) {
	tests := []struct {
		name       string
		spec       agent.Spec
		effect     agent.Effect
		repeatable bool
		says       string
	}{
		// Catches pause declared SideEffect: it would be held in a
		// speculative round and could come after the caller began.
		{name: stock.PauseRecordingTool, spec: stock.PauseRecording(nil).Spec(), effect: agent.ReadOnly, says: "card number"},
		// Catches resume declared ReadOnly: it would run in a speculative
		// round while the caller only paused between digits; and resume
		// not Repeatable: a resume after a second pause in one turn would
		// be answered already_done and the recording stay silent.
		{name: stock.ResumeRecordingTool, spec: stock.ResumeRecording(nil).Spec(), effect: agent.SideEffect, repeatable: true, says: "after pause_recording"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.spec
			if s.Name != tt.name || s.Effect != tt.effect || s.Confirm || s.Repeatable != tt.repeatable || s.FillerAfter >= 0 || !strings.Contains(s.Description, tt.says) {
				t.Errorf("spec %+v, want %s %v, no confirm, repeatable %v, no filler, a description saying %q", s, tt.name, tt.effect, tt.repeatable, tt.says)
			}
		})
	}
}

// TestResumeAfterPauseInOneTurn: pause, resume, pause, resume in the
// responses of one turn (one epoch): the engine's repeat check (the
// orphan table, as the tools actor asks it) lets the second resume run.
// Catches resume_recording not Repeatable: the second resume would be
// answered already_done and the rest of the call recorded as silence.
func TestResumeAfterPauseInOneTurn(t *testing.T) {
	table, err := agent.NewOrphanTable(agent.OrphanConfig{})
	if err != nil {
		t.Fatal(err)
	}
	spec := stock.ResumeRecording(&fakeController{}).Spec()
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	first := agent.TrackedCall{Key: agent.IdempotencyKey{Session: "s1", Epoch: 1, CallID: "t1.1"}, Round: 1,
		Tool: spec.Name, Digest: agent.ArgumentsDigest(spec.Name, json.RawMessage(`{}`))}
	table.Start(first, now)
	table.Settle(first.Key, messages.ToolResult{CallID: "t1.1", Content: `{"status":"recording"}`}, now)
	second := first
	second.Key.CallID, second.Round = "t1.3", 3
	if m := table.Check(agent.Probe{TrackedCall: second, Repeatable: spec.Repeatable}, now.Add(time.Second)); m.Verdict != agent.VerdictRun {
		t.Errorf("the second resume of the turn: %v, want it run", m.Verdict)
	}
}
