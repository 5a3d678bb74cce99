package brisvoxsim

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// command runs this test binary as the brisvox-sim command, as the sim
// and demo tasks run it (bin/brisvox-sim is the same binary, made by go
// test -c): TestMain sees the subcommand and plays it.
func command(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := exec.Command(os.Args[0], args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatalf("%v: %v", args, err)
	}
	return out.String(), errOut.String(), code
}

// TestCommand runs the binary as a user would: the suites pass with the
// documented JSON fields and nothing but the report on stdout (the test
// driver's PASS goes to stderr), the demo prints the conversation, and bad
// usage exits 2 before anything is played.
// Mutations caught: the driver's PASS left on stdout (the JSON does not
// parse), a usage error exiting 0 or 1.
func TestCommand(t *testing.T) {
	t.Run("sim --json", func(t *testing.T) {
		stdout, stderr, code := command(t, "sim", "--json")
		if code != 0 {
			t.Fatalf("exit status %d\n%s", code, stderr)
		}
		var lines []map[string]any
		if err := json.Unmarshal([]byte(stdout), &lines); err != nil {
			t.Fatalf("not a JSON array: %v\n%s", err, stdout)
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
		if strings.TrimSpace(stderr) != "PASS" {
			t.Errorf("stderr %q, want the driver's PASS alone (no unit test run)", stderr)
		}
	})

	t.Run("sim", func(t *testing.T) {
		stdout, stderr, code := command(t, "sim")
		if code != 0 || !strings.HasSuffix(stdout, "\n37 passed, 0 failed\n") {
			t.Errorf("exit status %d, summary missing:\n%s\n%s", code, stdout, stderr)
		}
	})

	t.Run("sim --suite tools", func(t *testing.T) {
		stdout, stderr, code := command(t, "sim", "--suite", "tools")
		if code != 0 || !strings.HasSuffix(stdout, "\n12 passed, 0 failed\n") || !strings.Contains(stdout, "tools_S3_repeated_booking_interleaved") {
			t.Errorf("exit status %d, tool suite output:\n%s\n%s", code, stdout, stderr)
		}
	})

	t.Run("demo", func(t *testing.T) {
		stdout, stderr, code := command(t, "demo")
		if code != 0 || !strings.HasPrefix(stdout, "Simulated call on the production actor tree") {
			t.Errorf("exit status %d, demo output:\n%s\n%s", code, stdout, stderr)
		}
	})

	t.Run("usage", func(t *testing.T) {
		for _, args := range [][]string{{}, {"nope"}, {"sim", "--nope"}, {"sim", "--suite", "nope"}, {"sim", "--suite"}} {
			stdout, stderr, code := command(t, args...)
			if code != 2 || stdout != "" || strings.Contains(stderr, "PASS") {
				t.Errorf("%v: exit status %d, stdout %q, stderr %q; want 2, nothing played", args, code, stdout, stderr)
			}
		}
	})
}
