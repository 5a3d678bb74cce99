package sip_test

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/sip"
	"github.com/brisvox/brisvox/sip/signal"
)

// farEnd is sipp as the callee of our outbound calls, on 127.0.0.2.
type farEnd struct {
	port int
	done chan struct{}
	out  bytes.Buffer
	err  error
}

// startFarEnd runs sipp's uas side: a built-in scenario name or a file.
func startFarEnd(t *testing.T, ctx context.Context, dir, scenario string, port int) *farEnd {
	t.Helper()
	f := &farEnd{port: port, done: make(chan struct{})}
	args := []string{"-m", "1", "-timeout", "40s", "-timeout_error", "-i", "127.0.0.2", "-mi", "127.0.0.2",
		"-p", strconv.Itoa(port), "-mp", strconv.Itoa(freePort(t, "127.0.0.2")), "-nostdin", "-trace_err"}
	if filepath.Ext(scenario) == ".xml" {
		abs, err := filepath.Abs(scenario)
		if err != nil {
			t.Fatal(err)
		}
		args = append(args, "-sf", abs)
	} else {
		args = append(args, "-sn", scenario)
	}
	cmd := exec.CommandContext(ctx, "sipp", args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = &f.out, &f.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { defer close(f.done); f.err = cmd.Wait() }()
	return f
}

func (f *farEnd) wait(t *testing.T) {
	t.Helper()
	select {
	case <-f.done:
	case <-time.After(45 * time.Second):
		t.Fatal("sipp did not end")
	}
}

// TestDialSippAnswers places calls through a trunk to a real sipp uas:
// answered (the RTP session started on the answer, our frames sent,
// Close's BYE ends sipp's scenario) and busy (a typed outcome, nothing
// left listed, the trunk's slot given back).
func TestDialSippAnswers(t *testing.T) {
	port := freePort(t, "127.0.0.2")
	r := newRig(t, func(c *sip.Config) {
		c.Trunks = map[string]sip.TrunkConfig{"far": {
			Address: "127.0.0.2:" + strconv.Itoa(port), From: "+15550000", MaxCalls: 1,
		}}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	t.Run("answered", func(t *testing.T) {
		far := startFarEnd(t, ctx, r.dir, "uas", port)
		c, err := r.srv.Dial(ctx, sip.DialRequest{Trunk: "far", To: "+15551234", RingTimeout: 20 * time.Second})
		if err != nil {
			t.Fatalf("dial: %v\n%s", err, far.out.String())
		}
		if !c.Outbound() {
			t.Error("an answered dial is not an outbound call")
		}
		if name, _, ok := c.Trunk(); !ok || name != "far" {
			t.Errorf("Trunk() = %q, %v", name, ok)
		}
		// The call record's trunk (serve reads TrunkName). Mutation seen
		// failing: TrunkName returning "" for an outbound call.
		if n := c.TrunkName(); n != "far" {
			t.Errorf("TrunkName() = %q, want far", n)
		}
		// Ours (the trunk's caller id) and the number dialled. (Mutation
		// seen failing: the parties not set on an outbound call.)
		if caller, callee := c.Parties(); caller != "+15550000" || callee != "+15551234" {
			t.Errorf("Parties() = %q, %q; want the caller id and the number dialled", caller, callee)
		}
		if !slices.Contains(r.srv.Calls(), c.ID()) {
			t.Errorf("the answered call %s is not listed", c.ID())
		}
		// The media runs on the answer: what the agent says goes out.
		out := &messages.OutputAudio{PCM: make([]int16, c.OutputRate()/50), Rate: c.OutputRate()}
		for range 10 {
			if err := c.WriteFrame(out); err != nil {
				t.Fatal(err)
			}
		}
		deadline := time.Now().Add(5 * time.Second)
		for r.srv.Stats()["rtp_sent"] == 0 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond) // real sockets: the pacer sends in real time
		}
		if got := r.srv.Stats()["rtp_sent"]; got == 0 {
			t.Error("no RTP sent to the callee")
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		far.wait(t)
		if far.err != nil {
			t.Fatalf("sipp uas failed (our BYE not seen?): %v\n%s", far.err, far.out.String())
		}
		if n := len(r.srv.Calls()); n != 0 {
			t.Errorf("%d calls listed after Close", n)
		}
	})

	t.Run("busy", func(t *testing.T) {
		far := startFarEnd(t, ctx, r.dir, "signal/testdata/sipp/uas_busy.xml", port)
		_, err := r.srv.Dial(ctx, sip.DialRequest{Trunk: "far", To: "+15551234"})
		var de *signal.DialError
		if !errors.As(err, &de) || de.Outcome != signal.DialBusy || de.Code != 486 {
			t.Fatalf("dial to a busy callee: %v, want busy (486)", err)
		}
		far.wait(t)
		if far.err != nil {
			t.Fatalf("sipp: %v\n%s", far.err, far.out.String())
		}
		if n := len(r.srv.Calls()); n != 0 {
			t.Errorf("%d calls listed after a busy dial", n)
		}
	})

	// max_calls is 1: a slot not given back by the answered call or the
	// busy one (mutation: drop release() in dial's error path, or
	// Close's) refuses this dial as limited. Its context is over, so it
	// ends as cancelled without ringing anyone.
	gone, stop := context.WithCancel(ctx)
	stop()
	if _, err := r.srv.Dial(gone, sip.DialRequest{Trunk: "far", To: "+15551234"}); errors.Is(err, sip.ErrDialLimited) {
		t.Errorf("the trunk's only slot was not given back: %v", err)
	}
	st := r.srv.Stats()
	if st["outbound_answered"] != 1 || st["outbound_busy"] != 1 || st["outbound_limited"] != 0 {
		t.Errorf("counters answered=%d busy=%d limited=%d, want 1 1 0", st["outbound_answered"], st["outbound_busy"], st["outbound_limited"])
	}
}

// TestDialRefusedByAdmission: a full server refuses the dial before
// anything is sent, with the admission's own refusal.
func TestDialRefusedByAdmission(t *testing.T) {
	port := freePort(t, "127.0.0.2")
	r := newRig(t, func(c *sip.Config) {
		c.Trunks = map[string]sip.TrunkConfig{"far": {Address: "127.0.0.2:" + strconv.Itoa(port), From: "+15550000"}}
		c.Admit = func() (conn.Admission, error) {
			return nil, &conn.Refusal{Cause: conn.RefusedFull, RetryAfter: time.Second}
		}
	})
	_, err := r.srv.Dial(context.Background(), sip.DialRequest{Trunk: "far", To: "+15551234"})
	var ref *conn.Refusal
	if !errors.As(err, &ref) || ref.Cause != conn.RefusedFull {
		t.Fatalf("dial on a full server: %v, want the admission's refusal", err)
	}
	if st := r.srv.Stats(); st["outbound_refused"] != 1 {
		t.Errorf("outbound_refused = %d, want 1", st["outbound_refused"])
	}
	if _, err := r.srv.Dial(context.Background(), sip.DialRequest{Trunk: "nope", To: "+15551234"}); err == nil {
		t.Error("a dial through an unknown trunk was placed")
	}
}
