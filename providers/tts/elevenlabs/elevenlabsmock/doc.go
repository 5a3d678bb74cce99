// Package elevenlabsmock is an ElevenLabs multi-context TTS server for tests
// of the elevenlabs adapter and the contract suite, built on
// providers/internal/wsmock: it answers the websocket handshake of
// /v1/text-to-speech/{voice_id}/multi-stream-input (recording its query and
// headers, refusing it when a fault says so), keeps the text of each
// context, and on flush speaks it as the service does: audio messages of
// base64 PCM16 at the rate of output_format, each with the per-character
// alignment of its chunk (times relative to the chunk; normalizedAlignment
// lower-cased, so that a client reading the wrong one is seen), and, once a
// closed context has sent its last audio, isFinal. A flush alone sends no
// isFinal, as with the service.
//
// It enforces the service's rules that clients trip over: at most
// MaxContexts open contexts (a sixth closes the socket with 1008),
// voice_settings only in the first message (a different one later closes
// with 1008), and close_socket. A Style sets how a context is spoken: the
// duration per character, words per audio message, the pace of the
// messages, leading silence, words and samples cut between two messages,
// the service's race that loses a context's text when close_context comes
// before its first audio, and (SeparateAlignment, for the contract suite,
// which counts its faults in events) each chunk's alignment and audio as
// two messages.
package elevenlabsmock
