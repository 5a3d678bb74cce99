//go:build unix

package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/brisvox/brisvox/internal/leaktest"
)

// fakeGo stands in for the go command on PATH: what it does is chosen by
// FAKEGO, so each case sees what `go tool task` handed over.
const fakeGo = `#!/usr/bin/env bash
case "$FAKEGO" in
args) printf '%s\n' "$@" ;;
exit) exit 3 ;;
streams) cat; echo to-stderr >&2 ;;
signal) trap 'echo got-term; exit 42' TERM; echo ready; read -r _ ;;
esac
`

// TestWrapperHandsOver runs the built wrapper against a fake go command:
// the arguments, the standard streams, a signal sent to the wrapper's
// process and the exit code all reach, or come from, the go command.
// Mutation: running the go command as a child without forwarding signals
// fails "signal" (the child never hears TERM); returning 1 instead of the
// child's code fails "exit code"; a relative -modfile fails "arguments".
func TestWrapperHandsOver(t *testing.T) {
	base := leaktest.Snapshot()
	bin := buildWrapper(t)
	fakeDir := t.TempDir()
	write(t, filepath.Join(fakeDir, "go"), fakeGo)
	if err := os.Chmod(filepath.Join(fakeDir, "go"), 0o755); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	write(t, filepath.Join(root, "go.mod"), "module example.com/m\n")
	write(t, filepath.Join(root, "tools", "go.mod"), "module example.com/m/tools\n")
	sub := filepath.Join(root, "a", "b")
	mkdir(t, sub)
	bare := t.TempDir()
	write(t, filepath.Join(bare, "go.mod"), "module example.com/bare\n")

	modArg := "-modfile=" + filepath.Join(root, "tools", "go.mod")
	tests := []struct {
		name       string
		mode       string
		dir        string
		args       []string
		stdin      string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{name: "arguments", mode: "args", dir: sub, args: []string{"sim", "--", "--json", "a b"},
			wantStdout: "tool\n" + modArg + "\ntask\nsim\n--\n--json\na b\n"},
		{name: "streams", mode: "streams", dir: root, stdin: "line one\nline two\n",
			wantStdout: "line one\nline two\n", wantStderr: "to-stderr\n"},
		{name: "exit code", mode: "exit", dir: root, wantCode: 3},
		{name: "no tools module", mode: "args", dir: bare, wantCode: 1,
			wantStderr: ErrNoToolsModule.Error() + ": " + bare + "\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(bin, tc.args...)
			cmd.Dir = tc.dir
			cmd.Env = append(os.Environ(), "PATH="+fakeDir+string(os.PathListSeparator)+os.Getenv("PATH"), "FAKEGO="+tc.mode)
			cmd.Stdin = strings.NewReader(tc.stdin)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			code := exitCode(t, cmd.Run())
			if code != tc.wantCode || stdout.String() != tc.wantStdout || stderr.String() != tc.wantStderr {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d, stdout %q, stderr %q",
					code, stdout.String(), stderr.String(), tc.wantCode, tc.wantStdout, tc.wantStderr)
			}
		})
	}

	t.Run("signal", func(t *testing.T) {
		cmd := exec.Command(bin)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "PATH="+fakeDir+string(os.PathListSeparator)+os.Getenv("PATH"), "FAKEGO=signal")
		stdin, err := cmd.StdinPipe() // held open: the fake waits on it
		if err != nil {
			t.Fatal(err)
		}
		defer stdin.Close()
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		r := bufio.NewReader(out)
		if line, err := r.ReadString('\n'); line != "ready\n" {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("fake go said %q, %v; want ready", line, err)
		}
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		// The wrapper's process first, then stdin closed: a go command
		// left behind that never heard TERM ends on its EOF (and says
		// nothing), so a lost signal fails rather than hangs.
		state, err := cmd.Process.Wait()
		if err != nil {
			t.Fatal(err)
		}
		stdin.Close()
		rest, _ := io.ReadAll(r)
		out.Close()
		if state.ExitCode() != 42 || string(rest) != "got-term\n" {
			t.Fatalf("after TERM: %v, stdout %q; want exit 42 and got-term", state, rest)
		}
	})

	if n := leaktest.Snapshot().NewSince(base); n != 0 {
		t.Fatalf("%d goroutines left", n)
	}
}

// buildWrapper builds this command into a temporary folder.
func buildWrapper(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "task")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// exitCode is the exit code of a finished command.
func exitCode(t *testing.T, err error) int {
	t.Helper()
	if err == nil {
		return 0
	}
	if exit, ok := errors.AsType[*exec.ExitError](err); ok {
		return exit.ExitCode()
	}
	t.Fatal(err)
	return -1
}
