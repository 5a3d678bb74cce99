//go:build !cgo

package ortenv

import "fmt"

// Env stands for a reference in a build without cgo, where ONNX Runtime
// cannot be loaded: Acquire fails, so none is ever held.
type Env struct{}

// Acquire fails: ONNX Runtime is not linked without cgo.
func Acquire(lib string) (*Env, error) {
	return nil, fmt.Errorf("%w: %s: built without cgo (CGO_ENABLED=0)", ErrLoad, lib)
}

// Release does nothing: no reference is held.
func (*Env) Release() error { return nil }

// Refs is how many references are held (tests): none without cgo.
func Refs() int { return 0 }
