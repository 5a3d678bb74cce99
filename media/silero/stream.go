package silero

import (
	"fmt"
	"sync/atomic"
	"time"
)

// Tensor sizes of Silero VAD v5.
const (
	// StateSize is the width of each of the two layers of the recurrent
	// state the model carries from one window of a stream to the next.
	StateSize = 128
	// maxWindow and maxContext are the 16 kHz sizes, the largest.
	maxWindow  = 512
	maxContext = 64
)

// The sample rates the model accepts.
const (
	Rate16k = 16000
	Rate8k  = 8000
)

// WindowSize is the number of new samples per window at rate: 512 at 16 kHz
// (32 ms), 256 at 8 kHz (32 ms); 0 for any other rate.
func WindowSize(rate int) int {
	switch rate {
	case Rate16k:
		return 512
	case Rate8k:
		return 256
	}
	return 0
}

// contextSize is the number of samples of the previous window prepended to
// each window: 64 at 16 kHz, 32 at 8 kHz.
func contextSize(rate int) int { return WindowSize(rate) / 8 }

// WindowDuration is the audio time one window spans (32 ms at both rates).
func WindowDuration(rate int) time.Duration {
	if WindowSize(rate) == 0 {
		return 0
	}
	return time.Duration(WindowSize(rate)) * time.Second / time.Duration(rate)
}

// Stream is the model's memory of one audio stream (one call's caller
// audio): the recurrent state ([2][128] floats) and the last samples of the
// previous window, which the model sees in front of each new window. It
// starts from silence (zeros). The caller owns it; a Model or Pool only
// uses it during a run.
//
// A stream takes one window at a time: it must have at most one window in
// flight in a Pool (Submit enforces it with ErrStreamBusy; the vad actor
// submits the next window only after the previous result came back) and
// must not be used by two Model.Run calls at once.
//
// A window that is refused (ErrPoolFull), expires (ErrDeadline), is
// cancelled (ErrPoolClosed) or fails (ErrInference) leaves the stream
// unchanged: the next window continues from the last window that ran. The
// model then sees a splice: the next window's 64 samples of context come
// from the last window that ran, not from the dropped one, and the
// recurrent state skips 32 ms of audio. The probability may be off for a
// window or two around the gap; the speech gate's minimum speech and
// hangover absorb that.
type Stream struct {
	// rate is the model's rate; inRate that of the windows a Pool takes
	// for the stream (16 kHz with an 8 kHz model: down decimates them).
	rate, inRate int
	down         *decimator
	// state is the recurrent state, layer 0 then layer 1.
	state [2 * StateSize]float32
	// context holds the last contextSize(rate) samples of the last window
	// that ran, as the model's float input.
	context [maxContext]float32
	// windows counts the windows that ran.
	windows uint64

	// markModel and markGen detect a stream twice in one Model.Run batch.
	markModel *Model
	markGen   uint64

	// The window in flight in a Pool; written by Submit, read by a worker,
	// handed over through the queue. busy guards them.
	busy     atomic.Bool
	pcm      [maxWindow]int16
	low      [maxWindow / 2]int16 // pcm decimated, for an 8 kHz model
	seq      uint64
	deadline time.Time
	done     func(Result)
}

// NewStream makes a stream for audio at rate (Rate16k or Rate8k), starting
// from silence.
func NewStream(rate int) (*Stream, error) {
	if WindowSize(rate) == 0 {
		return nil, fmt.Errorf("%w: sample rate %d (want %d or %d)", ErrInvalidConfig, rate, Rate16k, Rate8k)
	}
	return &Stream{rate: rate, inRate: rate}, nil
}

// Rate is the sample rate the stream was made for.
func (s *Stream) Rate() int { return s.rate }

// Windows is the number of windows of the stream the model ran.
func (s *Stream) Windows() uint64 { return s.windows }

// modelWindow is the window in flight as the model takes it: the n
// samples submitted, or those decimated to the model's rate. Only the
// worker that runs the window calls it.
func (s *Stream) modelWindow(n int) []int16 {
	if s.down == nil {
		return s.pcm[:n]
	}
	return s.down.decimate(s.low[:n/2], s.pcm[:n])
}

// Reset returns the stream to silence, as at the start of a new call. It
// fails with ErrStreamBusy while a window is in flight in a Pool.
func (s *Stream) Reset() error {
	if s.busy.Load() {
		return fmt.Errorf("%w: reset with a window in flight", ErrStreamBusy)
	}
	s.state = [2 * StateSize]float32{}
	s.context = [maxContext]float32{}
	s.windows = 0
	if s.down != nil {
		s.down.Reset()
	}
	return nil
}
