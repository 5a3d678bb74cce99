package llmtest

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/contracttest"
	"github.com/brisvox/brisvox/providers/llm/internal/llmmock"
	"github.com/brisvox/brisvox/providers/providertest"
)

func text(s string) providers.LLMEvent { return providers.LLMEvent{Kind: providers.LLMText, Text: s} }

var done = providers.LLMEvent{Kind: providers.LLMDone}

// TestCollect: the events before io.EOF, or before the error with it; the
// stream closed either way; a stream that never ends fails the test.
// Mutations caught: Collect without its Close (closes 0); the events
// before an error dropped.
func TestCollect(t *testing.T) {
	cut := &providers.Disconnected{Cause: errors.New("cut")}
	cases := []struct {
		name    string
		s       fakeStream
		wantN   int
		wantErr error
	}{
		{"to EOF", fakeStream{evs: []providers.LLMEvent{text("a"), text("b"), done}}, 3, nil},
		{"to an error", fakeStream{evs: []providers.LLMEvent{text("a")}, end: cut}, 1, cut},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := c.s
			evs, err := Collect(t, &s)
			if len(evs) != c.wantN || err != c.wantErr || s.closes != 1 {
				t.Fatalf("%d events, error %v, %d closes; want %d, %v, 1", len(evs), err, s.closes, c.wantN, c.wantErr)
			}
		})
	}
	t.Run("endless", func(t *testing.T) {
		if failed, msg := run(t, func(tb testing.TB) { _, _ = Collect(tb, &fakeStream{endless: true}) }); !failed || msg != "stream did not end" {
			t.Fatalf("failed %v (%q), want a failure: the stream did not end", failed, msg)
		}
	})
}

// TestAssemble: text, call fragments and provider data reach the
// assembler; usage and Done pass it by. Mutation caught: the
// LLMProviderData case dropped (no provider data on the response).
func TestAssemble(t *testing.T) {
	r := Assemble(t, []providers.LLMEvent{
		text("Checking "), text("now."),
		{Kind: providers.LLMToolCall, Index: 0, ID: "c1", Name: "weather", Args: `{"city":`},
		{Kind: providers.LLMToolCall, Index: 0, Args: `"Paris"}`},
		{Kind: providers.LLMUsage, Usage: providers.Usage{InputTokens: 1}},
		{Kind: providers.LLMProviderData, ProviderData: []byte(`{"p":1}`)},
		done,
	})
	if r.Text != "Checking now." || len(r.Calls) != 1 || string(r.Calls[0].Call.Arguments) != `{"city":"Paris"}` || string(r.ProviderData) != `{"p":1}` {
		t.Fatalf("response %+v", r)
	}
}

// TestHarness: each request takes the first scripted response not yet
// used (idle when none is left) and the first fault, merged by respond;
// Reset drops both queues. Mutations caught: Reset keeping the faults
// (the last request gets status 2); the script taken from its end.
func TestHarness(t *testing.T) {
	srv := &fakeMock{events: 7}
	h := NewHarness(srv, 2*time.Second, contracttest.Response{Text: "idle"}, func(r contracttest.Response, f providertest.Fault) llmmock.Response {
		return llmmock.Response{Lines: []string{r.Text + "/" + strconv.Itoa(f.Status)}}
	})
	if h.EventsSent() != 7 || h.IOTimeout() != 2*time.Second {
		t.Fatalf("events %d, io timeout %v", h.EventsSent(), h.IOTimeout())
	}
	var got []string
	next := func() { got = append(got, srv.source().Lines[0]) }
	h.Script(contracttest.Response{Text: "a"})
	h.Script(contracttest.Response{Text: "b"})
	h.Inject(providertest.Fault{Kind: providertest.FaultReject, Status: 1})
	next()
	next()
	next()
	h.Script(contracttest.Response{Text: "c"})
	h.Inject(providertest.Fault{Kind: providertest.FaultReject, Status: 2})
	h.Reset()
	next()
	if want := []string{"a/1", "b/0", "idle/0", "idle/0"}; !slices.Equal(got, want) {
		t.Fatalf("answers %q, want %q", got, want)
	}
}

// TestChecksBite runs the checks on fakes that keep the contract and on
// fakes that break it: each passes the first and fails the second.
// Mutations caught: CancelStopsAtOnce not comparing the time ("deaf" then
// passes); timesOutAt not comparing the phase ("other phase" passes);
// EndsTyped accepting any error ("untyped end" passes); WarmThenRefused
// not checking the status ("refused 503", retryable too, passes).
func TestChecksBite(t *testing.T) {
	stalled := func(heed bool) *fakeLLM {
		// Deaf to its context, the stream still ends in context.Canceled,
		// but only when its stall is over.
		return &fakeLLM{streams: []fakeStream{{evs: []providers.LLMEvent{text("one ")}, stall: 10 * time.Second, heed: heed, end: context.Canceled}}}
	}
	timeout := func(op string, after time.Duration) *fakeLLM {
		return &fakeLLM{streams: []fakeStream{{evs: []providers.LLMEvent{text("a")}, stall: after, end: &providers.Timeout{Op: op}}}}
	}
	warm := func(status int) *fakeLLM {
		return &fakeLLM{streams: []fakeStream{{evs: []providers.LLMEvent{text("hello"), done}}, {end: &providers.Rejected{Status: status}}}}
	}
	ends := func(end error) func(testing.TB) {
		return func(tb testing.TB) { EndsTyped(tb, &fakeStream{evs: []providers.LLMEvent{text("a")}, end: end}, 5) }
	}
	cases := []struct {
		name  string
		check func(tb testing.TB)
		fails bool
	}{
		{"cancel heeded", func(tb testing.TB) { CancelStopsAtOnce(tb, stalled(true), "one ") }, false},
		{"deaf to cancel", func(tb testing.TB) { CancelStopsAtOnce(tb, stalled(false), "one ") }, true},
		{"other first text", func(tb testing.TB) { CancelStopsAtOnce(tb, stalled(true), "two ") }, true},
		{"timeout on time", func(tb testing.TB) { timesOutAt(tb, timeout("event gap", 3*time.Second), "event gap", 3*time.Second) }, false},
		{"timeout late", func(tb testing.TB) { timesOutAt(tb, timeout("event gap", 3*time.Second), "event gap", 2*time.Second) }, true},
		{"other phase", func(tb testing.TB) { timesOutAt(tb, timeout("first event", 3*time.Second), "event gap", 3*time.Second) }, true},
		{"typed end", ends(&providers.Disconnected{}), false},
		{"untyped end", ends(errors.New("odd")), true},
		{"endless", func(tb testing.TB) { EndsTyped(tb, &fakeStream{endless: true}, 5) }, true},
		{"refused 429", func(tb testing.TB) { WarmThenRefused(tb, warm(429), "hello") }, false},
		{"refused 503", func(tb testing.TB) { WarmThenRefused(tb, warm(503), "hello") }, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				if failed, msg := run(t, c.check); failed != c.fails {
					t.Fatalf("failed %v (%s), want %v", failed, msg, c.fails)
				}
			})
		})
	}
}

// TestNoGoroutineLeakBites: an adapter whose dropped streams leave a
// goroutine behind (until the mock closes) fails NoGoroutineLeak; one
// that leaves none passes, and the mock is closed. Mutations caught: the
// goroutine count not compared (the leaky adapter passes); the mock's
// Close dropped (closed 0 times).
func TestNoGoroutineLeakBites(t *testing.T) {
	for _, leak := range []bool{false, true} {
		t.Run(map[bool]string{false: "clean", true: "leaky"}[leak], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				release := make(chan struct{})
				a := &fakeLLM{streams: []fakeStream{{evs: []providers.LLMEvent{text("a"), text("b"), done}}}, leak: leak, release: release}
				srv := &fakeMock{release: release}
				t.Cleanup(srv.Close) // ends the leaked goroutines when the check stops early
				failed, msg := run(t, func(tb testing.TB) { NoGoroutineLeak(tb, a, srv, llmmock.Response{}) })
				if failed != leak || (leak && !strings.Contains(msg, "goroutines after")) {
					t.Fatalf("failed %v (%s), want %v", failed, msg, leak)
				}
				if !a.closed || (!leak && srv.closes != 1) {
					t.Fatalf("adapter closed %v, mock closed %d times", a.closed, srv.closes)
				}
			})
		})
	}
}
