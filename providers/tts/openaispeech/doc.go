// Package openaispeech is the TTS adapter of the OpenAI speech endpoint
// (POST {base}/audio/speech) and of the local servers that copy it. A
// session opens nothing at Connect: each text piece is one HTTP request,
// whose streamed body (raw PCM16 or WAV) becomes the context's Audio
// events as it arrives. The pieces of a context are spoken in order, one
// request at a time; pieces pushed while a request runs are joined into
// the next. Connections are kept alive in a pool that Warm fills.
//
// The service gives no word timings: the session emits no Word events
// (EmitsWords is false), so what a caller heard before a barge-in is
// estimated from the audio played.
//
// One worker goroutine per session makes the requests and reads the
// bodies, one event ahead of the caller; the events reach the caller
// through the delivery goroutine of providers/internal/ttspump. Close
// stops both and waits for them.
package openaispeech
