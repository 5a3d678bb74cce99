//go:build !cgo

package silero

import "fmt"

// Model stands for an ONNX Runtime session in a build without cgo, where
// ONNX Runtime cannot be loaded: NewModel and NewPool fail with
// ErrRuntimeUnavailable wrapping ErrNoCgo, so its methods are never
// reached.
type Model struct{}

// ortRuntime stands for a reference on the environment; none is held.
type ortRuntime struct{}

// acquireRuntime fails: ONNX Runtime is not linked without cgo.
func acquireRuntime(string) (*ortRuntime, error) {
	return nil, fmt.Errorf("%w: %w", ErrRuntimeUnavailable, ErrNoCgo)
}

func (*ortRuntime) release() error { return nil }

func loadModelFile(string) ([]byte, modelSpec, error) { return nil, modelSpec{}, ErrNoCgo }

func newModel(*ortRuntime, string, []byte, modelSpec, ModelConfig) (*Model, error) {
	return nil, ErrNoCgo
}

// Rate is never reached: no Model is made without cgo.
func (*Model) Rate() int { return 0 }

// WindowSize is never reached.
func (*Model) WindowSize() int { return 0 }

// MaxBatch is never reached.
func (*Model) MaxBatch() int { return 0 }

// Run is never reached.
func (*Model) Run([]*Stream, [][]int16, []float32) error { return ErrNoCgo }

func (*Model) warmUp([]int) error { return ErrNoCgo }

// Close does nothing: there is nothing to release.
func (*Model) Close() error { return nil }
