//go:build cgo

package ortenv

import (
	"fmt"
	"sync"

	ort "github.com/yalue/onnxruntime_go"
)

// global mirrors the binding's process-global state.
var global struct {
	mu   sync.Mutex
	refs int
	lib  string // the library loaded while refs > 0
}

// Env is one reference to the environment. Release is idempotent.
type Env struct {
	once sync.Once
	err  error
}

// Acquire takes a reference on the environment, loading lib and creating
// the environment when no one holds it.
func Acquire(lib string) (*Env, error) {
	global.mu.Lock()
	defer global.mu.Unlock()
	if global.refs > 0 {
		if global.lib != lib {
			return nil, fmt.Errorf("%w: %s is already loaded; cannot also load %s", ErrOtherLibrary, global.lib, lib)
		}
		global.refs++
		return &Env{}, nil
	}
	ort.SetSharedLibraryPath(lib)
	if err := ort.InitializeEnvironment(ort.WithLogLevelError()); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrLoad, lib, err)
	}
	global.refs, global.lib = 1, lib
	return &Env{}, nil
}

// Release drops the reference; the last one destroys the environment and
// unloads the library.
func (e *Env) Release() error {
	e.once.Do(func() {
		global.mu.Lock()
		defer global.mu.Unlock()
		global.refs--
		if global.refs > 0 {
			return
		}
		global.lib = ""
		if err := ort.DestroyEnvironment(); err != nil {
			e.err = fmt.Errorf("%w: %v", ErrDestroy, err)
		}
	})
	return e.err
}

// Refs is how many references are held (tests).
func Refs() int {
	global.mu.Lock()
	defer global.mu.Unlock()
	return global.refs
}
