// Package cartesiamock is a Cartesia TTS websocket server for tests of
// the cartesia adapter and for the contract suite's harness, built on
// providers/internal/wsmock. It answers the handshake of /tts/websocket
// (recording its headers, refusing it when a fault says so) and speaks
// the service's message shapes: for each word of the text pushed on a
// context (continuations are joined verbatim, so a word split across two
// pushes is one word) a "timestamps" message with the word's start, then
// its audio as "chunk" messages (base64 PCM16 little-endian at the
// request's sample_rate, WordDuration per word); "done" after a
// continue=false request; "flush_done" after a manual flush; nothing for
// a cancel (as the service), whose queued output it drops (or, with
// Voice.IgnoreCancel, sends all the same). It checks what
// the service checks (model_id, voice, output_format and context_id
// present, the fields unchanged within a context, no input after a
// context ended) and answers a violation with an "error" message. It can
// pace its output (one message per Pace, like a real-time synthesizer),
// start with leading silence, and fail the next context with an error
// message; the wsmock faults (refuse, connect stall, drop, stall, delay,
// malformed, binary, oversized) apply to the messages it sends, counted
// one per Send: each message is one event of the adapter.
package cartesiamock
