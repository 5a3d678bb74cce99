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
//   - the live runs' gate and reads (SkipUnlessLive, NextWithoutWords).
//
// The helpers fail the test they are given, with t.Fatal where reading on
// would make no sense. The package is imported by tests only
// (TestImportedOnlyByTests checks it): it imports package testing. Nor does
// it import sim: archtest's production-without-sim rule holds for every
// package under providers/, so each adapter's contract_test.go keeps its
// own mapping of the contract suite's sim.Fault onto wsmock.Fault.
package speechtest
