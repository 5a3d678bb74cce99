// Package contracttest is the provider conformance suite: generic checks
// that every provider adapter must pass before it may stand in a call, run
// through the provider interfaces of package providers and a harness per
// kind that scripts the service, injects faults (providertest.Fault, the
// one fault vocabulary) and reads counters. RunLLM checks a providers.LLM
// (through an LLMHarness), RunSTT a providers.STT (STTHarness) and RunTTS a
// providers.TTS (TTSHarness); each returns a Report with one CheckResult
// per check.
//
// The checks per kind (LLMCheckNames, STTCheckNames, TTSCheckNames):
// streaming (STT: an interim before any Finalize, then the final with
// FromFinalize, SpeechFinal and the scripted text), audio_and_words and
// flush (TTS: audio, words in order, offsets that do not go back, audio
// past the last word's start, nothing after Flushed within the quiet
// window), cancel (STT: Close ends the events within CancelPrompt with
// nothing after what was buffered at the hang-up; TTS: a Cancelled ack
// within CancelPrompt, at most CancelSlackEvents events of the context
// after the cancel not counting those buffered at it, nothing after the
// ack within the quiet window, and the session speaks the next context),
// reconnect, error_mapping, five timeout checks (a stalled and a slow
// connect, a stalled and a slow first event, an idle gap after the first
// event; every Timeout judged within TimeoutSlack of the io timeout both
// ways), warm and no_goroutine_leak.
//
// The suite never hangs: every provider call and every awaited event is
// bounded by 3 x the harness's io timeout, and a call that does not return
// in time fails the check that made it, naming the call. It waits only on
// time.Timer and time.Sleep, so inside a testing/synctest bubble it runs in
// virtual time (against the mocks: LLM about 17 virtual seconds, STT about
// 14, TTS about 25 paced and 16 unpaced, each a few milliseconds of real
// time).
//
// Adapters enforce their own deadlines (connect, first event, idle gap);
// the timeout checks demand them within TimeoutSlack of the io timeout,
// both ways. WithDeadlines, STTWithDeadlines and TTSWithDeadlines are the
// reference behaviour, used to put the simulator's mocks (which have no
// deadlines of their own) under the suite; MockHarness, MockSTTHarness and
// MockTTSHarness are the mocks' harnesses. The broken doubles (Leaky,
// NoInterims, DeadCancel, Stragglers, ...) each break one behaviour and
// are used by this package's tests to prove that every check can fail;
// LeadingSilence and ConnectsOnFirstPush are conformant variations that
// must pass.
//
// It imports the providers, their fakes (providertest) and nothing of the
// runtime: an adapter's contract test compiles no actor.
package contracttest
