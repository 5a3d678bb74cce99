// Package media holds the audio path of a call below the actors: PCM16
// frames' codecs (G.711 mu-law and A-law), the streaming polyphase
// resampler between 8, 16, 24 and 48 kHz, the RTP parser and the inbound
// jitter buffer with loss concealment, the WAV reader and writer, the
// energy VAD and the speech gate that turns a model's per-window
// probabilities into speech starts and stops. Everything here is pure Go,
// allocation-free on its per-frame paths, and testable and benchmarkable
// without an actor system. Opus (cgo), the Silero VAD with its inference
// pool, and the end-of-turn model live in the subpackages opus, silero and
// eot.
package media
