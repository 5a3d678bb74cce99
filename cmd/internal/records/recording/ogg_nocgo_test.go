//go:build !cgo

package recording_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/brisvox/brisvox/cmd/internal/records/recording"
)

// TestOggNeedsCgo: a build without libopus refuses the ogg format and
// says what to do.
func TestOggNeedsCgo(t *testing.T) {
	_, err := recording.New(recording.Config{Dir: t.TempDir(), Format: "ogg"})
	if !errors.Is(err, recording.ErrInvalidConfig) || !strings.Contains(err.Error(), "use wav, or build with CGO_ENABLED=1") {
		t.Fatalf("err %v", err)
	}
}
