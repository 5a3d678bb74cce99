package sip

import (
	"testing"

	"github.com/brisvox/brisvox/sip/signal"
)

// TestReferWords: what the model reads of a failed REFER. Catches a busy
// far end reported as a plain refusal (the model would not say "busy").
func TestReferWords(t *testing.T) {
	tests := []struct {
		code  int
		stage string
		want  string
	}{
		{486, signal.ReferStageNotify, "busy (486)"},
		{600, signal.ReferStageNotify, "busy (600)"},
		{480, signal.ReferStageNotify, "no answer (480)"},
		{603, signal.ReferStageNotify, "declined (603)"},
		{405, signal.ReferStageRefer, "transfer not supported by the far end (405)"},
		{503, signal.ReferStageNotify, "unavailable (503)"},
		{404, signal.ReferStageNotify, "refused (404)"},
		{0, signal.ReferStageTimeout, "no progress report from the far end in time (" + signal.ReferStageTimeout + ")"},
	}
	for _, tt := range tests {
		if got := referWords(&signal.ReferError{Code: tt.code, Stage: tt.stage}); got != tt.want {
			t.Errorf("%d %s: %q, want %q", tt.code, tt.stage, got, tt.want)
		}
	}
}
