// Package opus is the Opus codec of the audio path: a mono Encoder that turns
// fixed-length PCM16 frames into Opus packets in the caller's buffer, and a
// Decoder that turns packets back into PCM16 and covers lost packets with
// packet loss concealment (Conceal) or with the in-band forward error
// correction carried by the next packet (DecodeFEC).
//
// It wraps libopus through cgo (gopkg.in/hraban/opus.v2), so it lives in its
// own package: the rest of media builds without a C library, and only the
// code that imports this package needs libopus and pkg-config. Built without
// cgo (CGO_ENABLED=0) it compiles all the same, and NewEncoder and
// NewDecoder fail with ErrNoCgo: a binary built so serves what needs no
// Opus and refuses a call that does.
//
// Both types keep all state in memory allocated at construction; Encode,
// Decode, Conceal and DecodeFEC allocate nothing on success. An Encoder or
// Decoder serves one stream from one goroutine; only Decoder.Stats may be
// called from another goroutine.
package opus
