//go:build !cgo

package eot

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestNewRunnerWithoutCgo: a build without cgo fails clearly in
// NewRunner, after the config and the model file are checked.
// Mutation caught: a NewRunner that skips the checks without cgo, or a
// failure that does not wrap ErrNoCgo and ErrRuntimeUnavailable.
func TestNewRunnerWithoutCgo(t *testing.T) {
	model := filepath.Join(t.TempDir(), "model.onnx")
	if err := os.WriteFile(model, []byte("not checked without cgo"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		cfg  Config
		want []error
	}{
		{"model file present", Config{ModelPath: model}, []error{ErrNoCgo, ErrRuntimeUnavailable}},
		{"no model", Config{}, []error{ErrNoModel}},
		{"missing model", Config{ModelPath: model + ".missing"}, []error{ErrModelUnavailable}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewRunner(tt.cfg)
			if r != nil {
				t.Errorf("NewRunner gave a runner")
			}
			for _, w := range tt.want {
				if !errors.Is(err, w) {
					t.Errorf("NewRunner: %v, want %v", err, w)
				}
			}
		})
	}
}
