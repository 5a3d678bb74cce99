// Package flite is the offline speech synthesizer of the keyless default:
// a providers.TTS on libflite (Debian's flite1-dev, linked with cgo), with
// the 16 kHz US English voices slt, rms, awb and kal16 and the 8 kHz kal.
// Nothing leaves the process: there is no wire, no key and no network.
//
// A session speaks its contexts one after another, in the order they were
// opened. A context's text is given to libflite a phrase at a time (up to a
// sentence or clause end, at Flush, or at Config.MaxPieceRunes; the first
// phrase also before a word that opens a phrase, "or", "at", after four
// words, since the caller waits for its synthesis), off the
// caller's goroutine; the audio of a phrase goes out in Config.Chunk
// events, each word announced just before the audio it starts in. Word
// offsets are exact: they are read from the synthesized utterance (the
// first segment of each token's first word in the Segment relation), not
// estimated.
//
// A session runs two goroutines, both stopped and awaited by Close: one
// makes the libflite calls and queues each phrase's events, the other
// (providers/internal/ttspump's) hands them to Events. Cancel takes its
// context's queued events back and puts its ack ahead of them, so it is
// acknowledged at once even while a phrase is being synthesized. libflite's voices, error handling and random
// source (libc rand(), reseeded per call so a text always makes the same
// audio) are process globals, so its calls are serialized in the process.
//
// In a build without cgo, New fails with ErrNoCgo.
package flite
