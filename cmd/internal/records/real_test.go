package records

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"github.com/brisvox/brisvox/cmd/internal/records/journal"
	"github.com/brisvox/brisvox/cmd/internal/records/redact"
	"github.com/brisvox/brisvox/messages"
)

// openJournals opens the records and live-call journals under dir.
func openJournals(t *testing.T, dir string) (recs, live *journal.Journal) {
	t.Helper()
	var err error
	if recs, err = journal.Open(journal.Config{Dir: filepath.Join(dir, "records"), Log: zerolog.Nop()}); err != nil {
		t.Fatal(err)
	}
	if live, err = journal.Open(journal.Config{Dir: filepath.Join(dir, "live"), Log: zerolog.Nop()}); err != nil {
		recs.Close()
		t.Fatal(err)
	}
	return recs, live
}

// dirBytes is every file's content under dir.
func dirBytes(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		b.Write(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// waitFor polls cond until it holds or a deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond) // polling a condition, with a deadline
	}
}

// TestRealJournalsNoPlantedNumber: with the real redactor and journals on
// disk, a number said by the caller, spoken by the bot and passed to a
// tool is in no byte of either journal's files, and not in the log.
// Mutation it catches (seen failing): a checkpoint journaled before
// finish (unredacted).
func TestRealJournalsNoPlantedNumber(t *testing.T) {
	defer goleak.VerifyNone(t)
	dir := t.TempDir()
	recs, live := openJournals(t, dir)
	red, err := redact.New(redact.Config{})
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	store := newMemStore()
	store.setDown(true) // the record stays in the records journal, unacked
	s, err := New(Config{Node: "n", NumberKey: testKey, ToolData: Keep, Redactor: red, Log: zerolog.New(logs)}, store, recs, live)
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	const number = "07700 900123"
	c := s.Begin(CallStart{CallID: "c1", Caller: number, Callee: number, Started: time.Now()})
	c.Event(&messages.CallEvent{Kind: messages.EventUserTurn, Epoch: 1, Text: "my number is " + number, At: time.Now()})
	for _, w := range strings.Fields("I will call you on " + number + " tomorrow") {
		c.Event(&messages.CallEvent{Kind: messages.EventBotWord, Epoch: 1, Text: w, At: time.Now()})
	}
	c.Event(&messages.CallEvent{Kind: messages.EventTool, Epoch: 1, Text: "callback", Call: "t1", At: time.Now(),
		Audit: &messages.ToolAudit{Outcome: "ok", Started: time.Now(), Args: []byte(`{"phone":"` + number + `"}`), Result: "will call " + number}})
	waitFor(t, "the checkpoint", func() bool { return s.Stats()["checkpoints"] >= 1 })
	// Read while the entries are unacked (a segment all acked goes).
	files := dirBytes(t, filepath.Join(dir, "live"))
	c.End(messages.CallEnded{Reason: "hangup"})
	waitFor(t, "the record journaled", func() bool { return recs.Pending() == 1 && s.Stats()["put_failures"] >= 1 })
	files += dirBytes(t, filepath.Join(dir, "records"))
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	recs.Close()
	live.Close()
	for _, form := range []string{number, "07700900123", "900123"} {
		if strings.Contains(files, form) {
			t.Errorf("the journals' files hold %q", form)
		}
		if strings.Contains(logs.String(), form) {
			t.Errorf("the log holds %q", form)
		}
	}
	if n := strings.Count(files, "[phone]"); n < 8 {
		t.Errorf("%d redacted numbers in the journals' files, want 8 (4 in the checkpoint, 4 in the record): the test checks too little", n)
	}
}

// TestKill9MidCall: a child process (this test binary) runs the service
// over real journals, answers turns of three live calls and ends one,
// then is killed with SIGKILL. The next start recovers the live calls as
// node_crashed records with the turns they had, and the ended call's
// record once. Mutation it catches (seen failing): recovering from the
// begin entry, not the last checkpoint (the turns lost).
func TestKill9MidCall(t *testing.T) {
	if dir := os.Getenv("BRISVOX_RECORDS_CHILD"); dir != "" {
		runChild(t, dir)
		return
	}
	defer goleak.VerifyNone(t)
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKill9MidCall$")
	cmd.Env = append(os.Environ(), "BRISVOX_RECORDS_CHILD="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == "ready" {
				ready <- true
				return
			}
		}
		ready <- false
	}()
	select {
	case ok := <-ready:
		if !ok {
			cmd.Wait()
			t.Fatal("the child ended before it was ready")
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("the child was not ready in 60 s")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	recs, live := openJournals(t, dir)
	defer recs.Close()
	defer live.Close()
	store := newMemStore()
	s, err := New(Config{Node: "n", NumberKey: testKey, Log: zerolog.Nop()}, store, recs, live)
	if err != nil {
		t.Fatal(err)
	}
	n, err := s.Recover(context.Background())
	if err != nil || n != 3 {
		t.Fatalf("Recover = %d, %v; want 3 calls (records journal %v, live-call journal %v, service %v)", n, err, recs.Stats(), live.Stats(), s.Stats())
	}
	s.Start()
	waitFor(t, "4 records", func() bool { return store.count() == 4 })
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		r, err := store.Get(context.Background(), fmt.Sprintf("live%d", i))
		if err != nil {
			t.Fatal(err)
		}
		if r.EndReason != ReasonNodeCrashed || len(r.Turns) != i+1 || r.Caller.Hash == "" {
			t.Errorf("live%d: %s with %d turns, caller %+v; want node_crashed with %d", i, r.EndReason, len(r.Turns), r.Caller, i+1)
		}
	}
	if r, err := store.Get(context.Background(), "ended"); err != nil || r.EndReason != "hangup" {
		t.Errorf("ended: %+v, %v", r, err)
	}
	if puts, inserted := store.counts(); puts != 4 || inserted != 4 {
		t.Errorf("puts %d inserted %d, want 4 and 4", puts, inserted)
	}
	if recs.Pending() != 0 || live.Pending() != 0 {
		t.Errorf("journals: %d and %d entries not acked", recs.Pending(), live.Pending())
	}
}

// runChild is the killed node: the store is down (as it might be), so the
// ended call's record waits in the records journal.
func runChild(t *testing.T, dir string) {
	recs, live := openJournals(t, dir)
	store := newMemStore()
	store.setDown(true)
	s, err := New(Config{Node: "n", NumberKey: testKey, Log: zerolog.Nop()}, store, recs, live)
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	e := s.Begin(CallStart{CallID: "ended", Started: time.Now()})
	answer(e, 1, "hello", "goodbye")
	e.End(messages.CallEnded{Reason: "hangup"})
	waitFor(t, "the ended record journaled", func() bool { return recs.Pending() == 1 })
	want := s.Stats()["checkpoints"]
	for i := range 3 {
		c := s.Begin(CallStart{CallID: fmt.Sprintf("live%d", i), Caller: "+44 20 7946 0000", Started: time.Now()})
		for ep := range i + 1 {
			answer(c, messages.Epoch(ep+1), "turn", "answer")
			want++
			waitFor(t, "a checkpoint", func() bool { return s.Stats()["checkpoints"] >= want })
		}
	}
	fmt.Println("ready")
	select {} // killed here
}

// BenchmarkWriterRealJournals is the writer's throughput over the real
// journals on this machine's disk: b.N calls live together, 5 answered
// turns each (a begin entry, checkpoints as the writer keeps up, the
// record, its end entry), then ended, until every record is in the store
// (a map).
func BenchmarkWriterRealJournals(b *testing.B) {
	dir := b.TempDir()
	recs, err := journal.Open(journal.Config{Dir: filepath.Join(dir, "records"), Log: zerolog.Nop()})
	if err != nil {
		b.Fatal(err)
	}
	defer recs.Close()
	live, err := journal.Open(journal.Config{Dir: filepath.Join(dir, "live"), Log: zerolog.Nop()})
	if err != nil {
		b.Fatal(err)
	}
	defer live.Close()
	store := newMemStore()
	s, err := New(Config{Node: "n", NumberKey: testKey, QueueSize: b.N + 1, CheckpointQueue: b.N + 1, Log: zerolog.Nop()}, store, recs, live)
	if err != nil {
		b.Fatal(err)
	}
	s.Start()
	b.ResetTimer()
	calls := make([]*Call, b.N)
	for i := range calls {
		calls[i] = s.Begin(CallStart{CallID: fmt.Sprintf("c%d", i), Caller: "+442079460000", Started: time.Now()})
	}
	for ep := range 5 {
		for _, c := range calls {
			answer(c, messages.Epoch(ep+1), "I would like a table for four", "Of course, a table for four at eight")
		}
	}
	for _, c := range calls {
		c.End(messages.CallEnded{Reason: "hangup"})
	}
	for store.count() < b.N {
		time.Sleep(time.Millisecond)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
	st := s.Stats()
	b.ReportMetric(float64(st["checkpoints"])/float64(b.N), "checkpoints/call")
	s.Close(context.Background())
}
