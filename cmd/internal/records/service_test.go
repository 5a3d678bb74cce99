package records

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"github.com/brisvox/brisvox/messages"
)

var testKey = []byte("0123456789abcdef0123456789abcdef")

// rig is a service over test doubles (or, with store set, a real store).
type rig struct {
	s     *Service
	store Store
	mem   *memStore
	recs  *memJournal
	live  *memJournal
	log   *syncBuffer
}

func newRig(t *testing.T, cfg Config, store Store, recs, live *memJournal, sinks ...Sink) *rig {
	t.Helper()
	r := &rig{store: store, recs: recs, live: live, log: &syncBuffer{}}
	if r.store == nil {
		r.store = newMemStore()
	}
	r.mem, _ = r.store.(*memStore)
	if r.recs == nil {
		r.recs = &memJournal{}
	}
	if r.live == nil {
		r.live = &memJournal{}
	}
	if cfg.Node == "" {
		cfg.Node = "n1"
	}
	if cfg.NumberKey == nil && cfg.Numbers != NumbersDrop {
		cfg.NumberKey = testKey
	}
	cfg.Log = zerolog.New(r.log)
	s, err := New(cfg, r.store, r.recs, r.live, sinks...)
	if err != nil {
		t.Fatal(err)
	}
	r.s = s
	return r
}

func (r *rig) close(t *testing.T) {
	t.Helper()
	if err := r.s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// theCall is a whole call: a greeting, an answered turn with two tool
// calls, two LLM rounds and a barge-in, a failover and restarts, provider
// usage of each kind, and a key-press turn left unanswered.
type theCall struct {
	start CallStart
	t0    time.Time
}

func newCall(id string, t0 time.Time) theCall {
	return theCall{t0: t0, start: CallStart{
		CallID: id, Transport: "sip", Direction: "inbound", Trunk: "main",
		Agent: "front-desk", AgentDigest: "ad1", Caller: "+44 20 7946 0000", Callee: "+44 (20) 7946-0001",
		Started: t0, Answered: t0.Add(time.Second), TraceID: "0af7651916cd43dd8448eb211c80319c",
	}}
}

const vadStop = 20 * time.Second

func (tc theCall) marks() map[messages.MarkKind]time.Time {
	T := tc.t0.Add(vadStop)
	return map[messages.MarkKind]time.Time{
		messages.MarkVADStop:       T,
		messages.MarkSTTFinal:      T.Add(150400600),
		messages.MarkTurnEnd:       T.Add(400000400),
		messages.MarkLLMRequest:    T.Add(401 * time.Millisecond),
		messages.MarkLLMFirstToken: T.Add(900000900),
		messages.MarkToolsDone:     T.Add(1200 * time.Millisecond),
		messages.MarkTTSFirstAudio: T.Add(1500500000),
		messages.MarkFirstAudioOut: T.Add(1520000100),
	}
}

func (tc theCall) at(d time.Duration) time.Time { return tc.t0.Add(d) }

// play sends the call's events, in the order the session sends them.
func (tc theCall) play(c *Call, args []byte) {
	at := tc.at
	ev := func(e messages.CallEvent) { c.Event(&e) }
	// Epoch 1: the greeting.
	ev(messages.CallEvent{Kind: messages.EventState, Epoch: 1, State: messages.StateSpeaking, At: at(2 * time.Second)})
	for i, w := range []string{"Hello,", "how", "can", "I", "help?"} {
		ev(messages.CallEvent{Kind: messages.EventBotWord, Epoch: 1, Text: w, At: at(2*time.Second + time.Duration(i)*300*time.Millisecond)})
	}
	ev(messages.CallEvent{Kind: messages.EventBotDone, Epoch: 1, At: at(4 * time.Second)})
	ev(messages.CallEvent{Kind: messages.EventState, Epoch: 1, State: messages.StateListening, At: at(4 * time.Second)})
	// Epoch 2: the caller speaks while the bot listens (no barge-in).
	ev(messages.CallEvent{Kind: messages.EventUserSpeaking, At: at(17 * time.Second)})
	ev(messages.CallEvent{Kind: messages.EventUsage, Usage: &messages.ProviderUsage{Kind: messages.UsageSTT, Vendor: "deepgram", Model: "nova-3", Audio: 3500 * time.Millisecond}, At: at(20 * time.Second)})
	ev(messages.CallEvent{Kind: messages.EventUserTurn, Epoch: 2, Text: "I'd like a table for four", At: at(vadStop + 400000400)})
	ev(messages.CallEvent{Kind: messages.EventState, Epoch: 2, State: messages.StateThinking, At: at(vadStop + 400000400)})
	ev(messages.CallEvent{Kind: messages.EventRound, Epoch: 2, Round: 1, At: at(vadStop + 900000900)})
	ev(messages.CallEvent{Kind: messages.EventTool, Epoch: 2, Text: "book_table", Call: "call_1", Outcome: messages.CallRunning, At: at(vadStop + 901*time.Millisecond)})
	ev(messages.CallEvent{Kind: messages.EventTool, Epoch: 2, Text: "book_table", Call: "call_1", Outcome: messages.CallDone, Detail: "reference B-1",
		Audit: &messages.ToolAudit{Outcome: "ok", Started: at(vadStop + 901*time.Millisecond), KeyDigest: "d1d1", Args: args, Result: "booked B-1"},
		At:    at(vadStop + 1151*time.Millisecond)})
	ev(messages.CallEvent{Kind: messages.EventTool, Epoch: 2, Text: "lookup", Call: "call_2", Outcome: messages.CallFailed, Detail: "timed out",
		Audit: &messages.ToolAudit{Outcome: "timed_out", Started: at(vadStop + 902*time.Millisecond)},
		At:    at(vadStop + 1199*time.Millisecond)})
	ev(messages.CallEvent{Kind: messages.EventRound, Epoch: 2, Round: 2, At: at(vadStop + 1400*time.Millisecond)})
	ev(messages.CallEvent{Kind: messages.EventRound, Epoch: 2, Round: 2, At: at(vadStop + 1450*time.Millisecond)}) // the first wins
	for _, u := range [][3]int{{300, 20, 100}, {200, 30, 0}} {
		ev(messages.CallEvent{Kind: messages.EventUsage, Usage: &messages.ProviderUsage{Kind: messages.UsageLLM, Vendor: "openai", Model: "gpt-4o", InputTokens: u[0], OutputTokens: u[1], CachedTokens: u[2]}, At: at(22 * time.Second)})
	}
	m := tc.marks()
	ev(messages.CallEvent{Kind: messages.EventLatency, Epoch: 2, Latency: m[messages.MarkFirstAudioOut].Sub(m[messages.MarkVADStop]), Stages: messages.TurnStages(m), Marks: m, At: m[messages.MarkFirstAudioOut]})
	ev(messages.CallEvent{Kind: messages.EventState, Epoch: 2, State: messages.StateSpeaking, At: m[messages.MarkFirstAudioOut]})
	for i, w := range []string{"Booked", "for", "four."} {
		ev(messages.CallEvent{Kind: messages.EventBotWord, Epoch: 2, Text: w, At: at(22*time.Second + time.Duration(i)*200*time.Millisecond)})
	}
	ev(messages.CallEvent{Kind: messages.EventUserSpeaking, At: at(23 * time.Second)}) // the barge-in
	ev(messages.CallEvent{Kind: messages.EventBotDone, Epoch: 2, Cut: true, At: at(23*time.Second + 100*time.Millisecond)})
	ev(messages.CallEvent{Kind: messages.EventState, Epoch: 2, State: messages.StateListening, At: at(23*time.Second + 100*time.Millisecond)})
	ev(messages.CallEvent{Kind: messages.EventFailover, Text: "vad", Failover: &messages.Failover{From: "silero", To: "energy"}, At: at(30 * time.Second)})
	ev(messages.CallEvent{Kind: messages.EventRestart, Text: "tts", At: at(31 * time.Second)})
	ev(messages.CallEvent{Kind: messages.EventRestart, Text: "tts", At: at(32 * time.Second)})
	for _, n := range []int{40, 20} {
		ev(messages.CallEvent{Kind: messages.EventUsage, Usage: &messages.ProviderUsage{Kind: messages.UsageTTS, Vendor: "flite", Characters: n, Audio: time.Duration(n) * 50 * time.Millisecond}, At: at(33 * time.Second)})
	}
	// Epoch 3: key presses, never answered.
	ev(messages.CallEvent{Kind: messages.EventUserTurn, Epoch: 3, Text: "The caller pressed 1 2 #", Keys: 3, At: at(40 * time.Second)})
}

var theEnd = messages.CallEnded{
	Call: "c1", Reason: "hangup",
	Restarts: map[messages.Stage]int{"tts": 1, "llm": 0},
	Failures: map[messages.Stage]map[string]int{"tts": {"timeout": 2, "closed": 1}, "llm": {"rejected": 1}},
}

// want is the record the call must give (numbers keep, tool data keep,
// no redactor), ended at ended.
func (tc theCall) want(ended time.Time, args json.RawMessage) *Record {
	at := tc.at
	m := tc.marks()
	marks := map[string]time.Time{}
	for k, v := range m {
		marks[k.String()] = v
	}
	return &Record{
		Version: 1, CallID: tc.start.CallID, Node: "n1", Transport: "sip", Direction: "inbound", Trunk: "main",
		Agent: "front-desk", AgentDigest: "ad1",
		Caller:  Party{Number: "+442079460000", Hash: hashNumber(testKey, "+442079460000")},
		Callee:  Party{Number: "+442079460001", Hash: hashNumber(testKey, "+442079460001")},
		Started: tc.t0, Answered: at(time.Second), Ended: ended, EndReason: "hangup",
		Turns: []Turn{
			{Epoch: 1, Marks: map[string]time.Time{}},
			{Epoch: 2, Marks: marks, RoundFirstTokens: []time.Time{at(vadStop + 900000900), at(vadStop + 1400*time.Millisecond)},
				LatencyMS: 1520,
				// The running-sum rule: end_of_turn's 249.5998 ms is 249.6, not 249.599.
				Stages:  []Stage{{"listen", 150.4}, {"end_of_turn", 249.6}, {"think", 500}, {"tools", 300}, {"voice", 300.5}, {"send", 19.5}},
				BargeIn: true, Cut: true},
			{Epoch: 3, Marks: map[string]time.Time{}},
		},
		BargeIns: 1,
		Transcript: []Line{
			{Epoch: 1, Speaker: SpeakerBot, Text: "Hello, how can I help?", At: at(2 * time.Second)},
			{Epoch: 2, Speaker: SpeakerCaller, Text: "I'd like a table for four", At: at(vadStop + 400000400)},
			{Epoch: 2, Speaker: SpeakerBot, Text: "Booked for four.", At: at(22 * time.Second), Cut: true},
			{Epoch: 3, Speaker: SpeakerCaller, Text: "The caller pressed [keys]", At: at(40 * time.Second), Keys: 3},
		},
		Tools: []ToolCall{
			{Epoch: 2, ID: "call_1", Name: "book_table", Outcome: "ok", Started: at(vadStop + 901*time.Millisecond), Settled: at(vadStop + 1151*time.Millisecond),
				DurationMS: 250, KeyDigest: "d1d1", Args: args, Result: "booked B-1"},
			{Epoch: 2, ID: "call_2", Name: "lookup", Outcome: "timed_out", Started: at(vadStop + 902*time.Millisecond), Settled: at(vadStop + 1199*time.Millisecond), DurationMS: 297},
		},
		Usage: []Usage{
			{Kind: "stt", Vendor: "deepgram", Model: "nova-3", Requests: 1, AudioSeconds: 3.5},
			{Kind: "llm", Vendor: "openai", Model: "gpt-4o", Requests: 2, InputTokens: 500, OutputTokens: 50, CachedTokens: 100},
			{Kind: "tts", Vendor: "flite", Requests: 2, AudioSeconds: 3, Characters: 60},
		},
		Failures:   []Failure{{"llm", "rejected", 1}, {"tts", "closed", 1}, {"tts", "timeout", 2}},
		Restarts:   map[string]int{"tts": 1},
		Failovers:  []Failover{{Stage: "vad", From: "silero", To: "energy", At: at(30 * time.Second)}},
		Recording:  &Recording{Format: "wav", Key: "2000/01/01/c1.wav", Bytes: 1440044, DurationMS: 90000},
		TraceID:    "0af7651916cd43dd8448eb211c80319c",
		Redactions: map[string]int{"keys": 1},
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestWholeCallRecord plays a whole call's events and checks every field
// of the stored record. Mutations it catches (each seen failing): stages
// rounded per stage instead of by the running sum; the session's restart
// count not authoritative; a barge-in counted while the bot listens; the
// second round's later first token winning; a tool's running line made a
// tool call.
func TestWholeCallRecord(t *testing.T) {
	defer goleak.VerifyNone(t)
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, Config{Numbers: NumbersKeep, ToolData: Keep}, nil, nil, nil)
		r.s.Start()
		t0 := time.Now()
		tc := newCall("c1", t0)
		args := json.RawMessage(`{"party":4,"time":"19:30"}`)
		c := r.s.Begin(tc.start)
		c.SetRecording(func() *Recording {
			return &Recording{Format: "wav", Key: "2000/01/01/c1.wav", Bytes: 1440044, DurationMS: 90000}
		})
		tc.play(c, args)
		time.Sleep(90 * time.Second)
		c.End(theEnd)
		c.Event(&messages.CallEvent{Kind: messages.EventBotWord, Epoch: 3, Text: "late"}) // after End: ignored
		synctest.Wait()
		got, err := r.store.Get(context.Background(), "c1")
		if err != nil {
			t.Fatal(err)
		}
		if g, w := jsonOf(t, got), jsonOf(t, tc.want(t0.Add(90*time.Second), args)); g != w {
			t.Errorf("record:\n%s\nwant:\n%s", g, w)
		}
		r.close(t)
		if n := r.recs.pending(0); n != 0 {
			t.Errorf("records journal: %d entries not acked", n)
		}
		if n := r.live.pending(0); n != 0 {
			t.Errorf("live-call journal: %d entries not acked", n)
		}
		if n := r.live.appended(kindCheckpoint); n < 1 {
			t.Errorf("live-call journal: %d checkpoints, want at least 1", n)
		}
		st := r.s.Stats()
		if st["written"] != 1 || st["queued"] != 1 || st["begun"] != 1 || st["dropped_records"] != 0 {
			t.Errorf("stats %v", st)
		}
	})
}

// TestPoliciesTrim: transcripts drop and tool data drop leave those parts
// out of the record (and say so), before the journal.
func TestPoliciesTrim(t *testing.T) {
	defer goleak.VerifyNone(t)
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, Config{Transcripts: Drop, ToolData: Drop}, nil, nil, nil)
		r.s.Start()
		tc := newCall("c1", time.Now())
		c := r.s.Begin(tc.start)
		tc.play(c, []byte(`{"party":4,"secret":"zebra"}`))
		c.End(theEnd)
		synctest.Wait()
		got, err := r.store.Get(context.Background(), "c1")
		if err != nil {
			t.Fatal(err)
		}
		if got.Transcript != nil || !got.TranscriptRemoved {
			t.Errorf("transcript %v removed %v, want none and removed", got.Transcript, got.TranscriptRemoved)
		}
		if !got.ToolDataRemoved || len(got.Tools) != 2 || got.Tools[0].Args != nil || got.Tools[0].Result != "" {
			t.Errorf("tools %+v removed %v, want no args or result, removed", got.Tools, got.ToolDataRemoved)
		}
		if got.Tools[0].Outcome != "ok" || got.Tools[0].KeyDigest != "d1d1" {
			t.Errorf("tool audit lost with its data: %+v", got.Tools[0])
		}
		r.close(t)
		for name, j := range map[string]*memJournal{"records": r.recs, "live": r.live} {
			b := string(j.bytes())
			for _, s := range []string{"zebra", "table for four", "booked B-1", "Hello,"} {
				if strings.Contains(b, s) {
					t.Errorf("the %s journal holds %q, which the policy drops", name, s)
				}
			}
		}
	})
}
