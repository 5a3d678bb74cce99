// Package contract is the provider contract suite: generic checks that every
// provider adapter must pass, run through the provider interfaces of package
// providers and a harness per kind that scripts responses, injects faults
// and reads counters. RunLLM checks a providers.LLM; the STT and TTS kinds
// are to follow with the same Report.
//
// The suite never hangs: every provider call and every awaited event is
// bounded by 3 x the harness's io timeout, and a call that does not return
// in time fails the check that made it, naming the call. It waits only on
// time.Timer and time.Sleep, so inside a testing/synctest bubble it runs in
// virtual time (about 17 virtual seconds against the mock, a few
// milliseconds of real time).
//
// Adapters enforce their own deadlines (connect, first event, idle gap);
// the timeout checks demand them within TimeoutSlack of the io timeout,
// both ways. WithDeadlines is the reference behaviour, used to put the
// simulator's MockLLM (which has no deadlines of its own) under the suite.
// The broken doubles (Leaky, MisMapped, ...) each break one behaviour and
// are used by this package's tests to prove that every check can fail.
package contract
