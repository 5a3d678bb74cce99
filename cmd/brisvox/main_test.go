package main

import (
	"bytes"
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

// TestCommand runs the built binary as a user would: check reads agent
// files, and bad usage exits 2, sim and demo (the dev command brisvox-sim
// now) among it with the task to run named.
func TestCommand(t *testing.T) {
	bin := build(t)

	t.Run("check", func(t *testing.T) { testCheck(t, bin) })

	t.Run("usage", func(t *testing.T) {
		for _, args := range [][]string{{}, {"nope"}, {"check"}, {"check", "--nope", "a.toml"},
			// --log-content without debug logging would log nothing: refused.
			{"serve", "--agent", "x.toml", "--log-content"}} {
			err := exec.Command(bin, args...).Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 2 {
				t.Errorf("%v: %v, want exit status 2", args, err)
			}
		}
	})

	// Each operator command is reached by its name (mutation seen
	// failing: the records case missing from run, "unknown command").
	t.Run("operator commands", func(t *testing.T) {
		for _, name := range []string{"calls", "records"} {
			var stderr bytes.Buffer
			cmd := exec.Command(bin, name)
			cmd.Stderr = &stderr
			_ = cmd.Run()
			if !strings.Contains(stderr.String(), "usage: brisvox "+name) {
				t.Errorf("brisvox %s: stderr %q, want its usage", name, stderr.String())
			}
		}
	})

	t.Run("sim and demo name their task", func(t *testing.T) {
		for _, args := range [][]string{{"sim"}, {"sim", "--json"}, {"demo"}} {
			var stdout, stderr bytes.Buffer
			cmd := exec.Command(bin, args...)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 2 || stdout.Len() != 0 ||
				!strings.Contains(stderr.String(), "go tool task "+args[0]) {
				t.Errorf("%v: %v, stdout %q, stderr %q; want exit status 2 naming go tool task %s", args, err, stdout.String(), stderr.String(), args[0])
			}
		}
	})
}

// TestLinksNoTestDriver holds the serving binary to its dependencies: not
// the testing packages, not the simulator, no test support of the module
// (a package named ...test or ...mock), however deep the import.
// Mutation caught: main.go running the suites again (it linked testing,
// testing/synctest and sim through internal/bubble).
func TestLinksNoTestDriver(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{with .Module}}{{.Path}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	const mod = "github.com/brisvox/brisvox"
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, module, _ := strings.Cut(l, " ")
		last := path[strings.LastIndex(path, "/")+1:]
		switch {
		case path == "testing" || strings.HasPrefix(path, "testing/"):
			t.Errorf("brisvox links the test driver: %s", path)
		case module != mod:
		case path == mod+"/sim" || strings.HasPrefix(path, mod+"/sim/") || path == mod+"/cmd/brisvox-sim":
			t.Errorf("brisvox links the simulator: %s", path)
		case strings.HasSuffix(last, "test") || strings.HasSuffix(last, "mock"):
			t.Errorf("brisvox links test support: %s", path)
		}
	}
}
