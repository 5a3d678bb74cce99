// Package speechmock is a mock of the OpenAI speech endpoint (POST
// /v1/audio/speech, GET /v1/models) for the tests of
// providers/tts/openaispeech and its contract harness: an HTTP/1.1 server
// on a loopback socket, or on any listener (an in-memory one for tests in
// a testing/synctest bubble), that speaks the request's input as chunked
// PCM16 or WAV, one chunk per word, paced, with faults to inject: a
// refusal, a stall before the headers or mid-body, a cut body, a body
// ending inside a sample, a WAV header split byte by byte, odd-sized
// chunks, a header that is not PCM16 mono.
//
// Each word's audio is SamplesPerWord samples of WordSample(word), so a
// test can tell from the audio which words were spoken, in which order.
package speechmock
