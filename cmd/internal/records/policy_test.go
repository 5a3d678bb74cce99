package records

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/brisvox/brisvox/messages"
)

// TestNumbersPolicies: keep holds the number and its hash, hash only the
// hash, drop nothing; the hash is of the normalised number. Mutations it
// catches (seen failing): hashing the raw number (the spaced and plain
// forms differ), keeping the number under hash.
func TestNumbersPolicies(t *testing.T) {
	const plain = "+442079460000"
	h := hashNumber(testKey, plain)
	for _, tc := range []struct {
		name   string
		policy NumberPolicy
		number string
		want   Party
	}{
		{"keep", NumbersKeep, "+44 20 7946 0000", Party{Number: plain, Hash: h}},
		{"keep plain", NumbersKeep, plain, Party{Number: plain, Hash: h}},
		{"hash spaced", NumbersHash, "+44 20 7946 0000", Party{Hash: h}},
		{"hash dashes dots parentheses", NumbersHash, "+44 (20) 7946-00.00", Party{Hash: h}},
		{"hash plain", NumbersHash, plain, Party{Hash: h}},
		{"hash unknown", NumbersHash, "", Party{}},
		{"hash a SIP user", NumbersHash, "alice", Party{Hash: hashNumber(testKey, "alice")}},
		{"drop", NumbersDrop, "+44 20 7946 0000", Party{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := party(tc.policy, testKey, tc.number); got != tc.want {
				t.Errorf("party(%s) = %+v, want %+v", tc.policy, got, tc.want)
			}
		})
	}
	if hashNumber(testKey, "+442079460000") == hashNumber(testKey, "442079460000") {
		t.Error("the leading + is part of the number: +44... and 44... hash alike")
	}
	if hashNumber(testKey, plain) == hashNumber([]byte("another key of 16+ bytes"), plain) {
		t.Error("the hash does not depend on the key")
	}
	if len(h) != 64 {
		t.Errorf("hash %q: want 64 hex digits (HMAC-SHA256)", h)
	}
}

// TestConfigValidation: each wrong setting is refused with ErrInvalidConfig
// and a message saying what to do.
func TestConfigValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		say  string // "" : valid
	}{
		{"hash by default needs a key", Config{Node: "n"}, "BRISVOX_RECORDS_KEY"},
		{"hash with a short key", Config{Node: "n", Numbers: NumbersHash, NumberKey: []byte("short")}, "BRISVOX_RECORDS_KEY"},
		{"keep without a key", Config{Node: "n", Numbers: NumbersKeep}, "BRISVOX_RECORDS_KEY"},
		{"drop needs none", Config{Node: "n", Numbers: NumbersDrop}, ""},
		{"hash with a key", Config{Node: "n", NumberKey: testKey}, ""},
		{"unknown numbers policy", Config{Node: "n", Numbers: "mask", NumberKey: testKey}, "keep, hash or drop"},
		{"unknown transcripts policy", Config{Node: "n", NumberKey: testKey, Transcripts: "some"}, "keep or drop"},
		{"unknown tool data policy", Config{Node: "n", NumberKey: testKey, ToolData: "redact"}, "keep or drop"},
		{"negative retention", Config{Node: "n", NumberKey: testKey, Retention: Retention{Transcripts: -time.Hour}}, "negative"},
		{"negative queue", Config{Node: "n", NumberKey: testKey, QueueSize: -1}, "negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.say == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tc.say) {
				t.Fatalf("Validate = %v, want ErrInvalidConfig saying %q", err, tc.say)
			}
			if _, err := New(tc.cfg, newMemStore(), &memJournal{}, &memJournal{}); !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("New = %v, want ErrInvalidConfig", err)
			}
		})
	}
}

// planted is a phone number a test puts into the transcript, the tool
// arguments and result, and the parties: none of it may reach a journal,
// the store or the log in clear.
const planted = "+44 20 7946 0123"

// TestRedactedBeforeJournal: the redactor sees every transcript line and
// the tool arguments and result before anything is journaled (its marks
// are in the journals; the number is in neither journal, nor the store,
// nor the log). Mutations it catches (seen failing): a checkpoint
// journaled unredacted; the arguments left out of the redactor; the
// result left out.
func TestRedactedBeforeJournal(t *testing.T) {
	defer goleak.VerifyNone(t)
	synctest.Test(t, func(t *testing.T) {
		red := &markRedactor{}
		r := newRig(t, Config{Numbers: NumbersHash, ToolData: Keep, Redactor: red}, nil, nil, nil)
		r.s.Start()
		c := r.s.Begin(CallStart{CallID: "c1", Transport: "pcm", Agent: "a", Caller: planted, Callee: planted, Started: time.Now()})
		ev := func(e messages.CallEvent) { c.Event(&e) }
		ev(messages.CallEvent{Kind: messages.EventUserTurn, Epoch: 1, Text: "call me on " + planted + " please"})
		for _, w := range strings.Fields("I will call " + planted) {
			ev(messages.CallEvent{Kind: messages.EventBotWord, Epoch: 1, Text: w})
		}
		ev(messages.CallEvent{Kind: messages.EventTool, Epoch: 1, Text: "callback", Call: "t1",
			Audit: &messages.ToolAudit{Outcome: "ok", Args: []byte(`{"number":"` + planted + `","when":"soon"}`), Result: "booked for " + planted}})
		m := map[messages.MarkKind]time.Time{messages.MarkVADStop: time.Now(), messages.MarkFirstAudioOut: time.Now()}
		ev(messages.CallEvent{Kind: messages.EventLatency, Epoch: 1, Marks: m, Stages: messages.TurnStages(m)})
		synctest.Wait() // the checkpoint is journaled
		if n := r.live.appended(kindCheckpoint); n == 0 {
			t.Fatal("no checkpoint journaled")
		}
		c.End(messages.CallEnded{Reason: "hangup"})
		synctest.Wait()
		r.close(t)

		for _, s := range []string{"call me on " + planted + " please", "I will call " + planted, "soon", "booked for " + planted} {
			if !red.saw(s) {
				t.Errorf("the redactor never saw %q", s)
			}
		}
		for name, b := range map[string]string{"records journal": string(r.recs.bytes()), "live journal": string(r.live.bytes()), "log": r.log.String()} {
			for _, s := range []string{planted, "442079460123", "7946 0123"} {
				if strings.Contains(b, s) {
					t.Errorf("the %s holds the number %q", name, s)
				}
			}
		}
		if !strings.Contains(string(r.live.bytes()), "[phone]") || !strings.Contains(string(r.recs.bytes()), "[phone]") {
			t.Error("the journals hold no redacted text: the test checks nothing")
		}
		got, err := r.store.Get(context.Background(), "c1")
		if err != nil {
			t.Fatal(err)
		}
		b := jsonOf(t, got)
		if strings.Contains(b, "0123") {
			t.Errorf("the stored record holds the number:\n%s", b)
		}
		if got.Redactions["phone"] != 4 {
			t.Errorf("redactions %v, want phone 4 (caller line, bot line, args, result)", got.Redactions)
		}
		if got.Caller.Hash == "" || got.Caller.Number != "" {
			t.Errorf("caller %+v, want a hash only", got.Caller)
		}
		if string(got.Tools[0].Args) != `{"number":"[phone]","when":"soon"}` {
			t.Errorf("args %s", got.Tools[0].Args)
		}
	})
}
