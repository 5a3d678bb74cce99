// Package providers declares what the call's actors need from speech and
// language services: a streaming STT session, a streaming LLM response and a
// TTS session with contexts, each cancelled by a context.Context, each with
// warm() to open connections ahead of the first turn, and the typed errors
// every adapter maps its failures to (Rejected, Timeout, Disconnected,
// Protocol). Vendor adapters live in sub-packages; the mocks of the simulator
// live in sim. Each adapter publishes the options an agent file may set
// as one table (Options, options.go): name, type, bounds, default, doc
// line and the setter into its Config; its Config.Validate checks the
// same bounds, and the agent file's schema, its hints, the mapping and
// the docs are derived from the table.
//
// Providers never import actors, sip or the transports.
package providers
