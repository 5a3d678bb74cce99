package deepgram_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/providers/contracttest"
	"github.com/brisvox/brisvox/providers/internal/speechtest"
	"github.com/brisvox/brisvox/providers/stt/deepgram"
	"github.com/brisvox/brisvox/providers/stt/deepgram/deepgrammock"
)

// contractIO is the adapter's connect and result deadline, as the suite
// judges it.
const contractIO = 2 * time.Second

// contractRate is the sample rate of the adapter and of the suite's speech.
const contractRate = 16000

// contractLatency is the mock's time from an audio frame or Finalize to
// the result it causes, as the service's recognition latency: the
// starting points of the adapter's deadlines (the audio sent, the last
// result received) are then apart by more than the suite's 100 ms slack,
// so a deadline armed at the wrong one is caught. A multiple of the
// suite's 20 ms frame: the cancel check hangs up 350 ms after its first
// frame, and a result falling due at that very instant would race the
// hang-up (at 250 ms the frame of 100 ms did, failing cancel about one run
// in ten).
const contractLatency = 240 * time.Millisecond

const contractKeyEnv = "BRISVOX_TEST_DEEPGRAM_CONTRACT_KEY"

// mockHarness is the contract suite's STTHarness over deepgrammock: a
// scripted text is the next utterance, a providertest.Fault the wsmock fault of the
// next handshake (contractFaults).
type mockHarness struct {
	speechtest.Harness[*deepgrammock.Server]
}

var _ contracttest.STTHarness = (*mockHarness)(nil)

func (h *mockHarness) Reset()             { h.Mock.Reset() }
func (h *mockHarness) Script(text string) { h.Mock.ScriptText(text) }
func (h *mockHarness) SampleRate() int    { return contractRate }

// contractFaults maps a suite fault to the mock's: BeforeEvent counts the
// messages sent with Conn.Send (every interim and final, one event each;
// the empty keep-alive interims are not sent that way), and a refusal
// answers with the service's error body.
var contractFaults = speechtest.FaultMap{
	RefuseBody: `{"err_code":"CONTRACT","err_msg":"refused by the contract suite"}`,
}

// newContractRig starts the mock on an in-memory listener and an adapter
// dialing it with io as its connect and result deadline (then mutate, if
// not nil, changes the config); the harness declares io. It must run in a
// synctest bubble. Both are closed at the end of the test.
func newContractRig(t *testing.T, io time.Duration, mutate func(*deepgram.Config)) (*deepgram.Adapter, *mockHarness) {
	t.Helper()
	srv, dial := speechtest.Pipe(t, deepgrammock.New)
	srv.SetLatency(contractLatency)
	t.Setenv(contractKeyEnv, "dg-contract-key")
	a := speechtest.NewAdapter(t, deepgram.New, deepgram.Config{
		URL:            srv.URL(),
		APIKeyEnv:      contractKeyEnv,
		SampleRate:     contractRate,
		ConnectTimeout: io,
		ResultTimeout:  io,
		DialContext:    dial,
	}, mutate)
	return a, &mockHarness{speechtest.Harness[*deepgrammock.Server]{Mock: srv, Faults: contractFaults, IO: io}}
}

// TestContractSuiteOverTheMock runs the STT contract suite over the
// adapter and deepgrammock, joined by an in-memory pipe inside a synctest
// bubble, so every deadline is judged in virtual time (13.5-15.7 s of it,
// a few real milliseconds); the bubble fails the test if a goroutine is
// left. Mutations seen failing it (applied, run, reverted): the result
// deadline not re-armed after each result (timeout/idle: a Timeout 1.76 s
// after the last event; caught only thanks to the mock's latency), re-armed
// on every audio frame (timeout/idle: no Timeout while speech streams in),
// from_finalize not decoded (streaming, reconnect, the slow checks and the
// leak check: no final), the failure event swallowed at the session's end
// (error_mapping, reconnect, the stall checks), the mock's final without
// speech_final (streaming).
func TestContractSuiteOverTheMock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, h := newContractRig(t, contractIO, nil)
		if rep := speechtest.RunSTT(t, a, h); !rep.Passed() {
			t.Fatalf("the adapter breaks the contract:\n%s", rep)
		}
	})
}

// The suite bites on this adapter: one whose deadlines are not the ones
// its harness declares fails exactly the timeout checks those deadlines
// govern, and nothing else.
func TestContractSuiteCatchesWrongDeadlines(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*deepgram.Config)
		want   []string
	}{
		{
			// A result deadline of 3 s: the stalled first event and the
			// idle gap time out 1 s late.
			name:   "result_deadline_3s",
			mutate: func(c *deepgram.Config) { c.ResultTimeout = 3 * time.Second },
			want:   []string{contracttest.CheckTimeoutFirst, contracttest.CheckTimeoutIdle},
		},
		{
			// A result deadline of 1.5 s: the stalls time out 500 ms
			// early; the events late by 1 s still come in time.
			name:   "result_deadline_1500ms",
			mutate: func(c *deepgram.Config) { c.ResultTimeout = 1500 * time.Millisecond },
			want:   []string{contracttest.CheckTimeoutFirst, contracttest.CheckTimeoutIdle},
		},
		{
			// A connect deadline of 3 s: the stalled connect gives up
			// 1 s late.
			name:   "connect_deadline_3s",
			mutate: func(c *deepgram.Config) { c.ConnectTimeout = 3 * time.Second },
			want:   []string{contracttest.CheckTimeoutConnect},
		},
		{
			// A connect deadline of 800 ms: the stalled connect gives up
			// early and the connect slow by 1 s is cut off.
			name:   "connect_deadline_800ms",
			mutate: func(c *deepgram.Config) { c.ConnectTimeout = 800 * time.Millisecond },
			want:   []string{contracttest.CheckTimeoutConnect, contracttest.CheckTimeoutConnectSlow},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, h := newContractRig(t, contractIO, tc.mutate)
				speechtest.WantFailed(t, speechtest.RunSTT(t, a, h), tc.want)
			})
		})
	}
}
