// Package deepgrammock is a Deepgram live transcription server for tests
// of the deepgram adapter, built on providers/internal/wsmock: it answers
// the websocket handshake of /v1/listen (recording its query and headers,
// refusing it when a fault says so), sends a scripted utterance as
// interims (one more word per audio frame received) and its final (on
// Finalize, with from_finalize and speech_final; or, for an endpointed
// utterance, after the last interim), answers CloseStream with Metadata
// and a normal close, and records the audio bytes and the control
// messages it received. Results carry start and duration computed from
// the audio received at the query's sample rate. Like the service, it
// sends an empty interim after each Cadence of audio without a result.
// SetLatency delays every message by the service's recognition latency,
// pipelined (each one that long after the client message that caused it,
// on a sender goroutine the session owns), as the contract suite's harness
// needs: an adapter deadline armed at the wrong moment is then off by that
// latency.
package deepgrammock
