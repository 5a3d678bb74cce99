package eot

import "errors"

// ErrNoModel is returned by NewRunner when Config.ModelPath is empty: no
// end-of-turn model file is configured. No such model ships with the
// project; see docs/MEDIA.md ("End of turn") for what file to configure.
var ErrNoModel = errors.New("eot: no end-of-turn model configured")

// ErrModelUnavailable wraps every failure to use the configured model file:
// missing, unreadable, not an ONNX model, or a model whose inputs and outputs
// are not those of a Smart Turn style classifier. The message names the file.
var ErrModelUnavailable = errors.New("eot: end-of-turn model unavailable")

// ErrRuntimeUnavailable wraps failures to find or load the ONNX Runtime
// shared library. The message names the file and the setup command.
var ErrRuntimeUnavailable = errors.New("eot: ONNX Runtime unavailable")

// ErrInference wraps a failed model run (the runtime reported an error).
var ErrInference = errors.New("eot: inference failed")

// ErrClosed is returned by a Runner used after Close.
var ErrClosed = errors.New("eot: runner closed")

// ErrBadBuffer is returned when a caller's feature buffer has the wrong
// length.
var ErrBadBuffer = errors.New("eot: feature buffer has the wrong length")

// ErrNoCgo: the binary was built without cgo (CGO_ENABLED=0), so ONNX
// Runtime cannot be loaded; NewRunner fails with it, wrapped in
// ErrRuntimeUnavailable, after checking the config and the model file.
var ErrNoCgo = errors.New("eot: built without cgo; ONNX Runtime cannot be loaded (build with CGO_ENABLED=1)")
