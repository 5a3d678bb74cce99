package silero

import (
	"fmt"
	"github.com/brisvox/brisvox/media/internal/ortenv"
)

// Where the native files are looked for when no path is configured: first
// the environment variable, then the file below the module root (the
// directory holding go.mod, found by walking up from the working
// directory), where `go tool task setup` puts it.
const (
	// RuntimeEnv names the variable holding the ONNX Runtime library path.
	RuntimeEnv = "BRISVOX_ORT_LIB"
	// ModelEnv names the variable holding the Silero VAD model path.
	ModelEnv = "BRISVOX_SILERO_MODEL"
	// RuntimeRelPath is the library's path relative to the module root.
	RuntimeRelPath = ".native/onnxruntime/libonnxruntime.so.1"
	// ModelRelPath is the model's path relative to the module root.
	ModelRelPath = ".native/models/silero_vad_v5.onnx"
)

// setupHint ends every message about a missing or broken native file.
const setupHint = ortenv.SetupHint

// Files are the two native files the package needs.
type Files struct {
	// Runtime is the ONNX Runtime shared library.
	Runtime string
	// Model is the Silero VAD v5 ONNX model.
	Model string
}

// LocateFiles resolves the runtime library and the model. For each, an
// explicit path wins, else the environment variable (RuntimeEnv, ModelEnv),
// else the file below the module root. The file must exist and be a non-empty
// regular file; otherwise the error wraps ErrRuntimeUnavailable or
// ErrModelUnavailable, names the file and says how to get it. Whether the
// file is usable shows only when it is loaded (NewModel, NewPool).
func LocateFiles(runtimePath, modelPath string) (Files, error) {
	rt, err := ortenv.Locate(runtimePath, "the configured RuntimePath", RuntimeEnv, RuntimeRelPath, "ONNX Runtime library")
	if err != nil {
		return Files{}, fmt.Errorf("%w: %v", ErrRuntimeUnavailable, err)
	}
	model, err := ortenv.Locate(modelPath, "the configured ModelPath", ModelEnv, ModelRelPath, "Silero VAD model")
	if err != nil {
		return Files{}, fmt.Errorf("%w: %v", ErrModelUnavailable, err)
	}
	return Files{Runtime: rt, Model: model}, nil
}
