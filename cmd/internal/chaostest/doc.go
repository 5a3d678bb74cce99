// Package chaostest is the chaos suite at scale in real time: Run starts a
// serve.Server with the production call tree and the PCM websocket
// transport on 127.0.0.1, and N real-time callers of its own place calls
// over loopback websockets. Each call is a scripted conversation with
// mock providers and at most one seeded fault (a provider disconnect or
// stall, an error status, a slow client, a panic in a stage, a hang-up
// at a random point). Every call's invariants are checked from what its
// caller received and what the server reported (serve.Config.Observe):
// no stale audio after an interrupt, the model's context is what was
// heard, a SideEffect tool ran at most once and its result reached the
// model, the call ended with a reason. The run reports the healthy
// calls' engine-added latency and the goroutines and heap left after it.
//
// It is test support and bench code (TestChaosRealtime, brisvox-bench
// chaos), never linked into brisvox serve. The virtual-time chaos suite
// is sim's TestChaos.
package chaostest
