package ortenv

import "errors"

var (
	// ErrLoad: the library does not load or the environment cannot be
	// created (missing, corrupted, or not ONNX Runtime 1.24 or newer).
	ErrLoad = errors.New("ortenv: ONNX Runtime does not load")
	// ErrOtherLibrary: the environment is held with another library file.
	ErrOtherLibrary = errors.New("ortenv: ONNX Runtime is loaded from another file")
	// ErrDestroy: destroying the environment failed.
	ErrDestroy = errors.New("ortenv: destroying the ONNX Runtime environment failed")
)
