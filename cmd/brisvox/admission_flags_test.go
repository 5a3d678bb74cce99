package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestServeAdmissionFlags: a wrong --admission or --cpu-ceiling is a
// usage error (exit 2) before any agent file is read. Mutation caught:
// the range check of --cpu-ceiling dropped (1.5 and 0 served).
func TestServeAdmissionFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown mode", []string{"--admission", "guessed"}, "--admission"},
		{"ceiling over 1", []string{"--admission", "measured", "--cpu-ceiling", "1.5"}, "--cpu-ceiling"},
		{"ceiling 0", []string{"--cpu-ceiling", "0"}, "--cpu-ceiling"},
		{"negative ceiling", []string{"--cpu-ceiling", "-0.5"}, "--cpu-ceiling"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errs bytes.Buffer
			args := append([]string{"--agent", "no-such-file.toml"}, tc.args...)
			if code := serveCommand(args, &out, &errs); code != 2 || !strings.Contains(errs.String(), tc.want) {
				t.Fatalf("exit %d, stderr %q; want 2 naming %s", code, errs.String(), tc.want)
			}
		})
	}
}
