package contracttest

import (
	"time"

	"github.com/brisvox/brisvox/providers/providertest"
)

// Call is a scripted tool call: the provider streams it as one or more
// fragments, the first carrying ID and Name, whose Args join to Args.
type Call struct {
	ID, Name string
	// Args is the call's JSON arguments.
	Args string
}

// Response is a scripted answer: Text as text deltas (the suite writes one
// word per delta; a provider may cut it differently, the deltas must join
// to Text), then Calls.
type Response struct {
	Text  string
	Calls []Call
}

// LLMHarness drives the service behind an LLM adapter under test:
// providertest's MockLLM (MockHarness) or an adapter's mock server.
type LLMHarness interface {
	// Reset drops what is scripted or injected and not yet used; the suite
	// calls it at the start of every check.
	Reset()
	// Script queues r as the answer to the next stream.
	Script(r Response)
	// Inject queues f for the next stream: FaultReject refuses it,
	// FaultConnectStall delays its connect, FaultDisconnect, FaultProtocol,
	// FaultStall and FaultDelay act before its event BeforeEvent.
	Inject(f providertest.Fault)
	// EventsSent counts the response events the service has produced so
	// far, over all streams: the cancel check reads it to see whether
	// generation goes on after a drop.
	EventsSent() int
	// IOTimeout is the deadline the adapter was configured with, for the
	// connect, the first event and every later gap.
	IOTimeout() time.Duration
}

// STTHarness drives the service behind an STT adapter under test:
// providertest's MockSTT (MockSTTHarness) or an adapter's mock server. The
// suite sends speech as a 250 Hz square wave at amplitude 8000, PCM16 mono at
// SampleRate, far above any speech threshold: in 20 ms frames every 20 ms
// while it streams, or as one 100 ms burst followed by Finalize. The
// service recognizes the scripted utterances from it.
type STTHarness interface {
	// Reset drops what is scripted or injected and not yet used; the suite
	// calls it at the start of every check (and between the cases of
	// error_mapping).
	Reset()
	// Script queues text as the next utterance: the service recognizes it
	// from the speech it hears, one interim with a growing prefix of it per
	// stretch of speech (the mock: one word more per 200 ms of speech), and
	// the whole text as the final of the next Finalize that follows speech.
	// Whether a 100 ms burst yields an interim before its final is the
	// service's business: the suite accepts both.
	// The suite calls it after Reset and before the check's first Connect.
	Script(text string)
	// Inject queues f for the next session: FaultReject refuses its
	// connect, FaultConnectStall delays it, FaultDisconnect, FaultProtocol,
	// FaultStall and FaultDelay act before the session's event BeforeEvent
	// (counted over every event the service sends, interims included).
	Inject(f providertest.Fault)
	// IOTimeout is the deadline the adapter was configured with, for the
	// connect, the first event owed and every later gap while events are
	// owed.
	IOTimeout() time.Duration
	// SampleRate is the rate the adapter was configured with: the suite
	// sends PCM16 mono at this rate.
	SampleRate() int
}

// TTSHarness drives the service behind a TTS adapter under test:
// providertest's MockTTS (MockTTSHarness) or an adapter's mock server.
// There is no
// Script: a synthesizer speaks the text it is pushed, one word event per
// word (when it reports words) with the word's audio after it. The suite
// pushes plain lower-case words separated by single spaces, so a service
// has no punctuation or numbers to normalize.
//
// Embed TTSDefaults for the defaults of EmitsWords and FaultsAtConnect.
type TTSHarness interface {
	// Reset drops what is injected and not yet used; the suite calls it at
	// the start of every check (and between the cases of error_mapping).
	Reset()
	// Inject queues f for the next session: FaultReject refuses its
	// connect, FaultConnectStall delays it (both act on the session's first
	// request instead when FaultsAtConnect is false), FaultDisconnect,
	// FaultProtocol, FaultStall and FaultDelay act before the session's
	// event BeforeEvent. One frame of the service must be one event (the
	// alignment of a word and its audio in separate messages), or the
	// event counts of the faults do not match the adapter's events.
	Inject(f providertest.Fault)
	// IOTimeout is the deadline the adapter was configured with, for the
	// connect, the first event owed and every later gap while a context is
	// open or a cancel is unacknowledged.
	IOTimeout() time.Duration
	// EmitsWords is false for a service without word times: the suite then
	// demands that no Word event is made up and skips the comparison of
	// words with the audio. TTSDefaults: true.
	EmitsWords() bool
	// FaultsAtConnect is false for an adapter that opens nothing at
	// Connect (one request per text piece): a refused or stalled connect
	// then surfaces as the error event after the first text (Rejected,
	// Timeout within the deadline counted from the Push and Flush) instead
	// of from Connect. TTSDefaults: true.
	FaultsAtConnect() bool
}

// TTSDefaults gives a TTSHarness the defaults of EmitsWords and
// FaultsAtConnect (both true); embed it and override what differs.
type TTSDefaults struct{}

// EmitsWords is true: the service reports word times.
func (TTSDefaults) EmitsWords() bool { return true }

// FaultsAtConnect is true: the adapter opens its connection at Connect.
func (TTSDefaults) FaultsAtConnect() bool { return true }
