package tracing

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/brisvox/brisvox/messages"
)

// TestConcurrentCalls: calls on goroutines of their own (as sessions
// are), each of a few turns, make one trace each with all their spans
// and no span of another call, built before Close (the tracer's
// goroutine keeps up with live calls). Mutation caught: drain leaving a
// call's scheduled flag set (the call never handed over again) builds
// nothing until Close; -race sees the locking.
func TestConcurrentCalls(t *testing.T) {
	col := newCollector(t)
	tr := newTestTracer(t, col, zerolog.Nop(), nil)
	const calls, turns = 40, 5
	ids := make([]string, calls)
	var wg sync.WaitGroup
	for i := range calls {
		c := tr.Begin(fmt.Sprintf("call-%02d", i), "pcm", "a", t0)
		ids[i] = c.TraceID()
		wg.Go(func() {
			for e := range turns {
				evs := turnEvents(messages.Epoch(e + 1))
				for j := range evs {
					c.Event(&evs[j])
				}
			}
			c.End(messages.CallEnded{Reason: "hangup"})
		})
	}
	wg.Wait()
	// A turn: the turn, 6 stages, 2 rounds, 1 tool.
	want := 1 + turns*(1+6+2+1)
	waitUntil(t, 20*time.Second, "every call's spans built before Close", func() bool {
		return tr.Stats()["spans"] == calls*uint64(want)
	})
	closeTracer(t, tr)
	perTrace := map[string]int{}
	callOf := map[string]string{}
	for _, s := range col.got() {
		perTrace[hexID(s.TraceId)]++
		if s.Name == "call" {
			callOf[hexID(s.TraceId)] = attrMap(s.Attributes)["brisvox.call.id"]
		}
	}
	for i, id := range ids {
		if perTrace[id] != want || callOf[id] != fmt.Sprintf("call-%02d", i) {
			t.Errorf("call %d: %d spans in its trace (call span of %q), want %d", i, perTrace[id], callOf[id], want)
		}
	}
	if len(perTrace) != calls {
		t.Errorf("%d traces, want %d", len(perTrace), calls)
	}
}

// waitUntil polls cond (real time: the tracer's goroutine and a loopback
// collector) until it holds or d passed.
func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(d)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
