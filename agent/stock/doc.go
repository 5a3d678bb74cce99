// Package stock holds the engine's stock tools, the ones an agent file may
// enable by name (cmd/internal/agentbuild's catalogue), written the way an
// application writes its own: what an application adds to the engine so
// the model can act on its behalf. It sits beside the contract it
// implements (package agent) and imports only it and messages. Two
// show one of each effect:
//
//   - get_time (GetTime) is ReadOnly: it changes nothing, so the engine may
//     cancel it at a barge-in or run it again. It reads the time from the
//     Clock it is given, never from the system, so a test or a simulation
//     fixes the time and its answers repeat.
//   - save_note (SaveNote) is SideEffect: the engine never runs it
//     speculatively nor twice for one call, and it still keys its effect on
//     CallInfo.IdempotencyKey, so a redelivered call gets the same note back
//     instead of a second one.
//
// Two more serve the keyless default agent (with the offline "rules"
// provider):
//
//   - book_table (BookTable) is SideEffect and behind the confirmation
//     gate (Spec.Confirm): the engine holds the model's call and runs it
//     only when the model confirms it (confirm_pending) after the caller
//     agreed. Like save_note it keys its BookingStore on the idempotency
//     key, so a redelivered call books once.
//   - end_call (EndCall) declares agent.EndCallSpec and asks an Ender, which
//     the serving layer provides, to hang up once the goodbye has played.
//
// An application builds its tools once and registers them in a registry:
//
//	store := stock.NewNoteStore()
//	reg, err := agent.NewRegistry(
//		stock.GetTime(stock.ClockFunc(time.Now)),
//		stock.SaveNote(store),
//	)
//
// A registry refuses a bad spec (a name, an undeclared effect, a schema that
// does not compile) when it is built, so a broken tool stops the start, not
// a call.
//
// State that outlives a call (here the notes) lives outside the call, in a
// value the application owns and hands to the tool's constructor: a tool
// serves many calls at once (Call runs concurrently) and a redelivery of a
// call may reach it after the first delivery, so the record of what was done
// cannot live in one call's goroutine. What a tool knows of the call it
// serves comes only from its arguments and its agent.CallInfo.
//
// Bad arguments that pass the schema (an unknown time zone) are returned as
// an error whose text tells the model what to do next; agent.RunCall answers
// it as a tool_failed result with that text as its detail.
//
// The package embeds the IANA time zone database (time/tzdata), so
// get_time works on a machine without system zoneinfo (a scratch container).
package stock
