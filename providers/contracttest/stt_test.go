package contracttest

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/providers"
)

// newSTTHarness makes the mock STT harness with a 2 s io timeout and a
// 50 ms connect.
func newSTTHarness(t *testing.T) *MockSTTHarness {
	t.Helper()
	h, err := NewMockSTTHarness(MockSTTHarnessConfig{IOTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	h.cfg.STT.ConnectLatency = 50 * time.Millisecond
	return h
}

// mustSTT unwraps a provider made by a constructor with an error; the
// arguments are the tests' own, so an error is a bug of the test.
func mustSTT(p providers.STT, err error) providers.STT {
	if err != nil {
		panic(err)
	}
	return p
}

// referenceSTT is the mock behind the reference deadlines.
func referenceSTT(h *MockSTTHarness) providers.STT {
	return mustSTT(STTWithDeadlines(h.Provider(), Uniform(h.IOTimeout())))
}

// runSTTSuite runs the STT suite; it must be called inside a bubble.
func runSTTSuite(t *testing.T, p providers.STT, h STTHarness) Report {
	t.Helper()
	rep, err := RunSTT(t.Context(), p, h, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(rep.Checks), len(STTCheckNames()); got != want {
		t.Fatalf("%d checks reported, want %d", got, want)
	}
	return rep
}

func TestMockSTTPassesTheSuite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newSTTHarness(t)
		start := time.Now()
		rep := runSTTSuite(t, referenceSTT(h), h)
		t.Logf("suite took %v of virtual time\n%v", time.Since(start), rep)
		if !rep.Passed() {
			t.Fatalf("the reference mock fails:\n%v", rep)
		}
	})
}

// Each broken STT double must fail exactly the checks it targets: the
// check can fail, and the other checks do not fail by accident. Mutations
// seen failing this test (applied, run, reverted): the lower bound of
// judgeTimeout (deadline_1500ms, deadline_500ms), its upper bound
// (deadline_3s), streaming's demand that the first event is an interim
// (interims_as_finals). TestMockSTTPassesTheSuite fails when cancel counts
// the events buffered before the hang-up.
func TestBrokenSTTDoublesFailExactlyTheirChecks(t *testing.T) {
	timeoutStalls := []string{CheckTimeoutConnect, CheckTimeoutFirst, CheckTimeoutIdle}
	allTimeouts := []string{CheckTimeoutConnect, CheckTimeoutConnectSlow, CheckTimeoutFirst, CheckTimeoutFirstSlow, CheckTimeoutIdle}
	for _, tt := range []struct {
		name  string
		build func(t *testing.T, h *MockSTTHarness) providers.STT
		want  []string
	}{
		{
			name:  "no_interims",
			build: func(t *testing.T, h *MockSTTHarness) providers.STT { return NoInterims(referenceSTT(h)) },
			want:  []string{CheckStreaming},
		},
		{
			// Mutation caught: without streaming's demand that the first
			// event is not final, this double passes.
			name:  "interims_as_finals",
			build: func(t *testing.T, h *MockSTTHarness) providers.STT { return InterimsAsFinals(referenceSTT(h)) },
			want:  []string{CheckStreaming},
		},
		{
			name:  "emits_after_hang_up",
			build: func(t *testing.T, h *MockSTTHarness) providers.STT { return EmitsAfterHangUp(referenceSTT(h)) },
			want:  []string{CheckCancel},
		},
		{
			// The hang-up is ignored: events keep coming after Close
			// (cancel) and the session outlives it (leak).
			name: "leaky",
			build: func(t *testing.T, h *MockSTTHarness) providers.STT {
				p := NewLeakySTT(referenceSTT(h))
				t.Cleanup(p.Release)
				return p
			},
			want: []string{CheckCancel, CheckGoroutineLeak},
		},
		{
			name:  "mis_mapped",
			build: func(t *testing.T, h *MockSTTHarness) providers.STT { return MisMappedSTT(referenceSTT(h)) },
			want:  []string{CheckErrorMapping},
		},
		{
			// The dead session goes to whichever connect comes next after a
			// drop: the retry of reconnect, and the stalled connect that
			// follows the drop case of error_mapping.
			name:  "stale_session",
			build: func(t *testing.T, h *MockSTTHarness) providers.STT { return StaleSessionSTT(referenceSTT(h)) },
			want:  []string{CheckReconnect, CheckTimeoutConnect},
		},
		{
			name:  "warm_fails",
			build: func(t *testing.T, h *MockSTTHarness) providers.STT { return WarmFailsSTT(referenceSTT(h)) },
			want:  []string{CheckWarm},
		},
		{
			name:  "warm_hangs",
			build: func(t *testing.T, h *MockSTTHarness) providers.STT { return WarmHangsSTT(referenceSTT(h)) },
			want:  []string{CheckWarm},
		},
		{
			name:  "warm_slows",
			build: func(t *testing.T, h *MockSTTHarness) providers.STT { return WarmSlowsSTT(referenceSTT(h)) },
			want:  []string{CheckWarm},
		},
		{
			name: "connect_hangs",
			build: func(t *testing.T, h *MockSTTHarness) providers.STT {
				return mustSTT(ConnectHangsSTT(h.Provider(), h.IOTimeout()))
			},
			want: []string{CheckTimeoutConnect},
		},
		{
			name: "no_idle_timeout",
			build: func(t *testing.T, h *MockSTTHarness) providers.STT {
				return mustSTT(NoIdleTimeoutSTT(h.Provider(), h.IOTimeout()))
			},
			want: []string{CheckTimeoutIdle},
		},
		{
			name: "deadline_1500ms",
			build: func(t *testing.T, h *MockSTTHarness) providers.STT {
				return mustSTT(STTWithDeadlines(h.Provider(), Uniform(1500*time.Millisecond)))
			},
			want: timeoutStalls,
		},
		{
			name: "deadline_500ms",
			build: func(t *testing.T, h *MockSTTHarness) providers.STT {
				return mustSTT(STTWithDeadlines(h.Provider(), Uniform(500*time.Millisecond)))
			},
			want: allTimeouts,
		},
		{
			name: "deadline_3s",
			build: func(t *testing.T, h *MockSTTHarness) providers.STT {
				return mustSTT(STTWithDeadlines(h.Provider(), Uniform(3*time.Second)))
			},
			want: timeoutStalls,
		},
		{
			name:  "no_deadlines",
			build: func(t *testing.T, h *MockSTTHarness) providers.STT { return h.Provider() },
			want:  timeoutStalls,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newSTTHarness(t)
				rep := runSTTSuite(t, tt.build(t, h), h)
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

// A service that answers a short burst of speech with an interim before
// the final (the mock with a 50 ms interim step, under the 100 ms burst;
// deepgrammock sends one per audio frame) is conformant: the streaming
// check even demands interims. Mutations caught: reconnect demanding the
// burst's final before the drop at event 1 (the drop takes that final:
// "before the drop", every run); reconnect failing on a Finalize that the
// session refuses because its two interims and the drop came at once
// (14 of 20 runs under -race, where the mock's goroutine more often runs
// before the Finalize).
func TestSTTInterimOnTheBurstPassesTheSuite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newSTTHarness(t)
		h.cfg.STT.InterimEvery = 50 * time.Millisecond
		rep := runSTTSuite(t, referenceSTT(h), h)
		if !rep.Passed() {
			t.Fatalf("a service with an interim per 50 ms of speech fails:\n%v", rep)
		}
	})
}
