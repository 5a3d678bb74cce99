package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/brisvox/brisvox/internal/leaktest"
	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/sip"
	"github.com/brisvox/brisvox/sip/signal"
)

// TestQuantileMS: the setup figures. Mutation caught: an index of
// len*q-1 reads p50 of 1..100 ms as 50 instead of 51 and p99 as 99
// instead of 100.
func TestQuantileMS(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	for _, c := range []struct {
		name string
		q    float64
		want float64
	}{{"p50", 0.5, 51}, {"p99", 0.99, 100}, {"max", 1, 100}, {"min", 0, 1}} {
		t.Run(c.name, func(t *testing.T) {
			if got := quantileMS(d, c.q); got != c.want {
				t.Errorf("quantileMS(1..100 ms, %v) = %v, want %v", c.q, got, c.want)
			}
		})
	}
	if got := quantileMS(nil, 0.99); got != 0 {
		t.Errorf("no setups: %v", got)
	}
}

// TestDialOutcome names each failure as the report counts it.
func TestDialOutcome(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{&signal.DialError{Outcome: signal.DialBusy, Code: 486}, "busy"},
		{fmt.Errorf("wrapped: %w", &signal.DialError{Outcome: signal.DialNoAnswer}), "no_answer"},
		{fmt.Errorf("%w: 25 a second", sip.ErrDialLimited), "limited"},
		{&conn.Refusal{Cause: conn.RefusedFull, RetryAfter: time.Second}, "refused_full"},
		{fmt.Errorf("%w: x", signal.ErrBadAnswer), "bad_answer"},
		{fmt.Errorf("%w: x", sip.ErrInvalidDial), "invalid"},
		{errors.New("what"), "error"},
	} {
		t.Run(c.want, func(t *testing.T) {
			if got := dialOutcome(c.err); got != c.want {
				t.Errorf("dialOutcome(%v) = %q, want %q", c.err, got, c.want)
			}
		})
	}
}

// TestFarEndAddr: --trunk-addr is loopback with a port, or a free one.
func TestFarEndAddr(t *testing.T) {
	if a, err := farEndAddr(""); err != nil || !a.Addr().IsLoopback() || a.Port() == 0 {
		t.Errorf(`farEndAddr("") = %v, %v`, a, err)
	}
	if a, err := farEndAddr("127.0.0.1:5070"); err != nil || a.Port() != 5070 {
		t.Errorf("farEndAddr(127.0.0.1:5070) = %v, %v", a, err)
	}
	for _, bad := range []string{"10.0.0.1:5070", "127.0.0.1:0", "127.0.0.1", "far:5070"} {
		if _, err := farEndAddr(bad); err == nil {
			t.Errorf("farEndAddr(%q) accepted", bad)
		}
	}
}

// TestDialBenchSipp runs the bench small against a real sipp uas on
// loopback: every call answered, ended by the far end's BYE, sipp's
// count the same, no goroutine left. Counts only, no timings. Mutations
// caught: a BYE in dialScenario whose From lacks the 200's tag (the
// dialog not matched: sipp fails, the calls run to their bound); the
// server not closed at the end (runDial's srv.Close dropped: a goroutine
// left).
func TestDialBenchSipp(t *testing.T) {
	if testing.Short() {
		t.Skip("real sockets and sipp")
	}
	if _, err := exec.LookPath("sipp"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("sipp (sip-tester) is not installed; CI's setup installs it")
		}
		t.Skip("sipp (sip-tester) is not installed: go tool task setup")
	}
	base := leaktest.Snapshot()
	far, err := farEndAddr("")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan dialReport, 1)
	go func() { done <- runDial(5, 2*time.Second, 500*time.Millisecond, far, io.Discard) }()
	var rep dialReport
	select {
	case rep = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the dial bench did not end")
	}
	if rep.Error != "" {
		t.Fatal(rep.Error)
	}
	if rep.Attempted != 10 || rep.Answered != 10 || sum(rep.Failed) != 0 {
		t.Errorf("attempted %d, answered %d, failed %v; want 10 answered", rep.Attempted, rep.Answered, rep.Failed)
	}
	if rep.Ended["bye"] != 10 || len(rep.Ended) != 1 {
		t.Errorf("ended %v, want 10 by the far end's BYE", rep.Ended)
	}
	if rep.SippSuccessful != 10 || rep.SippFailed != 0 {
		t.Errorf("sipp %d successful, %d failed; want 10, 0", rep.SippSuccessful, rep.SippFailed)
	}
	if rep.LiveMax < 1 || rep.LiveMax > 10 {
		t.Errorf("calls live max %d", rep.LiveMax)
	}
	waitGoroutines(t, base)
}
