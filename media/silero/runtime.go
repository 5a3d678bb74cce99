package silero

import (
	"fmt"
	"sync"

	ort "github.com/yalue/onnxruntime_go"
)

// ortGlobal mirrors the process-global state of onnxruntime_go: the library
// keeps one shared-library path and one ONNX Runtime environment per process
// (InitializeEnvironment fails when called twice, DestroyEnvironment unloads
// the library for everyone). This is the package's one piece of
// package-level mutable state, and it exists only because the binding's is
// global: every Model holds one reference, the first acquires the
// environment and the last release destroys it, so pools and models can come
// and go in any order. It assumes this package is the only user of
// onnxruntime_go in the process.
var ortGlobal struct {
	mu   sync.Mutex
	refs int
	lib  string // the library loaded while refs > 0
}

// ortRuntime is one reference to the ONNX Runtime environment. Release is
// idempotent.
type ortRuntime struct {
	once sync.Once
	err  error
}

// acquireRuntime loads the library at lib and initializes the environment
// if no one holds it, else checks that it was loaded from the same path. The
// error wraps ErrRuntimeUnavailable and names the file.
func acquireRuntime(lib string) (*ortRuntime, error) {
	ortGlobal.mu.Lock()
	defer ortGlobal.mu.Unlock()
	if ortGlobal.refs > 0 {
		if ortGlobal.lib != lib {
			return nil, fmt.Errorf("%w: ONNX Runtime is already loaded from %s in this process; cannot also load %s",
				ErrRuntimeUnavailable, ortGlobal.lib, lib)
		}
		ortGlobal.refs++
		return &ortRuntime{}, nil
	}
	ort.SetSharedLibraryPath(lib)
	if err := ort.InitializeEnvironment(ort.WithLogLevelError()); err != nil {
		return nil, fmt.Errorf("%w: ONNX Runtime library %s does not load (missing, corrupted or not version 1.24+): %v; %s",
			ErrRuntimeUnavailable, lib, err, setupHint)
	}
	ortGlobal.refs = 1
	ortGlobal.lib = lib
	return &ortRuntime{}, nil
}

// release drops the reference; the last one destroys the environment and
// unloads the library.
func (r *ortRuntime) release() error {
	r.once.Do(func() {
		ortGlobal.mu.Lock()
		defer ortGlobal.mu.Unlock()
		ortGlobal.refs--
		if ortGlobal.refs > 0 {
			return
		}
		ortGlobal.lib = ""
		if err := ort.DestroyEnvironment(); err != nil {
			r.err = fmt.Errorf("%w: destroying the ONNX Runtime environment: %v", ErrRuntimeUnavailable, err)
		}
	})
	return r.err
}
