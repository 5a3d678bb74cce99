package contracttest

import (
	"slices"
	"testing"
	"testing/synctest"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/providertest"
)

// inProcessHarness is h declaring an in-process engine (TTSInProcess) and
// counting the calls of Inject, which RunTTS must then never make.
type inProcessHarness struct {
	TTSHarness
	injects *int
}

func (inProcessHarness) InProcess() bool { return true }

func (h inProcessHarness) Inject(f providertest.Fault) {
	*h.injects++
	h.TTSHarness.Inject(f)
}

// inProcessHolds is an in-process harness that also holds text.
type inProcessHolds struct{ inProcessHarness }

func (inProcessHolds) HoldsText() bool { return true }

// inProcessReference is the reference mock.
func inProcessReference(t *testing.T, h *MockTTSHarness) providers.TTS { return referenceTTS(h) }

// faultChecks are the TTS checks that fault the service.
var faultChecks = []string{CheckReconnect, CheckErrorMapping, CheckTimeoutConnect,
	CheckTimeoutConnectSlow, CheckTimeoutFirst, CheckTimeoutFirstSlow, CheckTimeoutIdle}

// A harness declaring an in-process engine gets the fault checks reported
// as skipped (not passed, not failed), Inject is never called, and the
// other checks still run and bite: a broken cancel, a leak, a failing
// warm, truncated audio each fail exactly their checks. A network mock
// whose deadlines are wrong (500 ms against the declared 2 s, failing all
// five timeout checks undeclared) passes when it declares itself in
// process: the declaration is the harness's word, so the skipped checks
// are listed as such in the Report, never folded into its passes.
// Mutations seen failing this test (applied, run, reverted): the fault
// checks run despite the declaration (Inject called, the checks reported
// as run); skipped checks reported with Passed true; cancel also skipped
// (dead_cancel passes); Failures counting the skipped checks (reference
// fails); the held-text stall not marked as a fault check.
func TestInProcessSkipsExactlyTheFaultChecks(t *testing.T) {
	for _, tt := range []struct {
		name        string
		build       func(t *testing.T, h *MockTTSHarness) providers.TTS
		holds       bool
		want        []string
		wantSkipped []string
	}{
		{name: "reference", build: inProcessReference, wantSkipped: faultChecks},
		{
			name:        "dead_cancel",
			build:       func(t *testing.T, h *MockTTSHarness) providers.TTS { return DeadCancel(referenceTTS(h)) },
			want:        []string{CheckCancel},
			wantSkipped: faultChecks,
		},
		{
			name: "leaky",
			build: func(t *testing.T, h *MockTTSHarness) providers.TTS {
				p := NewLeakyTTS(referenceTTS(h))
				t.Cleanup(p.Release)
				return p
			},
			want:        []string{CheckGoroutineLeak},
			wantSkipped: faultChecks,
		},
		{
			name:        "warm_fails",
			build:       func(t *testing.T, h *MockTTSHarness) providers.TTS { return WarmFailsTTS(referenceTTS(h)) },
			want:        []string{CheckWarm},
			wantSkipped: faultChecks,
		},
		{
			name:        "truncated",
			build:       func(t *testing.T, h *MockTTSHarness) providers.TTS { return Truncated(referenceTTS(h)) },
			want:        []string{CheckAudioAndWords, CheckFlush},
			wantSkipped: faultChecks,
		},
		{
			name: "wrong_deadlines",
			build: func(t *testing.T, h *MockTTSHarness) providers.TTS {
				return mustTTS(TTSWithDeadlines(h.Provider(), Uniform(h.IOTimeout()/4)))
			},
			wantSkipped: faultChecks,
		},
		{
			// The held-text stall faults the service and is skipped; the
			// slow-LLM check faults nothing and still runs (and fails
			// over the reference, whose Push owes an answer).
			name:        "holds_text",
			build:       inProcessReference,
			holds:       true,
			want:        []string{CheckHeldTextSlowLLM},
			wantSkipped: append(slices.Clone(faultChecks), CheckTimeoutHeldStalled),
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newTTSHarness(t, true)
				var injects int
				var hh TTSHarness = inProcessHarness{h, &injects}
				if tt.holds {
					hh = inProcessHolds{inProcessHarness{h, &injects}}
				}
				rep, err := RunTTS(t.Context(), tt.build(t, h), hh, Config{})
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("%v", rep)
				if injects != 0 {
					t.Errorf("Inject called %d times for an in-process engine", injects)
				}
				if got, want := len(rep.Checks), len(TTSCheckNamesFor(hh)); got != want {
					t.Fatalf("%d checks reported, want %d", got, want)
				}
				if got := failedNames(rep); !slices.Equal(got, tt.want) {
					t.Errorf("failed checks %q, want %q\n%v", got, tt.want, rep)
				}
				var skipped []string
				for _, c := range rep.Skipped() {
					skipped = append(skipped, c.Name)
					if c.Passed || c.Detail == "" {
						t.Errorf("skipped check %s: Passed %v, Detail %q", c.Name, c.Passed, c.Detail)
					}
				}
				if !slices.Equal(skipped, tt.wantSkipped) {
					t.Errorf("skipped checks %q, want %q", skipped, tt.wantSkipped)
				}
				if rep.Passed() != (len(tt.want) == 0) {
					t.Errorf("Passed() = %v with failures %q", rep.Passed(), tt.want)
				}
			})
		})
	}
}

// A report whose every check was skipped has not passed: nothing ran.
// Catches: Passed() as "no failures" alone.
func TestReportAllSkippedIsNotPassed(t *testing.T) {
	rep := Report{Kind: "tts", Checks: []CheckResult{{Name: CheckReconnect, Skipped: true, Detail: skipInProcess}}}
	if rep.Passed() {
		t.Errorf("a report of skipped checks only passed:\n%v", rep)
	}
	rep.Checks = append(rep.Checks, CheckResult{Name: CheckCancel, Passed: true})
	if !rep.Passed() {
		t.Errorf("one pass and one skip did not pass:\n%v", rep)
	}
}
