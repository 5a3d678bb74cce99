package elevenlabs_test

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/providers/contracttest"
	"github.com/brisvox/brisvox/providers/internal/speechtest"
	"github.com/brisvox/brisvox/providers/tts/elevenlabs"
	"github.com/brisvox/brisvox/providers/tts/elevenlabs/elevenlabsmock"
)

// contractIO is the adapter's connect and reply deadline, as the suite
// judges it.
const contractIO = 2 * time.Second

const contractKeyEnv = "BRISVOX_TEST_ELEVENLABS_CONTRACT_KEY"

// contractStyle is how the mock speaks under the suite: 20 ms of audio
// per character, one word per chunk, its alignment and its audio as two
// messages 40 ms apart (about real time), the first 240 ms after the
// flush. The suite counts its faults in events, so one message must be one
// event (seed: "one frame is one event"); the service puts a chunk's
// alignment and audio in one message, which the adapter turns into two
// events or more, and TestContractSuiteOverTheRealMessageShape shows what
// that does. The latency is the service's time to first audio: the
// starting points of the reply deadline (the flush, the last message) are
// then apart by more than the suite's 100 ms slack, so a deadline armed at
// the wrong one is caught.
var contractStyle = elevenlabsmock.Style{
	CharDuration:      20 * time.Millisecond,
	Latency:           240 * time.Millisecond,
	Pace:              40 * time.Millisecond,
	SeparateAlignment: true,
}

// mockHarness is the contract suite's TTSHarness over elevenlabsmock: a
// providertest.Fault is the wsmock fault of the next handshake (contractFaults).
// The service reports word times (EmitsWords) and the adapter opens its
// socket at Connect (FaultsAtConnect): the defaults.
type mockHarness struct {
	contracttest.TTSDefaults
	speechtest.Harness[*elevenlabsmock.Server]
	style elevenlabsmock.Style
}

var _ contracttest.TTSHarness = (*mockHarness)(nil)

// Reset drops the mock's faults and recorded messages and sets its style
// again (the mock's Reset clears it).
func (h *mockHarness) Reset() {
	h.Mock.Reset()
	h.Mock.SetStyle(h.style)
}

// contractFaults maps a suite fault to the mock's: BeforeEvent counts the
// messages the mock sends (alignment, audio, isFinal; one event each under
// SeparateAlignment), and a refusal answers the handshake with the
// service's error body.
var contractFaults = speechtest.FaultMap{
	RefuseBody: `{"detail":{"status":"contract_refusal","message":"refused by the contract suite"}}`,
}

// newContractRig starts the mock (speaking in style) on an in-memory
// listener and an adapter dialing it with contractIO as its connect and
// reply deadline (then mutate, if not nil, changes the config); the
// harness declares contractIO. It must run in a synctest bubble. Both are
// closed at the end of the test.
func newContractRig(t *testing.T, style elevenlabsmock.Style, mutate func(*elevenlabs.Config)) (*elevenlabs.Adapter, *mockHarness) {
	t.Helper()
	srv, dial := speechtest.Pipe(t, elevenlabsmock.New)
	t.Setenv(contractKeyEnv, "xi-contract-key")
	a := speechtest.NewAdapter(t, elevenlabs.New, elevenlabs.Config{
		URL:            srv.URL(),
		APIKeyEnv:      contractKeyEnv,
		ConnectTimeout: contractIO,
		ReplyTimeout:   contractIO,
		DialContext:    dial,
	}, mutate)
	return a, &mockHarness{Harness: speechtest.Harness[*elevenlabsmock.Server]{Mock: srv, Faults: contractFaults, IO: contractIO}, style: style}
}

// runContract runs the TTS suite over a fresh rig in a synctest bubble and
// returns the names of the failed checks; the report is logged.
func runContract(t *testing.T, style elevenlabsmock.Style, mutate func(*elevenlabs.Config)) []string {
	t.Helper()
	var failed []string
	synctest.Test(t, func(t *testing.T) {
		a, h := newContractRig(t, style, mutate)
		failed = speechtest.FailedChecks(speechtest.RunTTS(t, a, h))
	})
	return failed
}

// TestContractSuiteOverTheMock runs the TTS contract suite over the
// adapter and elevenlabsmock, joined by an in-memory pipe inside a
// synctest bubble, so every deadline is judged in virtual time (20.4-20.5 s of
// it, a few real milliseconds); the bubble fails the test if a goroutine
// is left. Mutations seen failing it (applied, run, reverted): the words
// of a message without audio dropped (audio_and_words and flush: no
// words; timeout/idle: the stalled message is then the first event); the
// reply deadline not re-armed at each message, left where the flush armed
// it (timeout/idle: a Timeout 1.76 s after the last event; caught only
// thanks to the mock's 240 ms latency). Not seen by the suite: a reply
// deadline armed at Push (the suite pushes and flushes in one instant; a
// bare text owes nothing, seed and docs/providers/elevenlabs.md);
// TestReplyDeadlines catches that one.
func TestContractSuiteOverTheMock(t *testing.T) {
	if failed := runContract(t, contractStyle, nil); len(failed) > 0 {
		t.Fatalf("the adapter breaks the contract: %q", failed)
	}
}

// The real message shape (a chunk's alignment and audio in one message)
// passes every check but timeout/idle: its stall before the mock's second
// message lets the first message's second event (its audio, after its
// word) through, which the suite reads as an event that came through the
// stall. That is the harness assumption of the seed (one frame, one
// event), not the adapter; the adapter's own gap test (TestReplyDeadlines)
// covers the idle gap with the real shape. Catches: a suite or mock
// change that makes the real shape pass the idle check (the check would
// then not be stalling where it says) or fail another one.
func TestContractSuiteOverTheRealMessageShape(t *testing.T) {
	style := contractStyle
	style.SeparateAlignment = false
	if failed, want := runContract(t, style, nil), []string{contracttest.CheckTimeoutIdle}; !slices.Equal(failed, want) {
		t.Fatalf("failed checks %q, want %q", failed, want)
	}
}

// The suite bites on this adapter: one whose deadlines are not the ones
// its harness declares fails exactly the timeout checks those deadlines
// govern, and one that cannot open a context while a cancelled one drains
// fails exactly cancel; nothing else.
func TestContractSuiteCatchesABrokenAdapter(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*elevenlabs.Config)
		want   []string
	}{
		{
			// A reply deadline of 3 s: the stalled first audio and the
			// idle gap time out 1 s late.
			name:   "reply_deadline_3s",
			mutate: func(c *elevenlabs.Config) { c.ReplyTimeout = 3 * time.Second },
			want:   []string{contracttest.CheckTimeoutFirst, contracttest.CheckTimeoutIdle},
		},
		{
			// A reply deadline of 1.5 s: the stalls time out 500 ms
			// early; the first audio late by 1 s (1.24 s after the flush)
			// still comes in time.
			name:   "reply_deadline_1500ms",
			mutate: func(c *elevenlabs.Config) { c.ReplyTimeout = 1500 * time.Millisecond },
			want:   []string{contracttest.CheckTimeoutFirst, contracttest.CheckTimeoutIdle},
		},
		{
			// A reply deadline of 1.2 s: the first audio late by 1 s
			// plus the service's 240 ms is cut off too.
			name:   "reply_deadline_1200ms",
			mutate: func(c *elevenlabs.Config) { c.ReplyTimeout = 1200 * time.Millisecond },
			want:   []string{contracttest.CheckTimeoutFirst, contracttest.CheckTimeoutFirstSlow, contracttest.CheckTimeoutIdle},
		},
		{
			// One context per socket: a cancelled context keeps its slot
			// until the service's isFinal, so the next answer right after
			// the cancel is refused (ErrTooManyContexts). A barge-in
			// would leave the bot mute for the rest of the old answer.
			name:   "one_context_per_socket",
			mutate: func(c *elevenlabs.Config) { c.MaxContexts = 1 },
			want:   []string{contracttest.CheckCancel},
		},
		{
			// A connect deadline of 3 s: the stalled connect gives up
			// 1 s late.
			name:   "connect_deadline_3s",
			mutate: func(c *elevenlabs.Config) { c.ConnectTimeout = 3 * time.Second },
			want:   []string{contracttest.CheckTimeoutConnect},
		},
		{
			// A connect deadline of 800 ms: the stalled connect gives up
			// early and the connect slow by 1 s is cut off.
			name:   "connect_deadline_800ms",
			mutate: func(c *elevenlabs.Config) { c.ConnectTimeout = 800 * time.Millisecond },
			want:   []string{contracttest.CheckTimeoutConnect, contracttest.CheckTimeoutConnectSlow},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if failed := runContract(t, contractStyle, tc.mutate); !slices.Equal(failed, tc.want) {
				t.Fatalf("failed checks %q, want %q", failed, tc.want)
			}
		})
	}
}
