//go:build cgo

package silero

import (
	"errors"
	"fmt"

	"github.com/brisvox/brisvox/media/internal/ortenv"
)

// ortRuntime is one reference to the process's ONNX Runtime environment,
// shared with media/eot through media/internal/ortenv (the binding keeps it
// process-global).
type ortRuntime struct{ env *ortenv.Env }

// acquireRuntime takes a reference on the environment, loading lib when no
// one holds it. The error wraps ErrRuntimeUnavailable and names the file.
func acquireRuntime(lib string) (*ortRuntime, error) {
	env, err := ortenv.Acquire(lib)
	if errors.Is(err, ortenv.ErrOtherLibrary) {
		return nil, fmt.Errorf("%w: %v", ErrRuntimeUnavailable, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: ONNX Runtime library %s does not load (missing, corrupted or not version 1.24+): %v; %s",
			ErrRuntimeUnavailable, lib, err, setupHint)
	}
	return &ortRuntime{env: env}, nil
}

// release drops the reference; idempotent.
func (r *ortRuntime) release() error {
	if err := r.env.Release(); err != nil {
		return fmt.Errorf("%w: %v", ErrRuntimeUnavailable, err)
	}
	return nil
}
