package records

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/brisvox/brisvox/messages"
)

// answer plays one answered turn of epoch ep on c.
func answer(c *Call, ep messages.Epoch, said, reply string) {
	now := time.Now()
	m := map[messages.MarkKind]time.Time{messages.MarkVADStop: now, messages.MarkSTTFinal: now.Add(100 * time.Millisecond), messages.MarkFirstAudioOut: now.Add(600 * time.Millisecond)}
	evs := []messages.CallEvent{
		{Kind: messages.EventUserTurn, Epoch: ep, Text: said, At: now},
		{Kind: messages.EventLatency, Epoch: ep, Latency: 600 * time.Millisecond, Marks: m, Stages: messages.TurnStages(m), At: m[messages.MarkFirstAudioOut]},
		{Kind: messages.EventState, Epoch: ep, State: messages.StateSpeaking},
	}
	for _, w := range strings.Fields(reply) {
		evs = append(evs, messages.CallEvent{Kind: messages.EventBotWord, Epoch: ep, Text: w, At: now})
	}
	evs = append(evs, messages.CallEvent{Kind: messages.EventBotDone, Epoch: ep}, messages.CallEvent{Kind: messages.EventState, Epoch: ep, State: messages.StateListening})
	for i := range evs {
		c.Event(&evs[i])
	}
}

// TestDatabaseDownThenUp: the store is down while 50 calls end; every
// record is journaled at once (journaling does not wait for the store),
// the Puts are retried with backoff, and when the store is back all 50
// arrive, none twice. Mutations it catches (seen failing): the putter
// giving up a record after a failure (records missing); acking before
// the Put (journal empty while the store lacks them); the backoff not
// growing (put_failures far above the doubling's count).
func TestDatabaseDownThenUp(t *testing.T) {
	defer goleak.VerifyNone(t)
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, Config{}, nil, nil, nil)
		r.mem.setDown(true)
		r.s.Start()
		for i := range 50 {
			c := r.s.Begin(CallStart{CallID: fmt.Sprintf("c%02d", i), Transport: "sip", Agent: "a", Caller: "+44 20 7946 0000", Started: time.Now()})
			answer(c, 1, "hello", "hi there")
			c.End(messages.CallEnded{Reason: "hangup"})
		}
		synctest.Wait()
		if n := r.recs.pending(kindRecord); n != 50 {
			t.Fatalf("records journal holds %d records with the store down, want 50", n)
		}
		if n := r.live.pending(0); n != 0 {
			t.Errorf("live-call journal: %d entries not acked (the records are durable)", n)
		}
		// Down for 10 minutes: 100 ms doubling to 30 s is 10 attempts to
		// reach 30 s (51.1 s), then one every 30 s: about 28 attempts.
		time.Sleep(10 * time.Minute)
		failures := r.s.Stats()["put_failures"]
		if failures < 20 || failures > 35 {
			t.Errorf("put_failures %d in 10 minutes down, want about 28 (backoff 100 ms doubling to 30 s)", failures)
		}
		if r.mem.count() != 0 {
			t.Fatal("records reached a store that is down")
		}
		r.mem.setDown(false)
		time.Sleep(31 * time.Second)
		synctest.Wait()
		if n := r.mem.count(); n != 50 {
			t.Fatalf("store holds %d records, want 50", n)
		}
		puts, inserted := r.mem.counts()
		if puts != 50 || inserted != 50 {
			t.Errorf("puts %d inserted %d, want 50 and 50 (none twice)", puts, inserted)
		}
		if n := r.recs.pending(0); n != 0 {
			t.Errorf("records journal: %d entries not acked", n)
		}
		st := r.s.Stats()
		if st["written"] != 50 || st["put_retries"] == 0 || st["pending_puts"] != 0 {
			t.Errorf("stats %v", st)
		}
		r.close(t)
		for _, s := range []string{"hello", "hi there", "7946"} {
			if strings.Contains(r.log.String(), s) {
				t.Errorf("the log holds %q", s)
			}
		}
		if !strings.Contains(r.log.String(), `"call_id":"c00"`) {
			t.Errorf("the store's failures are not logged with the call id:\n%.500s", r.log.String())
		}
	})
}

// TestCloseLeavesWaitingRecordsForReplay: records the store did not take
// by Close stay in the journal; the next start's Recover replays them.
// And a crash between Put and Ack (a replayed record the store already
// has) gives no duplicate: Put reports it not inserted.
func TestCloseLeavesWaitingRecordsForReplay(t *testing.T) {
	defer goleak.VerifyNone(t)
	synctest.Test(t, func(t *testing.T) {
		recs, live := &memJournal{}, &memJournal{}
		a := newRig(t, Config{}, nil, recs, live)
		a.mem.setDown(true)
		a.s.Start()
		for i := range 3 {
			c := a.s.Begin(CallStart{CallID: fmt.Sprintf("c%d", i), Started: time.Now()})
			c.End(messages.CallEnded{Reason: "hangup"})
		}
		synctest.Wait()
		a.close(t)
		if n := recs.pending(kindRecord); n != 3 {
			t.Fatalf("journal holds %d records after Close, want 3", n)
		}
		// The store took c0 before the "crash" (its ack lost).
		store := newMemStore()
		if _, err := store.Put(context.Background(), &Record{CallID: "c0"}); err != nil {
			t.Fatal(err)
		}
		b := newRig(t, Config{}, store, recs, live)
		n, err := b.s.Recover(context.Background())
		if err != nil || n != 0 {
			t.Fatalf("Recover = %d, %v; want 0 calls recovered (none was live)", n, err)
		}
		b.s.Start()
		synctest.Wait()
		b.close(t)
		st := b.s.Stats()
		if st["replayed"] != 3 || st["written"] != 2 || st["duplicates"] != 1 {
			t.Errorf("stats %v, want replayed 3, written 2, duplicates 1", st)
		}
		if puts, inserted := store.counts(); puts != 4 || inserted != 3 || store.count() != 3 {
			t.Errorf("puts %d inserted %d records %d, want 4, 3, 3", puts, inserted, store.count())
		}
		if n := recs.pending(0); n != 0 {
			t.Errorf("%d journal entries not acked", n)
		}
	})
}

// TestCrashRecovery: calls live when the node stops (their journals
// closed without an End) become records ended node_crashed at their last
// checkpoint, with the turns known then; a call that ended is recorded
// once, as it ended. Mutations it catches (seen failing): recovering a
// call that has an end entry; using the begin entry instead of the last
// checkpoint (turns lost); leaving the live entries unacked (a second
// Recover records them again).
func TestCrashRecovery(t *testing.T) {
	defer goleak.VerifyNone(t)
	synctest.Test(t, func(t *testing.T) {
		recs, live := &memJournal{}, &memJournal{}
		a := newRig(t, Config{Numbers: NumbersHash}, nil, recs, live)
		a.s.Start()
		t0 := time.Now()
		done := a.s.Begin(CallStart{CallID: "ended", Agent: "a", Started: t0})
		answer(done, 1, "one", "reply one")
		done.End(messages.CallEnded{Reason: "hangup"})
		var lastCkpt time.Time
		for i := range 3 {
			c := a.s.Begin(CallStart{CallID: fmt.Sprintf("live%d", i), Transport: "sip", Agent: "a", Caller: "+44 20 7946 0000", Started: t0})
			for ep := range i + 1 {
				time.Sleep(time.Second)
				answer(c, messages.Epoch(ep+1), fmt.Sprintf("turn %d", ep+1), "ok then")
				synctest.Wait()
				lastCkpt = time.Now()
			}
		}
		quietAt := time.Now()
		a.s.Begin(CallStart{CallID: "quiet", Started: t0}) // begun, no turn yet
		synctest.Wait()
		// The node stops without ending the live calls: what a kill -9
		// leaves (Close only drains what was queued).
		a.close(t)
		if a.mem.count() != 1 {
			t.Fatalf("store holds %d records before the restart, want the ended call's", a.mem.count())
		}

		// A call whose end entry was written, its acks not (a crash
		// between them): its record is in the records journal, it is not
		// recovered again.
		for _, k := range []byte{kindBegin, kindEnd} {
			e := liveEntry{CallID: "half", At: t0}
			if k == kindBegin {
				e.Record = &Record{CallID: "half"}
			}
			if _, err := live.Append(k, []byte(jsonOf(t, e))); err != nil {
				t.Fatal(err)
			}
		}

		b := newRig(t, Config{Numbers: NumbersHash}, a.mem, recs, live)
		n, err := b.s.Recover(context.Background())
		if err != nil || n != 4 {
			t.Fatalf("Recover = %d, %v; want 4 calls", n, err)
		}
		b.s.Start()
		synctest.Wait()
		b.close(t)
		for i := range 3 {
			got, err := b.store.Get(context.Background(), fmt.Sprintf("live%d", i))
			if err != nil {
				t.Fatal(err)
			}
			if got.EndReason != ReasonNodeCrashed || len(got.Turns) != i+1 || got.Turns[i].LatencyMS != 600 {
				t.Errorf("live%d: end %q, %d turns (%+v), want node_crashed with %d answered turns", i, got.EndReason, len(got.Turns), got.Turns, i+1)
			}
			if len(got.Transcript) != 2*(i+1) || got.Transcript[2*i].Text != fmt.Sprintf("turn %d", i+1) {
				t.Errorf("live%d: transcript %+v", i, got.Transcript)
			}
			if got.Caller.Hash == "" || got.Caller.Number != "" || got.Ended.Before(got.Started) {
				t.Errorf("live%d: caller %+v, started %v ended %v", i, got.Caller, got.Started, got.Ended)
			}
			if i == 2 && !got.Ended.Equal(lastCkpt) {
				t.Errorf("live2 ended %v, want its last checkpoint's time %v", got.Ended, lastCkpt)
			}
		}
		q, err := b.store.Get(context.Background(), "quiet")
		if err != nil || q.EndReason != ReasonNodeCrashed || !q.Ended.Equal(quietAt) || q.Turns == nil {
			t.Errorf("quiet: %+v, %v; want node_crashed at its begin", q, err)
		}
		e, err := b.store.Get(context.Background(), "ended")
		if err != nil || e.EndReason != "hangup" {
			t.Errorf("ended: %+v, %v", e, err)
		}
		if puts, _ := b.mem.counts(); puts != 5 {
			t.Errorf("%d puts, want 5 (1 ended, 4 recovered)", puts)
		}
		if n := live.pending(0); n != 0 {
			t.Errorf("live-call journal: %d entries left after Recover", n)
		}
		// A second start recovers nothing more.
		c := newRig(t, Config{Numbers: NumbersHash}, b.mem, recs, live)
		if n, err := c.s.Recover(context.Background()); err != nil || n != 0 {
			t.Errorf("second Recover = %d, %v; want 0", n, err)
		}
		c.close(t)
	})
}

// TestQueueNeverBlocks: with the writer stuck (a journal that never
// returns), End and Event return at once; records that find the queue
// full are dropped, counted and logged with the call id alone.
func TestQueueNeverBlocks(t *testing.T) {
	defer goleak.VerifyNone(t)
	synctest.Test(t, func(t *testing.T) {
		stuck := &blockingJournal{release: make(chan struct{})}
		r := newRig(t, Config{QueueSize: 2, CheckpointQueue: 2}, nil, &memJournal{}, nil)
		r.s.liveJ = stuck // every live-journal write hangs: the writer is stuck
		r.s.Start()
		r.s.Begin(CallStart{CallID: "first"})
		synctest.Wait() // the writer is in its first Append, for good
		for i := range 10 {
			c := r.s.Begin(CallStart{CallID: fmt.Sprintf("c%d", i), Caller: planted})
			answer(c, 1, "my number is "+planted, "noted")
			c.End(messages.CallEnded{Reason: "hangup"})
		}
		// Every call above returned with the writer blocked.
		st := r.s.Stats()
		// Two records queued, eight dropped; two calls' checkpoints
		// queued, the eight others' begin and turn dropped.
		if st["dropped_records"] != 8 || st["queued"] != 2 || st["dropped_checkpoints"] != 16 {
			t.Errorf("stats %v, want 8 records and 16 checkpoints dropped", st)
		}
		log := r.log.String()
		if !strings.Contains(log, `"call_id":"c9"`) || strings.Contains(log, "0123") || strings.Contains(log, "my number") {
			t.Errorf("log: %s", log)
		}
		close(stuck.release)
		r.close(t)
	})
}

// blockingJournal is a TEST DOUBLE of Journal whose Append waits for
// release, then fails.
type blockingJournal struct {
	release chan struct{}
}

func (b *blockingJournal) Append(kind byte, payload []byte) (uint64, error) {
	<-b.release
	return 0, fmt.Errorf("journal double: stuck disk")
}
func (b *blockingJournal) Ack(uint64) error { return nil }
func (b *blockingJournal) Replay(func(uint64, byte, []byte) error) error {
	return nil
}

// TestWaitingRecordsBeyondMemory: with more records waiting for the store
// than memory keeps, the rest wait by sequence number only and are read
// back from the journal in turn: all arrive, once each. Mutation it
// catches (seen failing): the read-back dropping what it found (records
// counted lost).
func TestWaitingRecordsBeyondMemory(t *testing.T) {
	defer goleak.VerifyNone(t)
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, Config{}, nil, nil, nil)
		r.s.pend.keep = 3
		r.mem.setDown(true)
		r.s.Start()
		for i := range 20 {
			c := r.s.Begin(CallStart{CallID: fmt.Sprintf("c%02d", i), Started: time.Now()})
			answer(c, 1, "hello", "hi")
			c.End(messages.CallEnded{Reason: "hangup"})
			synctest.Wait()
		}
		r.s.pend.mu.Lock()
		inMem := r.s.pend.inMem
		r.s.pend.mu.Unlock()
		if inMem > 3 || r.s.Stats()["pending_puts"] != 20 {
			t.Fatalf("%d payloads in memory, %d waiting; want at most 3 of 20", inMem, r.s.Stats()["pending_puts"])
		}
		r.mem.setDown(false)
		time.Sleep(time.Minute)
		synctest.Wait()
		r.close(t)
		if puts, inserted := r.mem.counts(); puts != 20 || inserted != 20 {
			t.Errorf("puts %d inserted %d, want 20 and 20", puts, inserted)
		}
		if st := r.s.Stats(); st["corrupt"] != 0 || st["written"] != 20 {
			t.Errorf("stats %v", st)
		}
	})
}
