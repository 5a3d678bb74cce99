package speechtest_test

import (
	"net/http"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/providers/contracttest"
	"github.com/brisvox/brisvox/providers/internal/speechtest"
	"github.com/brisvox/brisvox/providers/internal/wsmock"
	"github.com/brisvox/brisvox/providers/providertest"
)

// Every suite fault keeps its kind on the wsmock side, before the same
// message and for the same time; the refusal body and the stall's NoPong
// are the map's, on those kinds only. Mutations caught: a kind mapped to
// another kind (a disconnect as a stall, a delay as a stall), the
// refusal's status or body dropped, the body put on every fault, NoPong
// ignored or set on a delay too, BeforeEvent not clamped at 0, Duration not
// carried, a violation other than a message that is not JSON.
func TestFaultMap(t *testing.T) {
	const body = `{"code":"refused"}`
	plain := speechtest.FaultMap{RefuseBody: body}
	deaf := speechtest.FaultMap{RefuseBody: body, StallNoPong: true}
	for _, tc := range []struct {
		name string
		m    speechtest.FaultMap
		f    providertest.Fault
		want wsmock.Fault
	}{
		{
			name: "none",
			m:    deaf,
			f:    providertest.Fault{BeforeEvent: 2},
			want: wsmock.Fault{Fault: providertest.Fault{BeforeEvent: 2}},
		},
		{
			name: "reject",
			m:    plain,
			f:    providertest.Fault{Kind: providertest.FaultReject, Status: http.StatusTooManyRequests},
			want: wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultReject, Status: http.StatusTooManyRequests}, RefuseBody: body},
		},
		{
			name: "connect_stall",
			m:    plain,
			f:    providertest.Fault{Kind: providertest.FaultConnectStall, Duration: time.Second},
			want: wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultConnectStall, Duration: time.Second}},
		},
		{
			name: "disconnect",
			m:    deaf,
			f:    providertest.Fault{Kind: providertest.FaultDisconnect, BeforeEvent: 3},
			want: wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultDisconnect, BeforeEvent: 3}},
		},
		{
			name: "disconnect_before_the_first",
			m:    plain,
			f:    providertest.Fault{Kind: providertest.FaultDisconnect, BeforeEvent: -1},
			want: wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultDisconnect}},
		},
		{
			name: "stall",
			m:    plain,
			f:    providertest.Fault{Kind: providertest.FaultStall, BeforeEvent: 1},
			want: wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultStall, BeforeEvent: 1}},
		},
		{
			name: "stall_without_pong",
			m:    deaf,
			f:    providertest.Fault{Kind: providertest.FaultStall, BeforeEvent: 1, Duration: 3 * time.Second},
			want: wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultStall, BeforeEvent: 1, Duration: 3 * time.Second}, NoPong: true},
		},
		{
			name: "delay",
			m:    deaf,
			f:    providertest.Fault{Kind: providertest.FaultDelay, BeforeEvent: 4, Duration: time.Second},
			want: wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultDelay, BeforeEvent: 4, Duration: time.Second}},
		},
		{
			name: "protocol",
			m:    deaf,
			f:    providertest.Fault{Kind: providertest.FaultProtocol, BeforeEvent: 5},
			want: wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultProtocol, BeforeEvent: 5}, Violation: wsmock.ViolateMalformed},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.m.Map(tc.f); got != tc.want {
				t.Errorf("Map(%+v) = %+v, want %+v", tc.f, got, tc.want)
			}
		})
	}
}

// injections records the faults queued on it, as a vendor mock's Inject
// would queue them.
type injections struct{ faults []wsmock.Fault }

func (m *injections) Inject(f wsmock.Fault) { m.faults = append(m.faults, f) }

// Mutations caught: Inject queuing the suite's fault unmapped (or mapped
// with a zero FaultMap: no body), or not at all; IOTimeout not the
// declared deadline.
func TestHarness(t *testing.T) {
	m := &injections{}
	h := speechtest.Harness[*injections]{Mock: m, Faults: speechtest.FaultMap{RefuseBody: "B"}, IO: 1500 * time.Millisecond}
	h.Inject(providertest.Fault{Kind: providertest.FaultReject, Status: http.StatusServiceUnavailable})
	want := []wsmock.Fault{{Fault: providertest.Fault{Kind: providertest.FaultReject, Status: http.StatusServiceUnavailable}, RefuseBody: "B"}}
	if !slices.Equal(m.faults, want) {
		t.Errorf("queued %+v, want %+v", m.faults, want)
	}
	if got := h.IOTimeout(); got != 1500*time.Millisecond {
		t.Errorf("IOTimeout %v, want 1.5s", got)
	}
}

// sttNoIO and ttsNoIO are harnesses whose declared deadline (none) the
// suite refuses with an error.
type sttNoIO struct{ *contracttest.MockSTTHarness }

func (sttNoIO) IOTimeout() time.Duration { return 0 }

type ttsNoIO struct{ *contracttest.MockTTSHarness }

func (ttsNoIO) IOTimeout() time.Duration { return 0 }

// RunSTT over the simulator's reference mock reports every check of the
// suite, passed, and reports nothing; a suite error stops the test.
// Mutations caught: the suite's error let through; the count of checks
// taken from the TTS suite (11 ran, want 12).
func TestRunSTT(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, err := contracttest.NewMockSTTHarness(contracttest.MockSTTHarnessConfig{
			STT: providertest.STTConfig{ConnectLatency: 50 * time.Millisecond},
		})
		if err != nil {
			t.Fatal(err)
		}
		p, err := contracttest.STTWithDeadlines(h.Provider(), contracttest.Uniform(h.IOTimeout()))
		if err != nil {
			t.Fatal(err)
		}
		var rep contracttest.Report
		run(t, func(tb testing.TB) { rep = speechtest.RunSTT(tb, p, h) }).want(t, "", false)
		if !rep.Passed() || len(rep.Checks) != len(contracttest.STTCheckNames()) {
			t.Errorf("the reference mock's report:\n%s", rep)
		}
		run(t, func(tb testing.TB) { speechtest.RunSTT(tb, p, sttNoIO{h}) }).want(t, "io timeout", true)
	})
}

// RunTTS owes the checks its harness declares: the suite's, and the two
// held-text checks for a harness that holds text; a suite error stops the
// test. Mutations caught: the suite's error let through; the count of
// checks taken from TTSCheckNames whatever the harness (14 ran, want 12,
// for the one that holds text) or from the STT suite. (The count guards
// against a suite that drops a check from its report; the suite as it is
// never does, so no run here can show the check missing.)
func TestRunTTS(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, err := contracttest.NewMockTTSHarness(contracttest.MockTTSHarnessConfig{
			TTS: providertest.TTSConfig{ConnectLatency: 50 * time.Millisecond, Paced: true},
		})
		if err != nil {
			t.Fatal(err)
		}
		p, err := contracttest.TTSWithDeadlines(h.Provider(), contracttest.Uniform(h.IOTimeout()))
		if err != nil {
			t.Fatal(err)
		}
		var rep contracttest.Report
		run(t, func(tb testing.TB) { rep = speechtest.RunTTS(tb, p, h) }).want(t, "", false)
		if !rep.Passed() || len(rep.Checks) != len(contracttest.TTSCheckNames()) {
			t.Errorf("the reference mock's report:\n%s", rep)
		}
		held := contracttest.HoldsText(h)
		run(t, func(tb testing.TB) { rep = speechtest.RunTTS(tb, p, held) }).want(t, "", false)
		if got, want := len(rep.Checks), len(contracttest.TTSCheckNames())+2; got != want {
			t.Errorf("%d checks reported for a harness that holds text, want %d", got, want)
		}
		run(t, func(tb testing.TB) { speechtest.RunTTS(tb, p, ttsNoIO{h}) }).want(t, "io timeout", true)
	})
}

// FailedChecks lists the failed checks in order, not the passed or the
// skipped ones; WantFailed stops the test unless they are exactly the
// ones wanted, in order. Mutations caught: skipped checks counted as
// failed, the order lost, WantFailed comparing only the count, or passing
// an empty want whatever failed.
func TestFailedChecks(t *testing.T) {
	rep := contracttest.Report{Kind: "tts", Checks: []contracttest.CheckResult{
		{Name: "a", Passed: true},
		{Name: "b", Detail: "broke"},
		{Name: "c", Skipped: true, Detail: "in process"},
		{Name: "d", Detail: "broke too"},
	}}
	if got, want := speechtest.FailedChecks(rep), []string{"b", "d"}; !slices.Equal(got, want) {
		t.Errorf("FailedChecks = %q, want %q", got, want)
	}
	if got := speechtest.FailedChecks(contracttest.Report{Checks: rep.Checks[:1]}); got != nil {
		t.Errorf("FailedChecks of a pass = %q, want nil", got)
	}
	for _, tc := range []struct {
		name   string
		want   []string
		report string // "" for none
	}{
		{"exact", []string{"b", "d"}, ""},
		{"none", nil, `failed checks ["b" "d"], want []`},
		{"other_order", []string{"d", "b"}, `want ["d" "b"]`},
		{"other_check", []string{"b", "c"}, `want ["b" "c"]`},
		{"one_missing", []string{"b"}, `want ["b"]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run(t, func(tb testing.TB) { speechtest.WantFailed(tb, rep, tc.want) }).want(t, tc.report, tc.report != "")
		})
	}
}
