//go:build !cgo

package silero

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestNewWithoutCgo: a build without cgo fails clearly in NewModel and
// NewPool, after the config is checked and the files are found.
// Mutation caught: a constructor that skips the checks without cgo, or a
// failure that does not wrap ErrNoCgo and ErrRuntimeUnavailable.
func TestNewWithoutCgo(t *testing.T) {
	dir := t.TempDir()
	lib, model := filepath.Join(dir, "libonnxruntime.so"), filepath.Join(dir, "silero.onnx")
	for _, f := range []string{lib, model} {
		if err := os.WriteFile(f, []byte("not loaded without cgo"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		make func() error
		want []error
	}{
		{"model", func() error { _, err := NewModel(ModelConfig{RuntimePath: lib, ModelPath: model}); return err },
			[]error{ErrNoCgo, ErrRuntimeUnavailable}},
		{"pool", func() error { _, err := NewPool(PoolConfig{RuntimePath: lib, ModelPath: model}); return err },
			[]error{ErrNoCgo, ErrRuntimeUnavailable}},
		{"bad model config", func() error { _, err := NewModel(ModelConfig{SampleRate: 44100}); return err },
			[]error{ErrInvalidConfig}},
		{"missing model file", func() error {
			_, err := NewModel(ModelConfig{RuntimePath: lib, ModelPath: model + ".missing"})
			return err
		}, []error{ErrModelUnavailable}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.make()
			for _, w := range tt.want {
				if !errors.Is(err, w) {
					t.Errorf("got %v, want %v", err, w)
				}
			}
		})
	}
}
