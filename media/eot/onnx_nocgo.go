//go:build !cgo

package eot

import (
	"context"
	"fmt"
)

// Runner stands for the ONNX runner in a build without cgo, where ONNX
// Runtime cannot be loaded: NewRunner fails, so its methods are never
// reached.
type Runner struct{}

// NewRunner checks cfg and the model file as the cgo build does, then
// fails with ErrRuntimeUnavailable wrapping ErrNoCgo.
func NewRunner(cfg Config) (*Runner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := checkModelFile(cfg.ModelPath); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("%w: %w", ErrRuntimeUnavailable, ErrNoCgo)
}

// Complete is never reached: NewRunner fails first.
func (*Runner) Complete(context.Context, []int16) (float32, error) { return 0, ErrNoCgo }

// Close does nothing: there is nothing to release.
func (*Runner) Close() error { return nil }
