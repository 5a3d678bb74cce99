// Package elevenlabs is the streaming TTS adapter for ElevenLabs'
// multi-context websocket (GET /v1/text-to-speech/{voice_id}/multi-stream-input
// upgraded, options in the query, the key in the xi-api-key header). One
// socket serves a session; each providers.TTSSession context is one
// ElevenLabs context on it, named on the wire by the session ("c1", "c2",
// ...), so a context id the caller reuses after a Cancel never meets audio
// of the cancelled generation.
//
// Out go text frames: a context's opening (" ", with voice_settings on the
// socket's first context only, as the service demands), its text pieces, a
// flush, a close_context (after the flush, once the context's first audio
// arrived: closing sooner races the service and may lose the text), and
// close_socket on Close. In come the audio messages, base64 PCM16 mono at
// the requested rate with the per-character alignment of that chunk
// (sync_alignment=true), and isFinal once a closed context has sent its
// last audio. Each audio message becomes the Word events of the words that
// start in it (a word starts at its first character; a word cut between
// two messages is carried over) and then one Audio event; a message with
// alignment and no audio gives its words alone, timed from the audio
// delivered so far. isFinal of a flushed context becomes Flushed.
//
// Cancel is local and prompt: the context is forgotten at once, its events
// not yet handed over are dropped (the one held out to the caller too),
// the Cancelled ack goes to the head of the queue (behind earlier acks),
// and close_context tells the service, whose remaining audio for it is
// dropped on arrival. Events are handed over by the delivery goroutine of
// providers/internal/ttspump from a bounded queue, so Push, Flush and
// Cancel never block and the reader waits (with its deadline disarmed)
// when the caller is slow.
//
// The websocket plumbing is providers/internal/wsconn; the JSON is read in
// place with providers/internal/jsonscan. The key is read from the
// environment once, in New, and appears in no error and no log.
//
// Subpackage elevenlabsmock is a loopback (or in-memory, for
// testing/synctest) server speaking the same protocol, with speaking
// styles and fault injection, for tests and the contract suite.
package elevenlabs
