package contracttest

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/providertest"
)

// testLLMConfig is the mock's timetable in these tests: a 50 ms connect,
// the first token 300 ms after it, then one event every 30 ms.
var testLLMConfig = providertest.LLMConfig{ConnectLatency: 50 * time.Millisecond}

// newHarness makes the mock harness with a 2 s io timeout.
func newHarness(t *testing.T) *MockHarness {
	t.Helper()
	h, err := NewMockHarness(MockHarnessConfig{LLM: testLLMConfig, IOTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// must unwraps a provider made by a constructor with an error; the
// arguments are the tests' own, so an error is a bug of the test.
func must(p providers.LLM, err error) providers.LLM {
	if err != nil {
		panic(err)
	}
	return p
}

// reference is the mock behind the reference deadlines of its io timeout.
func reference(t *testing.T, h *MockHarness) providers.LLM {
	return must(WithDeadlines(h.Provider(), Uniform(h.IOTimeout())))
}

// runSuite runs the LLM suite; it must be called inside a bubble.
func runSuite(t *testing.T, p providers.LLM, h LLMHarness) Report {
	t.Helper()
	rep, err := RunLLM(t.Context(), p, h, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(rep.Checks), len(LLMCheckNames()); got != want {
		t.Fatalf("%d checks reported, want %d", got, want)
	}
	return rep
}

func failedNames(rep Report) []string {
	var out []string
	for _, c := range rep.Failures() {
		out = append(out, c.Name)
	}
	return out
}

func TestMockLLMPassesTheSuite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		start := time.Now()
		rep := runSuite(t, reference(t, h), h)
		t.Logf("suite took %v of virtual time\n%v", time.Since(start), rep)
		if !rep.Passed() {
			t.Fatalf("the reference mock fails:\n%v", rep)
		}
	})
}

// Each broken double must fail exactly the checks it targets: the check
// can fail, and the other checks do not fail by accident. Mutations seen
// failing this test (applied to llm.go, run, reverted): dropping the retry
// after the drop in reconnect (stale_session), the lower bound of
// judgeTimeout (deadline_1500ms, deadline_500ms), its upper bound
// (deadline_3s), the CancelPrompt watch after the drop (keep_alive), both
// counter checks of cancel together (frozen_counter; either alone still
// catches it), the abandoned-stream half of no_goroutine_leak
// (close_only: the only double that leaks only what is abandoned).
func TestBrokenDoublesFailExactlyTheirChecks(t *testing.T) {
	timeoutStalls := []string{CheckTimeoutConnect, CheckTimeoutFirst, CheckTimeoutIdle}
	allTimeouts := []string{CheckTimeoutConnect, CheckTimeoutConnectSlow, CheckTimeoutFirst, CheckTimeoutFirstSlow, CheckTimeoutIdle}
	for _, tt := range []struct {
		name  string
		build func(t *testing.T, h *MockHarness) (providers.LLM, LLMHarness)
		want  []string
	}{
		{
			name: "leaky",
			build: func(t *testing.T, h *MockHarness) (providers.LLM, LLMHarness) {
				p := Leaky(reference(t, h))
				t.Cleanup(p.Release)
				return p, h
			},
			want: []string{CheckGoroutineLeak},
		},
		{
			name:  "mis_mapped",
			build: func(t *testing.T, h *MockHarness) (providers.LLM, LLMHarness) { return MisMapped(reference(t, h)), h },
			want:  []string{CheckErrorMapping},
		},
		{
			name:  "warm_fails",
			build: func(t *testing.T, h *MockHarness) (providers.LLM, LLMHarness) { return WarmFails(reference(t, h)), h },
			want:  []string{CheckWarm},
		},
		{
			name:  "warm_hangs",
			build: func(t *testing.T, h *MockHarness) (providers.LLM, LLMHarness) { return WarmHangs(reference(t, h)), h },
			want:  []string{CheckWarm},
		},
		{
			name:  "warm_slows",
			build: func(t *testing.T, h *MockHarness) (providers.LLM, LLMHarness) { return WarmSlows(reference(t, h)), h },
			want:  []string{CheckWarm},
		},
		{
			name: "connect_hangs",
			build: func(t *testing.T, h *MockHarness) (providers.LLM, LLMHarness) {
				return must(ConnectHangs(h.Provider(), h.IOTimeout())), h
			},
			want: []string{CheckTimeoutConnect},
		},
		{
			name: "stale_session",
			build: func(t *testing.T, h *MockHarness) (providers.LLM, LLMHarness) {
				return StaleSession(reference(t, h)), h
			},
			want: []string{CheckReconnect},
		},
		{
			name: "loses_first_delta",
			build: func(t *testing.T, h *MockHarness) (providers.LLM, LLMHarness) {
				return LosesFirstDelta(reference(t, h)), h
			},
			want: []string{CheckStreaming},
		},
		{
			// Seen twice: generation goes on after the drop (cancel), and
			// the reader outlives its streams (leak).
			name: "keep_alive",
			build: func(t *testing.T, h *MockHarness) (providers.LLM, LLMHarness) {
				p := KeepAlive(reference(t, h))
				t.Cleanup(p.Release)
				return p, h
			},
			want: []string{CheckCancel, CheckGoroutineLeak},
		},
		{
			// Leaks only what is abandoned (cancelled, never closed):
			// pins the abandoned half of no_goroutine_leak.
			name: "close_only",
			build: func(t *testing.T, h *MockHarness) (providers.LLM, LLMHarness) {
				p := CloseOnly(reference(t, h))
				t.Cleanup(p.Release)
				return p, h
			},
			want: []string{CheckGoroutineLeak},
		},
		{
			name: "frozen_counter",
			build: func(t *testing.T, h *MockHarness) (providers.LLM, LLMHarness) {
				return reference(t, h), FrozenCounter(h)
			},
			want: []string{CheckCancel},
		},
		{
			name: "no_idle_timeout",
			build: func(t *testing.T, h *MockHarness) (providers.LLM, LLMHarness) {
				return must(NoIdleTimeout(h.Provider(), h.IOTimeout())), h
			},
			want: []string{CheckTimeoutIdle},
		},
		{
			// Too short but above the slow cases: only the lower bound of
			// the stalled cases catches it.
			name: "deadline_1500ms",
			build: func(t *testing.T, h *MockHarness) (providers.LLM, LLMHarness) {
				return must(WithDeadlines(h.Provider(), Uniform(1500*time.Millisecond))), h
			},
			want: timeoutStalls,
		},
		{
			// Below the slow cases: they are cut off too.
			name: "deadline_500ms",
			build: func(t *testing.T, h *MockHarness) (providers.LLM, LLMHarness) {
				return must(WithDeadlines(h.Provider(), Uniform(500*time.Millisecond))), h
			},
			want: allTimeouts,
		},
		{
			name: "deadline_3s",
			build: func(t *testing.T, h *MockHarness) (providers.LLM, LLMHarness) {
				return must(WithDeadlines(h.Provider(), Uniform(3*time.Second))), h
			},
			want: timeoutStalls,
		},
		{
			// The bare mock enforces no deadline: every stall is waited out
			// until the suite's bound.
			name:  "no_deadlines",
			build: func(t *testing.T, h *MockHarness) (providers.LLM, LLMHarness) { return h.Provider(), h },
			want:  timeoutStalls,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t)
				p, hh := tt.build(t, h)
				rep := runSuite(t, p, hh)
				if got := failedNames(rep); !slices.Equal(got, tt.want) {
					t.Fatalf("failed checks %q, want %q\n%v", got, tt.want, rep)
				}
				for _, c := range rep.Failures() {
					if c.Detail == "" {
						t.Errorf("%s failed without a detail", c.Name)
					}
				}
			})
		})
	}
}

// stallBefore stalls a stream for an hour before event n.
func stallBefore(n int) providertest.Fault {
	return providertest.Fault{Kind: providertest.FaultStall, BeforeEvent: n, Duration: time.Hour}
}
