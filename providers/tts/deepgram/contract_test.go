package aura_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/providers/contracttest"
	"github.com/brisvox/brisvox/providers/internal/speechtest"
	aura "github.com/brisvox/brisvox/providers/tts/deepgram"
	"github.com/brisvox/brisvox/providers/tts/deepgram/auramock"
)

// contractIO is the adapter's connect and reply deadline, as the suite
// judges it.
const contractIO = 2 * time.Second

const contractKeyEnv = "BRISVOX_TEST_AURA_CONTRACT_KEY"

// contractVoice paces the mock like a real synthesizer: 200 ms words in
// five 40 ms frames, one frame per 40 ms.
var contractVoice = auramock.Voice{WordDuration: 200 * time.Millisecond, ChunksPerWord: 5, Pace: 40 * time.Millisecond}

// mockHarness is the contract suite's TTSHarness over auramock: a
// providertest.Fault is the wsmock fault of the next handshake (contractFaults).
// The service has no word times, and its adapter holds text on the server
// unflushed (under PerTurn; under PerText a Push is flushed at once, and
// the held-text checks must pass all the same).
type mockHarness struct {
	speechtest.Harness[*auramock.Server]
}

var (
	_ contracttest.TTSHarness   = (*mockHarness)(nil)
	_ contracttest.TTSHoldsText = (*mockHarness)(nil)
)

func (h *mockHarness) Reset() {
	h.Mock.Reset()
	h.Mock.SetVoice(contractVoice)
}
func (h *mockHarness) EmitsWords() bool      { return false }
func (h *mockHarness) FaultsAtConnect() bool { return true }
func (h *mockHarness) HoldsText() bool       { return true }

// contractFaults maps a suite fault to the mock's: BeforeEvent counts the
// messages sent with Send or SendBinary (audio frames and Flushed; the
// Metadata on connect is not counted), a refusal answers with the
// service's error body, and a stall is a hung server that answers no ping
// either.
var contractFaults = speechtest.FaultMap{
	RefuseBody:  `{"err_code":"CONTRACT","err_msg":"refused by the contract suite"}`,
	StallNoPong: true,
}

// newContractRig starts the mock on an in-memory listener and an adapter
// dialing it with io as its connect and reply deadline under policy (then
// mutate, if not nil, changes the config). It must run in a synctest
// bubble; both are closed at the end of the test.
func newContractRig(t *testing.T, policy aura.FlushPolicy, mutate func(*aura.Config)) (*aura.Adapter, *mockHarness) {
	t.Helper()
	srv, dial := speechtest.Pipe(t, auramock.New)
	t.Setenv(contractKeyEnv, "dg-contract-key")
	a := speechtest.NewAdapter(t, aura.New, aura.Config{
		URL:            srv.URL(),
		APIKeyEnv:      contractKeyEnv,
		FlushPolicy:    policy,
		ConnectTimeout: contractIO,
		ReplyTimeout:   contractIO,
		DialContext:    dial,
	}, mutate)
	return a, &mockHarness{speechtest.Harness[*auramock.Server]{Mock: srv, Faults: contractFaults, IO: contractIO}}
}

// runSuite runs the TTS suite over a rig; the harness must declare the two
// held-text checks on top of the suite's.
func runSuite(t *testing.T, a *aura.Adapter, h *mockHarness) contracttest.Report {
	t.Helper()
	if got, want := len(contracttest.TTSCheckNamesFor(h)), len(contracttest.TTSCheckNames())+2; got != want {
		t.Fatalf("the harness owes %d checks, want %d: the suite's and the two held-text checks", got, want)
	}
	return speechtest.RunTTS(t, a, h)
}

// TestContractSuiteOverTheMock runs the TTS contract suite (the held-text
// checks included) over the adapter and auramock, joined by an in-memory
// pipe in a synctest bubble, under both flush policies; both must pass in
// full. Mutations seen failing it (applied, run, reverted) are listed on
// TestContractSuiteCatchesBrokenVariants and in the wire tests.
func TestContractSuiteOverTheMock(t *testing.T) {
	for _, policy := range []aura.FlushPolicy{aura.PerText, aura.PerTurn} {
		t.Run(policy.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, h := newContractRig(t, policy, nil)
				h.Reset()
				if rep := runSuite(t, a, h); !rep.Passed() {
					t.Fatalf("the adapter breaks the contract:\n%s", rep)
				}
			})
		})
	}
}

// The suite bites on this adapter: a variant without the ping probe
// (ProbeInterval and the probe off: aura.DisableProbe for tests) fails
// exactly timeout/held_text_stalled under PerTurn (a hung server with a
// held text is waited for until the suite's bound) and nothing under
// PerText (every Push is flushed, so an answer is owed); wrong deadlines
// fail exactly the timeout checks they govern.
func TestContractSuiteCatchesBrokenVariants(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy aura.FlushPolicy
		mutate func(*aura.Config)
		want   []string
	}{
		{
			name:   "per_turn_no_probe",
			policy: aura.PerTurn,
			mutate: aura.WithoutProbe,
			want:   []string{contracttest.CheckTimeoutHeldStalled},
		},
		{
			name:   "per_text_no_probe",
			policy: aura.PerText,
			mutate: aura.WithoutProbe,
		},
		{
			// A reply deadline of 3 s: every stall times out 1 s late.
			name:   "reply_deadline_3s",
			policy: aura.PerTurn,
			mutate: func(c *aura.Config) { c.ReplyTimeout = 3 * time.Second },
			want:   []string{contracttest.CheckTimeoutFirst, contracttest.CheckTimeoutIdle, contracttest.CheckTimeoutHeldStalled},
		},
		{
			// A connect deadline of 800 ms: the stalled connect gives up
			// early and the connect slow by 1 s is cut off.
			name:   "connect_deadline_800ms",
			policy: aura.PerText,
			mutate: func(c *aura.Config) { c.ConnectTimeout = 800 * time.Millisecond },
			want:   []string{contracttest.CheckTimeoutConnect, contracttest.CheckTimeoutConnectSlow},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, h := newContractRig(t, tc.policy, tc.mutate)
				h.Reset()
				speechtest.WantFailed(t, runSuite(t, a, h), tc.want)
			})
		})
	}
}
