// Package speechtest is the test support that the streaming speech
// adapters' tests share (Deepgram STT, Cartesia, ElevenLabs, Aura, and the
// OpenAI speech adapter for its event reads and live run):
//
//   - the rig: an adapter on its vendor mock over an in-memory listener,
//     inside a testing/synctest bubble, both closed at the end of the test
//     (Pipe, NewAdapter, Connect; Dials counts what the adapter dials);
//   - event reads with a virtual-time bound (Next, TTSUntil), and reads up
//     to a session's failure that check nothing follows it (Failure,
//     STTFailure, TTSFailure);
//   - the checks every websocket adapter owes: a refused handshake keeps
//     its status and the service's code, the connect has its deadline, Warm
//     leaves its connection for Connect (CheckRefused, CheckConnectDeadline,
//     CheckWarm), a decoder's errors are Protocol errors that do not quote
//     the message (CheckDecodeErr);
//   - the live runs' gate and reads (SkipUnlessLive, NextWithoutWords);
//   - the contract suite's plumbing over a wsmock vendor mock: the mapping
//     of the suite's providertest.Fault onto wsmock.Fault (FaultMap: each
//     service gives its refusal body, and says whether a stall answers
//     pings), the
//     harness part every adapter shares (Harness: Inject and IOTimeout),
//     the suite's run with its count of checks (RunSTT, RunTTS) and the
//     failed checks (FailedChecks, WantFailed). Each adapter's
//     contract_test.go keeps what is its own: its mock's Reset and
//     settings, Script, its declarations, what its mock counts as an event.
//
// The helpers fail the test they are given, with t.Fatal where reading on
// would make no sense. The package is test support by its name: it imports
// package testing, so only tests import it (TestImportedOnlyByTests checks
// it). It imports the providers, their fakes' fault vocabulary
// (providertest) and the conformance suite (contracttest), and nothing of
// the runtime: an adapter's tests compile no actor through it.
package speechtest
