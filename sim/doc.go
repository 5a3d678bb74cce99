// Package sim is the simulator: scripted callers, mock providers with fault
// injection, the loopback transport, whole-call simulation, assertions and
// fingerprints, and the scenario suites. It lets a whole call run inside a
// testing/synctest bubble, where time is virtual, so that latency budgets and
// failure handling are checked exactly and the same script always produces
// the same event timing.
//
// The mocks read the clock with time directly; they start at most one
// goroutine per session, owned by the session and ended by Close or by the
// session's context.
package sim
