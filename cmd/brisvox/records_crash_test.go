package main

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brisvox/brisvox/cmd/internal/records"
	"github.com/brisvox/brisvox/cmd/internal/records/redact"
	"github.com/brisvox/brisvox/cmd/internal/records/sqlstore"
	"go.uber.org/goleak"
)

var localBanner = regexp.MustCompile(`serving agent "local" on (http://\S+)/`)

// recordsNode is a `brisvox serve` child of the keyless agent on a
// records directory.
type recordsNode struct {
	cmd            *exec.Cmd
	base           string
	stdout, stderr *syncBuffer
	done           chan error
}

func startRecordsNode(t *testing.T, bin, agent, dir string) *recordsNode {
	t.Helper()
	n := &recordsNode{stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan error, 1)}
	n.cmd = exec.Command(bin, "serve", "--agent", agent, "--addr", "127.0.0.1:0", "--sip-addr", "127.0.0.1:0",
		"--drain", "2s", "--log-level", "warn", "--records-dir", dir)
	n.cmd.Stdout, n.cmd.Stderr = n.stdout, n.stderr
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { n.done <- n.cmd.Wait() }()
	t.Cleanup(func() { _ = n.cmd.Process.Kill(); _ = n.wait(10 * time.Second) })
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if m := localBanner.FindStringSubmatch(n.stdout.String()); m != nil {
			n.base = m[1]
			return n
		}
		if n.cmd.ProcessState != nil || time.Now().After(deadline) {
			t.Fatalf("the node did not start:\n%s\n%s", n.stdout, n.stderr)
		}
	}
}

// wait waits for the node's exit (nil: status 0); a no-op after the
// first.
func (n *recordsNode) wait(d time.Duration) error {
	select {
	case err := <-n.done:
		n.done <- err
		return err
	case <-time.After(d):
		return errors.New("still running")
	}
}

// stop ends the node as SIGTERM does (drain, the records' queue into
// the journal) and wants status 0.
func (n *recordsNode) stop(t *testing.T) {
	t.Helper()
	if err := n.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := n.wait(30 * time.Second); err != nil {
		t.Errorf("the node's exit after SIGTERM: %v\n%s", err, n.stderr)
	}
}

// recordsStats is the node's /stats "records" counters.
func (n *recordsNode) recordsStats(t *testing.T) map[string]uint64 {
	t.Helper()
	_, body := fetch(t, "GET", n.base+"/stats", "")
	var s struct {
		Records map[string]uint64 `json:"records"`
	}
	if err := json.Unmarshal([]byte(body), &s); err != nil {
		t.Fatalf("/stats: %v in %s", err, body)
	}
	return s.Records
}

// TestRecordsAfterKill9: the built binary serves the keyless agent as a
// child with --records-dir; a PCM websocket call is greeted and its
// question answered (the turn's checkpoint journaled), then the child is
// killed with SIGKILL mid-call. Restarted on the same directory, it
// records the call: end reason node_crashed, the transport, the agent and
// its digest, the turns known before the kill (the question's with the
// latency and stages the page saw, the caller's line as heard). A second
// restart adds no second record. Real time: skipped with -short; the
// calls and restarts take about 20 s (the build apart).
//
// Mutations caught (each seen failing): Recover not called by serve's
// openKept (no record after the restart); Recover not acking the
// crashed call's live-call entries (the second restart recovers it
// again: its warning logged a second time; the store's idempotent Put
// keeps the count at one).
func TestRecordsAfterKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("a real-time call and child processes")
	}
	leaks := goleak.IgnoreCurrent()
	bin := build(t)
	question := say(t, "What time is it?")
	agent := keyless(t)
	dir := t.TempDir()
	start := time.Now()

	a := startRecordsNode(t, bin, agent, dir)
	c := dialKeptCaller(t, a.base)
	greeted(t, c.seen)
	ep := answeredTurn(t, c.seen, c.play, question, "time")
	eventually(t, 10*time.Second, "the turn's checkpoint journaled", func() bool { return a.recordsStats(t)["checkpoints"] >= 1 })
	live := c.seen()
	if err := a.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	var exit *exec.ExitError
	if err := a.wait(10 * time.Second); !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the node's end: %v, want killed by SIGKILL", err)
	}
	c.close()
	killed := time.Since(start)

	b := startRecordsNode(t, bin, agent, dir)
	ctx := context.Background()
	st, err := sqlstore.Open(ctx, "sqlite:"+filepath.Join(dir, "records.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var sums []records.Summary
	eventually(t, 20*time.Second, "the crashed call's record", func() bool {
		sums, err = st.List(ctx, records.Query{})
		return err == nil && len(sums) > 0
	})
	if len(sums) != 1 || sums[0].EndReason != records.ReasonNodeCrashed {
		t.Fatalf("records after the restart: %+v, want one node_crashed", sums)
	}
	if !strings.Contains(b.stderr.String(), `"calls":1`) || !strings.Contains(b.stderr.String(), "recorded as node_crashed") {
		t.Errorf("the restart's log does not tell the recovered call:\n%s", b.stderr)
	}
	rec, err := st.Get(ctx, sums[0].CallID)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Transport != "pcm" || rec.Direction != "inbound" || rec.Agent != "local" || rec.AgentDigest != fileDigest(t, agent) || rec.Started.IsZero() || rec.Ended.Before(rec.Started) {
		t.Errorf("the recovered record's head: %+v", rec)
	}
	// The question's turn as the page saw it before the kill.
	red, err := redact.New(redact.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var heard string
	for _, ev := range live.of("user_turn") {
		if epochOf(ev) == ep {
			heard, _ = red.String(ev["text"].(string))
		}
	}
	if l := lineOf(rec, records.SpeakerCaller, ep); l == nil || l.Text != heard {
		t.Errorf("the recovered caller's line of turn %d: %+v, the page heard %q", ep, l, heard)
	}
	tr := turnOf(rec, ep)
	for _, ev := range live.of("latency") {
		if epochOf(ev) != ep {
			continue
		}
		if tr == nil || tr.LatencyMS != ev["latency_ms"].(float64) || len(tr.Stages) == 0 || tr.Marks["first_audio_out"].IsZero() {
			t.Errorf("the recovered turn %d: %+v, the page's latency %v", ep, tr, ev)
		}
	}
	if turnOf(rec, 1) == nil {
		t.Errorf("the greeting's turn is not in the recovered record: %+v", rec.Turns)
	}
	b.stop(t)

	// A second restart: the call is recorded once.
	c2 := startRecordsNode(t, bin, agent, dir)
	c2.stop(t)
	if strings.Contains(c2.stderr.String(), "recorded as node_crashed") {
		t.Errorf("the second restart recovered calls again:\n%s", c2.stderr)
	}
	sums, err = st.List(ctx, records.Query{})
	if err != nil || len(sums) != 1 {
		t.Errorf("records after the second restart: %+v %v, want the one", sums, err)
	}
	t.Logf("killed %v after the start, recorded and restarted twice in %v", killed.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	if err := st.Close(); err != nil {
		t.Error(err)
	}
	verifyNoLeaks(t, leaks)
}
