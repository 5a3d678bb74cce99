// Package pocketsphinx is the offline, keyless speech-to-text engine: it
// implements providers.STT on CMU pocketsphinx 0.8 (Debian's
// libpocketsphinx3 with the pocketsphinx-en-us model), through cgo.
//
// Audio is 16 kHz PCM16 mono only; New refuses any other rate, because the
// en-us model is a wideband model and pocketsphinx fails on 8 kHz
// telephone audio. A decoder is scarce (each holds its own copy of the
// model, about 89 MB, and is not safe for concurrent use), so a session
// holds one only while its caller speaks: it keeps the latest PreRoll of
// audio while it has none, takes one from a bounded pool when the VAD's
// speech start reaches it (providers.SpeechMarker; a bounded, counted
// wait), decodes on its own worker goroutine, sends an interim whenever
// the partial hypothesis changed after each InterimInterval of audio,
// answers Finalize with a final (SpeechFinal, FromFinalize) and gives the
// decoder back. Silent callers cost no decoder. SendAudio copies into a
// fixed queue and drops (and counts) what does not fit; it never waits for
// the decoder.
//
// Config.Domain biases the decoders to an agent's domain: New builds a
// trigram model of its sentences (package ngram, every word checked
// against the dictionary) and each decoder interpolates it with the
// general model, so slots like times and names are heard while other
// speech still comes out as words.
//
// Built without cgo (CGO_ENABLED=0), New returns ErrNoCgo. See
// docs/providers/pocketsphinx.md for the measured accuracy, speed and
// memory, and for why cgo rather than a pocketsphinx_continuous
// subprocess.
package pocketsphinx
