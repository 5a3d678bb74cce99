package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// build compiles the command once per test binary run.
func build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "brisvox")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// TestCommand runs the built binary as a user would: the suites pass with
// the documented JSON fields, the demo prints the conversation, and bad
// usage exits 2.
func TestCommand(t *testing.T) {
	bin := build(t)

	t.Run("sim --json", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(bin, "sim", "--json")
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("sim --json: %v\n%s", err, stderr.String())
		}
		var lines []map[string]any
		if err := json.Unmarshal(stdout.Bytes(), &lines); err != nil {
			t.Fatalf("not a JSON array: %v\n%s", err, stdout.String())
		}
		names := map[string]bool{}
		for _, l := range lines {
			for _, field := range []string{"name", "passed", "first_audio_ms", "fingerprint"} {
				if _, ok := l[field]; !ok {
					t.Errorf("line %v lacks %q", l["name"], field)
				}
			}
			if l["passed"] != true {
				t.Errorf("%v failed: %v", l["name"], l["error"])
			}
			names[l["name"].(string)] = true
		}
		for _, want := range []string{"s01_happy_path", "s11_tts_disconnect_mid_answer", "s12_speculation", "played_text_exact_at_2060ms"} {
			if !names[want] {
				t.Errorf("no line for %s", want)
			}
		}
	})

	t.Run("sim", func(t *testing.T) {
		out, err := exec.Command(bin, "sim").Output()
		if err != nil {
			t.Fatalf("sim: %v", err)
		}
		if !strings.Contains(string(out), "37 passed, 0 failed") {
			t.Errorf("summary missing:\n%s", out)
		}
	})

	t.Run("sim --suite tools", func(t *testing.T) {
		out, err := exec.Command(bin, "sim", "--suite", "tools").Output()
		if err != nil {
			t.Fatalf("sim --suite tools: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), "12 passed, 0 failed") || !strings.Contains(string(out), "tools_S3_repeated_booking_interleaved") {
			t.Errorf("tool suite output:\n%s", out)
		}
	})

	t.Run("demo", func(t *testing.T) {
		out, err := exec.Command(bin, "demo").Output()
		if err != nil {
			t.Fatalf("demo: %v", err)
		}
		for _, want := range []string{"get_time({}) [t1.0]", "It is twelve o'clock.", "first_audio_out=950", "context equals what was heard"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("demo output lacks %q:\n%s", want, out)
			}
		}
	})

	t.Run("check", func(t *testing.T) { testCheck(t, bin) })

	t.Run("usage", func(t *testing.T) {
		for _, args := range [][]string{{}, {"nope"}, {"sim", "--nope"}, {"sim", "--suite", "nope"}, {"check"}, {"check", "--nope", "a.toml"},
			// --log-content without debug logging would log nothing: refused.
			{"serve", "--agent", "x.toml", "--log-content"}} {
			err := exec.Command(bin, args...).Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 2 {
				t.Errorf("%v: %v, want exit status 2", args, err)
			}
		}
	})
}
