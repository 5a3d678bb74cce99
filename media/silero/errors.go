package silero

import "errors"

// Sentinel errors of the package. Every error it returns wraps one of them
// (fmt.Errorf("%w: detail", ErrX)), so callers branch with errors.Is.
var (
	// ErrInvalidConfig wraps every Validate error: fix the settings.
	ErrInvalidConfig = errors.New("silero: invalid config")
	// ErrModelUnavailable: the Silero VAD model file is missing, unreadable,
	// corrupted or not the expected model (its inputs and outputs differ).
	// The message names the file; `go tool task setup` fetches it.
	ErrModelUnavailable = errors.New("silero: model unavailable")
	// ErrRuntimeUnavailable: the ONNX Runtime shared library is missing or
	// cannot be loaded, or it is already loaded from another path in this
	// process. The message names the file; `go tool task setup` fetches it.
	ErrRuntimeUnavailable = errors.New("silero: onnx runtime unavailable")
	// ErrNoCgo: the binary was built without cgo (CGO_ENABLED=0), so ONNX
	// Runtime cannot be loaded; NewModel and NewPool fail with it, wrapped
	// in ErrRuntimeUnavailable, after checking the config and finding the
	// files.
	ErrNoCgo = errors.New("silero: built without cgo; ONNX Runtime cannot be loaded (build with CGO_ENABLED=1)")
	// ErrInvalidInput: a window of the wrong length, a stream made for
	// another sample rate or model, a batch too large or a stream twice in
	// one batch. Nothing was run and no stream changed.
	ErrInvalidInput = errors.New("silero: invalid input")
	// ErrInference: ONNX Runtime failed to run a batch. The streams of the
	// batch are unchanged.
	ErrInference = errors.New("silero: inference failed")
	// ErrClosed: the model was closed.
	ErrClosed = errors.New("silero: closed")
	// ErrPoolFull: the pool's queue is full; Submit refused the window
	// synchronously and the stream is unchanged.
	ErrPoolFull = errors.New("silero: pool full")
	// ErrPoolClosed: the pool is closed (Submit refused the window), or it
	// closed while the window was queued (the window's callback gets it).
	ErrPoolClosed = errors.New("silero: pool closed")
	// ErrDeadline: the window's deadline passed before a worker took it; it
	// was not run and the stream is unchanged.
	ErrDeadline = errors.New("silero: deadline exceeded")
	// ErrStreamBusy: the stream already has a window in flight (Submit), or
	// Reset was called while it had one. A stream takes one window at a time.
	ErrStreamBusy = errors.New("silero: stream busy")
)
