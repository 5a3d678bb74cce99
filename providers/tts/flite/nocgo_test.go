//go:build !cgo

package flite

import (
	"errors"
	"testing"
)

// TestNewWithoutCgo: a build without cgo fails clearly in New, after the
// config is checked.
func TestNewWithoutCgo(t *testing.T) {
	if _, err := New(Config{}); !errors.Is(err, ErrNoCgo) {
		t.Errorf("New: %v, want ErrNoCgo", err)
	}
	if _, err := New(Config{Voice: "nope"}); !errors.Is(err, ErrUnknownVoice) {
		t.Errorf("New with a bad voice: %v, want ErrUnknownVoice", err)
	}
}
