package g722

// The package has no sentinel errors, on purpose: G.722 has no invalid
// input. Every byte is a code word the decoder accepts, every int16 is a
// sample the encoder accepts, and buffer lengths are handled by clamping
// (see Encoder.Encode and Decoder.Decode), so there is nothing to report.
