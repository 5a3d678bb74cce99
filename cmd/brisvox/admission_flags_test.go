package main

import (
	"bytes"
	"flag"
	"strings"
	"testing"

	"github.com/brisvox/brisvox/cmd/internal/admit"
	"github.com/brisvox/brisvox/cmd/internal/agentfile"
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

// TestAdmissionPrecedence: the agent file's [serve] admission and
// cpu_ceiling are used unless the command line gives --admission or
// --cpu-ceiling, each on its own; a flag left at its default does not
// replace the file's setting.
// Mutation caught (seen failing): fs.VisitAll in admissionGiven (every
// flag taken as given, so a file's measured admission silently served
// fixed at the flag's default).
func TestAdmissionPrecedence(t *testing.T) {
	for _, tc := range []struct {
		name, serve string
		args        []string
		mode        string
		ceiling     float64
	}{
		{"defaults", "", nil, "fixed", admit.DefaultCeiling},
		{"the file's", "admission = \"measured\"\ncpu_ceiling = 0.6\n", nil, "measured", 0.6},
		{"the file's mode, the flag's ceiling", "admission = \"measured\"\ncpu_ceiling = 0.6\n", []string{"--cpu-ceiling", "0.9"}, "measured", 0.9},
		{"the flag's mode, the file's ceiling", "admission = \"measured\"\ncpu_ceiling = 0.6\n", []string{"--admission=fixed"}, "fixed", 0.6},
		{"flags over defaults", "", []string{"--admission", "measured", "--cpu-ceiling", "0.5"}, "measured", 0.5},
		{"a flag given its default", "cpu_ceiling = 0.6\n", []string{"--cpu-ceiling", "0.75"}, "fixed", 0.75},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "prompt = \"p\"\n[stt]\nprovider = \"pocketsphinx\"\n[llm]\nprovider = \"rules\"\n[tts]\nprovider = \"flite\"\n[transports.webrtc]\n[serve]\n" + tc.serve
			file, ds := agentfile.Parse("a.toml", []byte(src), agentfile.TOML, agentfile.Options{LookupEnv: func(string) (string, bool) { return "", false }})
			if len(ds) > 0 {
				t.Fatal(ds)
			}
			var f serveFlags
			fs := flag.NewFlagSet("serve", flag.ContinueOnError)
			f.admissionFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			f.admissionGiven(fs)
			if mode, ceiling := f.admissionOf(file.Serve); mode != tc.mode || ceiling != tc.ceiling {
				t.Errorf("admission %s, ceiling %v; want %s, %v", mode, ceiling, tc.mode, tc.ceiling)
			}
		})
	}
}
