// Package g722 is the ITU-T G.722 wideband codec of a SIP call's audio
// path, in pure Go: 64 kbit/s (mode 1), 16 kHz PCM16 mono in and out, one
// byte per two samples, so 20 ms is 320 samples and 160 bytes. sip/rtp
// encodes the bot's audio with an Encoder and decodes the caller's with a
// Decoder, one of each per call and direction.
//
// It is written from the algorithm of the Recommendation: a 24-tap
// quadrature mirror filter pair splits the 16 kHz signal into a low and a
// high sub-band at 8 kHz each; the low band is coded with 6-bit ADPCM (4
// bits of it drive the adaptation, so the 48 and 56 kbit/s modes could drop
// the rest), the high band with 2-bit ADPCM; each band has a backward-
// adaptive step size and a pole-zero predictor (two poles, six zeros). The
// receive side mirrors it. The arithmetic is the Recommendation's 16-bit
// fixed point, so the output is bit exact: the test behind the build tag
// spandsp (go test -tags spandsp ./media/g722/...) checks it sample for
// sample against libspandsp.
//
// Only mode 1 is offered, the one SDP's payload type 9 means. Note the RTP
// quirk of RFC 3551: G.722's RTP clock rate is 8000 although it samples at
// 16 kHz; timestamps advance by 160 per 20 ms. That is the RTP layer's
// concern, not this package's.
//
// Encoder and Decoder keep all their state in their struct: Encode and
// Decode allocate nothing and never fail (every byte is a valid G.722
// code word). Each serves one stream from one goroutine.
package g722
