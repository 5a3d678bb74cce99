package eot

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/brisvox/brisvox/media/internal/ortenv"
)

// Where the ONNX Runtime library is looked for when Config.RuntimePath is
// empty: the environment variable, else the file below the module root (the
// directory holding go.mod, found by walking up from the working directory),
// where `go tool task setup` puts it.
const (
	// RuntimeEnv names the variable holding the ONNX Runtime library path.
	RuntimeEnv = "BRISVOX_ORT_LIB"
	// RuntimeRelPath is the library's path relative to the module root.
	RuntimeRelPath = ".native/onnxruntime/libonnxruntime.so.1"
	// DefaultInputName is Smart Turn's input.
	DefaultInputName = "input_features"
)

// setupHint ends every message about a missing runtime library.
const setupHint = ortenv.SetupHint

// Config configures a Runner.
type Config struct {
	// ModelPath is the end-of-turn ONNX model file: a Smart Turn v3 style
	// classifier taking log-mel features float32 [1, 80, 800] (batch may be
	// dynamic) and giving one float32 probability. Required: no such model
	// ships with the project (docs/MEDIA.md, "End of turn").
	ModelPath string
	// RuntimePath is the ONNX Runtime shared library. Empty: $BRISVOX_ORT_LIB,
	// else <module root>/.native/onnxruntime/libonnxruntime.so.1. It is used
	// only when no ONNX Runtime environment exists yet in the process.
	RuntimePath string
	// InputName is the model's feature input (default "input_features").
	InputName string
	// OutputName is the model's probability output. Empty: the model's only
	// output (an error if it has several).
	OutputName string
	// Features configures the feature extractor (zero value: Smart Turn's).
	Features FeatureConfig
}

// Validate reports a configuration that cannot work before touching any
// file: ErrNoModel when ModelPath is empty.
func (c Config) Validate() error {
	if c.ModelPath == "" {
		return fmt.Errorf("%w: set eot.Config.ModelPath to a Smart Turn v3 style ONNX file "+
			"(input %q float32 [1, %d, %d] of log-mel features of the last 8 s of 16 kHz audio, output one float32 probability); "+
			"none ships with the project, see docs/MEDIA.md, section \"End of turn\"",
			ErrNoModel, DefaultInputName, NumMels, NumFrames)
	}
	return c.Features.Validate()
}

// checkModelFile gives a clear error for a model file that is missing, not
// a regular file, empty or unreadable, before the runtime is involved.
func checkModelFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%w: model file %s (eot.Config.ModelPath): %v", ErrModelUnavailable, path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return fmt.Errorf("%w: model file %s: %v", ErrModelUnavailable, path, err)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%w: model file %s is not a regular file", ErrModelUnavailable, path)
	case fi.Size() == 0:
		return fmt.Errorf("%w: model file %s is empty", ErrModelUnavailable, path)
	}
	if _, err := f.Read(make([]byte, 1)); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: model file %s is unreadable: %v", ErrModelUnavailable, path, err)
	}
	return nil
}

// locateRuntime applies the lookup order for the ONNX Runtime library
// (media/internal/ortenv.Locate) and checks that the file is there.
func locateRuntime(explicit string) (string, error) {
	path, err := ortenv.Locate(explicit, "eot.Config.RuntimePath", RuntimeEnv, RuntimeRelPath, "ONNX Runtime library")
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrRuntimeUnavailable, err)
	}
	return path, nil
}
