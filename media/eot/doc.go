// Package eot is the end-of-turn model: media's half of deciding when a
// caller's turn is over. The voice activity detector says when speech
// stopped; a pause is not the end of a turn, so an end-of-turn model (Smart
// Turn style: a classifier over the last 8 s of 16 kHz audio) estimates the
// probability that the turn is complete. What to do with that probability
// (how long to wait after the stop) is a conversation rule, the policy of
// agent/endofturn, which the turn actor owns; the vad actor runs the model.
//
// The pieces:
//
//   - Model, the seam: Complete(ctx, audio) returns the probability. Fixed
//     answers scripted probabilities (tests); Runner runs a configured ONNX
//     model file with ONNX Runtime.
//   - Features, Whisper-style log-mel features ([80][800] for 8 s) computed
//     in Go, as Smart Turn v3 expects them (v2 took the raw waveform and is
//     not supported).
//
// No end-of-turn model ships with the project: NewRunner returns ErrNoModel
// until Config.ModelPath names one (docs/MEDIA.md, "End of turn"). Built
// without cgo (CGO_ENABLED=0), Runner cannot load ONNX Runtime: NewRunner
// checks the config and the file, then fails with ErrNoCgo.
package eot
