package messages

import "time"

// FrameDuration is the length of one audio frame everywhere in the tree.
const FrameDuration = 20 * time.Millisecond

// AudioFrame is 20 ms of PCM16 mono audio from the caller (transport in ->
// vad -> stt). Frames come from a pool and are handed over: whoever receives
// one owns it until it passes it on or calls Release. PCM holds exactly
// Rate/50 samples.
type AudioFrame struct {
	// Seq numbers the caller's frames from 0; it never resets during a call.
	Seq uint64
	// Rate is the sample rate in Hz.
	Rate int
	// Start is when the frame's first sample was captured; the frame spans
	// [Start, Start+FrameDuration).
	Start time.Time
	// PCM is the frame's samples; its backing array belongs to the pool.
	PCM []int16
	// release returns the frame to its pool; nil for frames without one.
	release func(*AudioFrame)
}

// NewPooledFrame makes a frame that returns itself through release when its
// last owner calls Release. Pools use it; nobody else needs to.
func NewPooledFrame(rate int, release func(*AudioFrame)) *AudioFrame {
	return &AudioFrame{Rate: rate, PCM: make([]int16, rate/50), release: release}
}

// Release hands the frame back to its pool. The caller must not use the frame
// afterwards. Release on a frame without a pool does nothing.
func (f *AudioFrame) Release() {
	if f.release != nil {
		f.release(f)
	}
}

// OutputAudio is a 20 ms frame of bot audio on its way from the pacer to the
// transport. Rate is the call's output rate.
type OutputAudio struct {
	Epoch Epoch
	// Offset is where the frame starts within its epoch's audio.
	Offset time.Duration
	Rate   int
	PCM    []int16
	// release returns the frame to the pacer's pool; see Release.
	release func(*OutputAudio)
}

// NewPooledOutput makes an output frame that returns itself through release.
func NewPooledOutput(rate int, release func(*OutputAudio)) *OutputAudio {
	return &OutputAudio{Rate: rate, PCM: make([]int16, rate/50), release: release}
}

// Release hands the frame back to the pacer's pool once the transport has
// written it. The caller must not use the frame afterwards.
func (f *OutputAudio) Release() {
	if f.release != nil {
		f.release(f)
	}
}
