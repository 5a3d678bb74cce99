package silero

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
const setupHint = "run `go tool task setup` (it fetches the file into .native/ and writes .native/env)"

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
	rt, err := locate(runtimePath, RuntimeEnv, RuntimeRelPath, "ONNX Runtime library")
	if err != nil {
		return Files{}, fmt.Errorf("%w: %v", ErrRuntimeUnavailable, err)
	}
	model, err := locate(modelPath, ModelEnv, ModelRelPath, "Silero VAD model")
	if err != nil {
		return Files{}, fmt.Errorf("%w: %v", ErrModelUnavailable, err)
	}
	return Files{Runtime: rt, Model: model}, nil
}

// locate applies the lookup order for one file and checks what it found.
func locate(explicit, env, rel, what string) (string, error) {
	var path, from string
	switch {
	case explicit != "":
		path, from = explicit, "configured path"
	case os.Getenv(env) != "":
		path, from = os.Getenv(env), "$"+env
	default:
		root, err := moduleRoot()
		if err != nil {
			return "", fmt.Errorf("%s: no path configured, $%s is unset and %v; %s", what, env, err, setupHint)
		}
		path, from = filepath.Join(root, rel), "module root"
	}
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return "", fmt.Errorf("%s %s (from %s): %v; %s", what, path, from, err, setupHint)
	case !fi.Mode().IsRegular():
		return "", fmt.Errorf("%s %s (from %s) is not a regular file; %s", what, path, from, setupHint)
	case fi.Size() == 0:
		return "", fmt.Errorf("%s %s (from %s) is empty; %s", what, path, from, setupHint)
	}
	return path, nil
}

// moduleRoot walks up from the working directory to the directory holding
// go.mod.
func moduleRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("no working directory: %v", err)
	}
	for dir := wd; ; {
		_, err := os.Stat(filepath.Join(dir, "go.mod"))
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("looking for go.mod: %v", err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above %s", wd)
		}
		dir = parent
	}
}
