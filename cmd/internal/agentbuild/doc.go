// Package agentbuild turns a checked agent file (cmd/internal/agentfile) into a
// running agent: the STT, LLM and TTS providers with the file's options,
// the VAD (Silero on a process-wide inference pool, or the energy
// detector), the turn, round and filler settings, and the tool registry of
// each call (the example tools: get_time, save_note, book_table, end_call).
//
// Provider options are written into the provider's Config by the
// provider's own option table (providers.Options.Apply: each row's setter
// takes the checked value), the table the file was checked against; a
// test runs every option of every table through its setter. Building
// does no I/O: the
// provider constructors only check their configs (a key variable is read),
// so `brisvox check` builds the agent too and reports a constructor's
// error at the provider's position in the file.
//
// Before the first call, serve asks three things of the built agent. Open
// warms each stage with the probe its warm setting chooses (an HTTP LLM's
// model list or a one-token request, a websocket connection, a model
// load, or none); a failed probe stops serving only where warm_required
// says so, otherwise it is logged once and counted. Capacity is the
// number of calls the agent can hear at once: the smallest of the call
// limit and its providers' scarce resources (providers.Limited).
// Exposure says which endpoints must not open as they are: none without
// authentication while the agent spends keys, unless the file says
// public = true, and a keyless agent's only on loopback.
package agentbuild
