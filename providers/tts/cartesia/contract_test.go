package cartesia_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/providers/contracttest"
	"github.com/brisvox/brisvox/providers/internal/speechtest"
	"github.com/brisvox/brisvox/providers/tts/cartesia"
	"github.com/brisvox/brisvox/providers/tts/cartesia/cartesiamock"
)

// contractIO is the adapter's connect and reply deadline, as the suite
// judges it.
const contractIO = 2 * time.Second

// contractPace is the mock's wait before each message, as a synthesizer
// speaking about real time: the starting points of the reply deadline (the
// text sent, the last message received) are then apart by more than the
// suite's 100 ms slack, so a deadline armed at the wrong one is caught.
// Not a multiple of the cancel check's 50 ms settle, so no message falls
// due at the very instant of the cancel.
const contractPace = 240 * time.Millisecond

const contractKeyEnv = "BRISVOX_TEST_CARTESIA_CONTRACT_KEY"

// mockHarness is the contract suite's TTSHarness over cartesiamock: a
// providertest.Fault is the wsmock fault of the next handshake (contractFaults).
// The adapter opens its websocket at Connect and the mock reports word
// times, so the defaults of TTSDefaults hold.
type mockHarness struct {
	contracttest.TTSDefaults
	speechtest.Harness[*cartesiamock.Server]
	voice cartesiamock.Voice
}

var _ contracttest.TTSHarness = (*mockHarness)(nil)

// Reset drops the faults not yet used and restores the harness's voice
// (the mock's Reset sets the default one).
func (h *mockHarness) Reset() {
	h.Mock.Reset()
	h.Mock.SetVoice(h.voice)
}

// contractFaults maps a suite fault to the mock's: BeforeEvent counts the
// messages sent with Conn.Send (a word's timestamps and its audio chunk are
// separate messages, one event each; done is the Flushed), and a refusal
// answers with the service's error body.
var contractFaults = speechtest.FaultMap{
	RefuseBody: `{"error_code":"contract","title":"Refused by the contract suite"}`,
}

// newContractRig starts the mock on an in-memory listener, speaking with
// voice, and an adapter dialing it with io as its connect and reply
// deadline (then mutate, if not nil, changes the config); the harness
// declares io. It must run in a synctest bubble. Both are closed at the
// end of the test.
func newContractRig(t *testing.T, io time.Duration, voice cartesiamock.Voice, mutate func(*cartesia.Config)) (*cartesia.Adapter, *mockHarness) {
	t.Helper()
	srv, dial := speechtest.Pipe(t, cartesiamock.New)
	t.Setenv(contractKeyEnv, "sk_car_contract-key")
	a := speechtest.NewAdapter(t, cartesia.New, cartesia.Config{
		URL:            srv.URL(),
		APIKeyEnv:      contractKeyEnv,
		ConnectTimeout: io,
		ReplyTimeout:   io,
		DialContext:    dial,
	}, mutate)
	return a, &mockHarness{Harness: speechtest.Harness[*cartesiamock.Server]{Mock: srv, Faults: contractFaults, IO: io}, voice: voice}
}

// TestContractSuiteOverTheMock runs the TTS contract suite over the
// adapter and cartesiamock, joined by an in-memory pipe inside a synctest
// bubble, so every deadline is judged in virtual time (47-50 s of it
// paced, 11.6-13.7 s unpaced, the spread all in the leak check's wait for
// a stable count; 60-80 real ms each); the bubble fails the test if a
// goroutine is left. Paced (one message per 240 ms, as a
// synthesizer, each word's audio in two chunks), unpaced (the whole
// context at once, as a synthesizer faster than real time: the pending
// queue is full at the cancel). Not run here: the mock's IgnoreCancel,
// whose one queue per session would serve the next context only after
// the 40 cancelled words (TestCancelDropsWhatTheServiceStillSends
// covers it). Mutations of the adapter seen failing it (applied, run,
// reverted): the reply deadline not moved by each message (paced:
// timeout/idle, a Timeout 1.76 s after the last event read, seen thanks to
// the pace; and every context longer than 2 s cut off); the cancelled
// context's pending events not taken back (unpaced: cancel, 15 events
// after it); no Cancelled ack (cancel); the failure event not delivered
// before Events closes (error_mapping, reconnect, the stall checks). Not
// seen by the suite over this mock, which honours the cancel: the reader
// not dropping the messages of a cancelled context (the adapter's own
// TestCancelDropsWhatTheServiceStillSends catches it).
func TestContractSuiteOverTheMock(t *testing.T) {
	for _, tc := range []struct {
		name  string
		voice cartesiamock.Voice
	}{
		{"paced", cartesiamock.Voice{Pace: contractPace, ChunksPerWord: 2}},
		{"unpaced", cartesiamock.Voice{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, h := newContractRig(t, contractIO, tc.voice, nil)
				if rep := speechtest.RunTTS(t, a, h); !rep.Passed() {
					t.Fatalf("the adapter breaks the contract:\n%s", rep)
				}
			})
		})
	}
}

// The suite bites on this adapter: one whose deadlines are not the ones
// its harness declares fails exactly the timeout checks those deadlines
// govern, and nothing else.
func TestContractSuiteCatchesWrongDeadlines(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*cartesia.Config)
		want   []string
	}{
		{
			// A reply deadline of 3 s: the stalled first event and the
			// idle gap time out 1 s late.
			name:   "reply_deadline_3s",
			mutate: func(c *cartesia.Config) { c.ReplyTimeout = 3 * time.Second },
			want:   []string{contracttest.CheckTimeoutFirst, contracttest.CheckTimeoutIdle},
		},
		{
			// A reply deadline of 1.5 s: the stalls time out 500 ms
			// early; the first event late by 1 s still comes in time.
			name:   "reply_deadline_1500ms",
			mutate: func(c *cartesia.Config) { c.ReplyTimeout = 1500 * time.Millisecond },
			want:   []string{contracttest.CheckTimeoutFirst, contracttest.CheckTimeoutIdle},
		},
		{
			// A connect deadline of 800 ms: the stalled connect gives up
			// early and the connect slow by 1 s is cut off.
			name:   "connect_deadline_800ms",
			mutate: func(c *cartesia.Config) { c.ConnectTimeout = 800 * time.Millisecond },
			want:   []string{contracttest.CheckTimeoutConnect, contracttest.CheckTimeoutConnectSlow},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, h := newContractRig(t, contractIO, cartesiamock.Voice{Pace: contractPace}, tc.mutate)
				speechtest.WantFailed(t, speechtest.RunTTS(t, a, h), tc.want)
			})
		})
	}
}

// The harness must declare the adapter as it is: Cartesia opens its
// websocket at Connect (FaultsAtConnect true) and reports word times
// (EmitsWords true). Declared otherwise, the suite fails exactly the
// checks that the declaration steers.
func TestContractSuiteCatchesAWrongDeclaration(t *testing.T) {
	for _, tc := range []struct {
		name    string
		declare func(contracttest.TTSHarness) contracttest.TTSHarness
		want    []string
	}{
		{
			// The refusals and the stalled connect come from Connect, not
			// as the error event after the first text. (Before the suite's
			// fix 60f642d nothing failed here: the Connect error was
			// wrapped with %w into the failure and still matched.)
			name:    "opens_nothing_at_connect",
			declare: contracttest.OpensNothingAtConnect,
			want:    []string{contracttest.CheckErrorMapping, contracttest.CheckTimeoutConnect},
		},
		{
			// The words the adapter reports are made up for a service
			// declared to have none.
			name:    "declares_no_words",
			declare: contracttest.DeclaresNoWords,
			want:    []string{contracttest.CheckAudioAndWords, contracttest.CheckFlush},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, h := newContractRig(t, contractIO, cartesiamock.Voice{Pace: contractPace}, nil)
				speechtest.WantFailed(t, speechtest.RunTTS(t, a, tc.declare(h)), tc.want)
			})
		})
	}
}
