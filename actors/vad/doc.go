// Package vad is the call's voice-activity stage: it reads every input frame,
// marks where the caller's speech starts and stops (timestamps backdated to
// the audio), and passes the frame on to stt. It is epoch-agnostic: barge-in
// audio is never dropped here.
package vad
