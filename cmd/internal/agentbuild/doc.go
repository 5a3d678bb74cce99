// Package agentbuild turns a checked agent file (agent/agentfile) into a
// running agent: the STT, LLM and TTS providers with the file's options,
// the VAD (Silero on a process-wide inference pool, or the energy
// detector), the turn, round and filler settings, and the tool registry of
// each call (the example tools: get_time, save_note, book_table, end_call).
//
// Provider options are mapped onto the provider Config fields by name
// (snake_case in the file, the Go field name in the Config); a test runs
// every option of the file schema through the mapping, so the schema and
// the configs cannot drift apart unnoticed. Building does no I/O: the
// provider constructors only check their configs (a key variable is read),
// so `brisvox check` builds the agent too and reports a constructor's
// error at the provider's position in the file.
package agentbuild
