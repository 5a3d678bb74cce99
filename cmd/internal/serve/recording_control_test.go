package serve

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/agent/stock"
	"github.com/brisvox/brisvox/cmd/internal/records/recording"
	"github.com/brisvox/brisvox/messages"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"
)

// pauseKeeper is a RecordKeeper that knows only pausing: it records what
// it was asked and has a live recording of the calls in live. The other
// methods are the nil embedded interface's (a call of one panics).
type pauseKeeper struct {
	RecordKeeper
	mu   sync.Mutex
	live map[string]bool
	got  []string // "pause c1", "resume c1"
}

func (k *pauseKeeper) Pause(id string) error  { return k.ask("pause", id) }
func (k *pauseKeeper) Resume(id string) error { return k.ask("resume", id) }

func (k *pauseKeeper) ask(what, id string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.got = append(k.got, what+" "+id)
	if !k.live[id] {
		return errNoCall // as recording.Recorder says it
	}
	return nil
}

// TestRecordingControl: the Server's side of pause_recording and
// resume_recording reaches Config.Records by the call's id, and a call
// without a recording is stock.ErrNotRecorded, with what was asked
// counted.
func TestRecordingControl(t *testing.T) {
	defer goleak.VerifyNone(t)
	tests := []struct {
		name      string
		keeper    bool // Config.Records set
		call      messages.CallID
		pause     bool
		wantAsked string
		wantErr   bool
		wantCount string
	}{
		// Catches a pause that reaches the keeper as a resume, or under
		// another id.
		{name: "pause", keeper: true, call: "c1", pause: true, wantAsked: "pause c1", wantCount: "recording_pauses"},
		// Catches resume wired to Pause: the rest of the call is silent.
		{name: "resume", keeper: true, call: "c1", wantAsked: "resume c1", wantCount: "recording_resumes"},
		// Catches the keeper's error answered as success (the model would
		// tell the caller a recording that does not exist is paused), or
		// not as ErrNotRecorded.
		{name: "a call without a recording", keeper: true, call: "c2", pause: true, wantAsked: "pause c2", wantErr: true, wantCount: "recording_controls_unrecorded"},
		// Catches a nil Records dereferenced (a panic in the tool's
		// goroutine) instead of answered.
		{name: "no records on this node", call: "c1", pause: true, wantErr: true, wantCount: "recording_controls_unrecorded"},
		{name: "resume, no records on this node", call: "c1", wantErr: true, wantCount: "recording_controls_unrecorded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := &syncBuffer{}
			k := &pauseKeeper{live: map[string]bool{"c1": true}}
			cfg := Config{MaxCalls: 1, Log: zerolog.New(logs)}
			if tt.keeper {
				cfg.Records = k
			}
			s, _, stop := serving(t, cfg, &simAgent{})
			defer func() {
				if err := stop(); err != nil {
					t.Errorf("serve: %v", err)
				}
			}()
			var err error
			if tt.pause {
				err = s.PauseRecording(tt.call)
			} else {
				err = s.ResumeRecording(tt.call)
			}
			if tt.wantErr != (err != nil) || (err != nil && !errors.Is(err, stock.ErrNotRecorded)) {
				t.Errorf("err %v, want an error %v wrapping stock.ErrNotRecorded", err, tt.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), "this call is not being recorded") {
				t.Errorf("err %q does not say the call is not being recorded", err)
			}
			if got := strings.Join(k.got, "|"); got != tt.wantAsked {
				t.Errorf("keeper asked %q, want %q", got, tt.wantAsked)
			}
			s.mu.Lock()
			counts := s.stats.Snapshot()
			s.mu.Unlock()
			if counts[tt.wantCount] != 1 {
				t.Errorf("counters %v, want %s = 1", counts, tt.wantCount)
			}
			if !tt.wantErr && !strings.Contains(logs.String(), `"call_id":"`+string(tt.call)+`"`) {
				t.Errorf("no log line names the call %s:\n%s", tt.call, logs)
			}
		})
	}
}

// TestRecordingToolsThroughServer: the stock tools on the Server pause a
// live recording, and answer a call without one in words the model can
// repeat.
func TestRecordingToolsThroughServer(t *testing.T) {
	defer goleak.VerifyNone(t)
	k := &pauseKeeper{live: map[string]bool{"c1": true}}
	s, _, stop := serving(t, Config{MaxCalls: 1, Log: zerolog.Nop(), Records: k}, &simAgent{})
	defer func() {
		if err := stop(); err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	reg, err := agent.NewRegistry(stock.PauseRecording(s), stock.ResumeRecording(s))
	if err != nil {
		t.Fatal(err)
	}
	run := func(tool, session string) messages.ToolResult {
		return agent.RunCall(context.Background(), reg, messages.ToolCall{ID: "t1.0", Name: tool, Arguments: json.RawMessage(`{}`)},
			agent.CallInfo{Session: session, CallID: "t1.0", Epoch: 1})
	}
	if r := run(stock.PauseRecordingTool, "c1"); r.IsError || r.Summary != "recording paused" {
		t.Errorf("pause: %s (summary %q)", r.Content, r.Summary)
	}
	if r := run(stock.ResumeRecordingTool, "c1"); r.IsError || r.Summary != "recording resumed" {
		t.Errorf("resume: %s (summary %q)", r.Content, r.Summary)
	}
	if r := run(stock.PauseRecordingTool, "c2"); !r.IsError || !strings.Contains(r.Content, "this call is not being recorded") {
		t.Errorf("pause of a call without a recording: %s", r.Content)
	}
	if got := strings.Join(k.got, "|"); got != "pause c1|resume c1|pause c2" {
		t.Errorf("keeper asked %q", got)
	}
}

// TestRecordingToolsRealRecorder: over RecordParts and a real
// recording.Recorder, the tools pause a live recording (its account has
// the paused span) and a call the recorder does not know, or knows no
// more, is "not being recorded". Catches the contract between serve and
// the recorder drifting: an error of the recorder read as anything but
// ErrNotRecorded, or the pause not reaching the recording.
func TestRecordingToolsRealRecorder(t *testing.T) {
	defer goleak.VerifyNone(t)
	rec, err := recording.New(recording.Config{Dir: t.TempDir(), Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := rec.Close(); err != nil {
			t.Errorf("recorder close: %v", err)
		}
	}()
	rc, err := rec.Begin("c1", 8000, 8000)
	if err != nil {
		t.Fatal(err)
	}
	s, _, stop := serving(t, Config{MaxCalls: 1, Log: zerolog.Nop(), Records: RecordParts{Recorder: rec}}, &simAgent{})
	defer func() {
		if err := stop(); err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	reg, err := agent.NewRegistry(stock.PauseRecording(s), stock.ResumeRecording(s))
	if err != nil {
		t.Fatal(err)
	}
	run := func(tool, session string) messages.ToolResult {
		return agent.RunCall(context.Background(), reg, messages.ToolCall{ID: "t1.0", Name: tool, Arguments: json.RawMessage(`{}`)},
			agent.CallInfo{Session: session, CallID: "t1.0", Epoch: 1})
	}
	for _, tool := range []string{stock.PauseRecordingTool, stock.PauseRecordingTool, stock.ResumeRecordingTool} {
		if r := run(tool, "c1"); r.IsError {
			t.Fatalf("%s: %s", tool, r.Content)
		}
	}
	if r := run(stock.PauseRecordingTool, "c2"); !r.IsError || !strings.Contains(r.Content, "this call is not being recorded") {
		t.Errorf("pause of a call never recorded: %s", r.Content)
	}
	account := rc.Close()
	if account == nil || len(account.Paused) != 1 {
		t.Fatalf("recording account %+v, want one paused span (two pauses are one)", account)
	}
	if r := run(stock.ResumeRecordingTool, "c1"); !r.IsError || !strings.Contains(r.Content, "this call is not being recorded") {
		t.Errorf("resume after the recording closed: %s", r.Content)
	}
}
