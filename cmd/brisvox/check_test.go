package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// keyVars are the key variables the examples name.
var keyVars = []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "DEEPGRAM_API_KEY", "CARTESIA_API_KEY", "ELEVENLABS_API_KEY"}

// environ is the test's environment without any key variable, plus set.
func environ(set ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasSuffix(name, "_API_KEY") {
			out = append(out, kv)
		}
	}
	for _, name := range set {
		out = append(out, name+"=test-value")
	}
	return out
}

// runCheck runs `brisvox check args...` and returns its exit status,
// stdout and stderr.
func runCheck(t *testing.T, bin string, env []string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, append([]string{"check"}, args...)...)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, stdout.String(), stderr.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), stdout.String(), stderr.String()
	}
	t.Fatalf("check %v: %v", args, err)
	return 0, "", ""
}

// testCheck runs `brisvox check` on the examples and on a broken file.
// Mutation caught: a diagnostic printed without its position or on
// stdout, the exit status 0 with diagnostics, a file stopped at its first
// problem, the environment not consulted.
func testCheck(t *testing.T, bin string) {
	dir := filepath.Join("..", "..", "examples", "agents")
	var all []string
	for _, f := range []string{"local.toml", "local.yaml", "ollama.toml", "openai.toml", "anthropic.toml", "gemini.toml"} {
		all = append(all, filepath.Join(dir, f))
	}

	t.Run("examples with keys", func(t *testing.T) {
		code, out, errs := runCheck(t, bin, environ(keyVars...), all...)
		if code != 0 || errs != "" {
			t.Fatalf("exit %d:\n%s", code, errs)
		}
		for _, f := range all {
			if !strings.Contains(out, f+": ok; capacity ") {
				t.Errorf("no %q in:\n%s", f+": ok", out)
			}
		}
	})

	t.Run("examples without keys", func(t *testing.T) {
		code, out, errs := runCheck(t, bin, environ(), all...)
		if code != 1 {
			t.Errorf("exit %d, want 1", code)
		}
		if want := filepath.Join(dir, "local.toml") + ": ok; capacity 8 calls"; !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
		want := filepath.Join(dir, "openai.toml") + ":27:15: llm.api_key_env: OPENAI_API_KEY is not set (hint: export OPENAI_API_KEY=... or start from examples/agents/local.toml)\n"
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
		if strings.Contains(out, "openai.toml: ok") {
			t.Errorf("openai.toml ok without its keys:\n%s", out)
		}
	})

	t.Run("broken file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "broken.toml")
		src := `prompt = "You help."
[stt]
provider = "pocketsphinx"
[llm]
provider = "openai"
model = "gpt-4.1-mini"
api_key_env = "sk-live-abcdef"
tempature = 0.4
[tts]
provider = "flite"
voice = "slt"
[tools]
enabled = ["get_time", "book_tabel"]
[transports.twilio]
enabled = true
`
		if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		code, out, errs := runCheck(t, bin, environ(keyVars...), path)
		if code != 1 || out != "" {
			t.Errorf("exit %d, stdout %q; want 1 and nothing", code, out)
		}
		want := []string{
			path + ":7:15: llm.api_key_env: holds what looks like a key itself",
			path + `:8:1: llm.tempature: unknown option "tempature" for openai (hint: did you mean "temperature"?)`,
			path + `:13:24: tools.enabled[1]: unknown tool "book_tabel" (hint: did you mean "book_table"?`,
			path + ":15:11: transports.twilio: pocketsphinx hears 16 kHz audio only; a telephony transport brings 8 kHz (hint: use deepgram for telephony or turn the transport off)",
		}
		lines := strings.Split(strings.TrimSuffix(errs, "\n"), "\n")
		if len(lines) != len(want) {
			t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), errs)
		}
		for i := range want {
			if !strings.HasPrefix(lines[i], want[i]) {
				t.Errorf("line %d:\n got %s\nwant %s", i+1, lines[i], want[i])
			}
		}
		if strings.Contains(errs, "sk-live") {
			t.Errorf("the key is printed:\n%s", errs)
		}
	})
}

// tomlSetting is a TOML assignment, as a YAML file's hint must not show.
var tomlSetting = regexp.MustCompile(`[a-z_]+ = `)

// TestCheckHints runs check on the broken files of testdata/check and
// compares what it prints with testdata/check/hints.want: every line has
// a hint, in the file's own syntax (a YAML file is never told
// `hangover = "300ms"`).
// Mutation caught (each seen failing): a YAML tab reported without a
// hint and away from the tab; a negative duration, an integer duration
// and a TOML syntax error without a hint; YAML files given hints in TOML
// syntax; a provider constructor's refusal printed without a hint.
func TestCheckHints(t *testing.T) {
	dir := filepath.Join("testdata", "check")
	files := []string{"silero.toml", "silero.yaml", "tab.yaml", "unquoted.toml", "thinking.toml"}
	args := make([]string, len(files))
	for i, f := range files {
		args[i] = filepath.Join(dir, f)
	}
	var stdout, stderr bytes.Buffer
	// thinking.toml is clean for the file's check, refused by the
	// provider's constructor (no hint of its own).
	code := checkCommand(args, &stdout, &stderr, func(name string) (string, bool) { return "set", name == "CHECK_TEST_KEY" })
	if code != 1 || stdout.Len() != 0 {
		t.Errorf("exit %d, stdout %q; want 1 and nothing", code, stdout.String())
	}
	want, err := os.ReadFile(filepath.Join(dir, "hints.want"))
	if err != nil {
		t.Fatal(err)
	}
	if got := stderr.String(); got != string(want) {
		t.Errorf("stderr:\n%s\nwant:\n%s", got, want)
	}
	for _, line := range strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n") {
		if !strings.Contains(line, " (hint: ") {
			t.Errorf("no hint: %s", line)
		}
		_, hint, _ := strings.Cut(line, " (hint: ")
		if strings.Contains(line, ".yaml:") && tomlSetting.MatchString(hint) {
			t.Errorf("a YAML file told TOML: %s", line)
		}
	}
}
