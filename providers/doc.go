// Package providers declares what the call's actors need from speech and
// language services: a streaming STT session, a streaming LLM response and a
// TTS session with contexts, each cancelled by a context.Context, each with
// warm() to open connections ahead of the first turn, and the typed errors
// every adapter maps its failures to (Rejected, Timeout, Disconnected,
// Protocol). Vendor adapters live in sub-packages; the mocks of the simulator
// live in sim.
//
// Providers never import actors, sip or the transports.
package providers
