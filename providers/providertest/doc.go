// Package providertest holds the fakes of the providers: scripted
// speech-to-text, chat-model and speech services (MockSTT, MockLLM,
// MockTTS) on a fixed, virtual-time-friendly timetable, and the one fault
// vocabulary of the house (FaultKind, Fault) that they, the vendor mocks
// (wsmock, llmmock) and the provider contract suite (contracttest) share.
// In a call they stand where a vendor adapter stands: the simulator's
// whole-call harness (sim) wires them under the actors, and the contract
// suite holds them up as the reference behaviour.
//
// It is a leaf: it imports only providers, agent and messages of the
// module, so a provider's tests that use it compile no actor.
//
// The mocks read the clock with time directly, so inside a
// testing/synctest bubble they run in virtual time; they start at most one
// goroutine per session, owned by the session and ended by Close or by the
// session's context.
package providertest
