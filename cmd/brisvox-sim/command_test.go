package brisvoxsim

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestParse holds the command line to the one the serving binary had:
// the same flags and defaults, and bad usage refused with a message.
// Mutations caught: an unknown suite let through (it ran the main suite),
// --json not reaching the command, demo refusing what follows it.
func TestParse(t *testing.T) {
	cases := []struct {
		name   string
		args   []string
		want   Command
		usage  bool   // the error wraps ErrUsage
		stderr string // a part of what goes to stderr
	}{
		{name: "demo", args: []string{"demo"}, want: Command{Name: Demo}},
		{name: "demo ignores the rest", args: []string{"demo", "--json"}, want: Command{Name: Demo}},
		{name: "sim defaults", args: []string{"sim"}, want: Command{Name: Sim, Suite: SuiteMain}},
		{name: "sim json tools", args: []string{"sim", "--json", "--suite", "tools"}, want: Command{Name: Sim, JSON: true, Suite: SuiteTools}},
		{name: "sim single dash", args: []string{"sim", "-suite=main", "-json"}, want: Command{Name: Sim, JSON: true, Suite: SuiteMain}},
		{name: "nothing", args: nil, usage: true, stderr: Usage},
		{name: "unknown command", args: []string{"serve"}, usage: true, stderr: `unknown command "serve" (want demo or sim)`},
		{name: "unknown flag", args: []string{"sim", "--nope"}, usage: true, stderr: "flag provided but not defined: -nope"},
		{name: "unknown suite", args: []string{"sim", "--suite", "nope"}, usage: true, stderr: `unknown suite "nope" (want main or tools)`},
		{name: "flag without value", args: []string{"sim", "--suite"}, usage: true, stderr: "flag needs an argument"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stderr bytes.Buffer
			got, err := Parse(c.args, &stderr)
			if c.usage {
				if !errors.Is(err, ErrUsage) || ExitCode(err) != 2 {
					t.Fatalf("err = %v (exit %d), want ErrUsage (exit 2)", err, ExitCode(err))
				}
				if !strings.Contains(stderr.String(), c.stderr) {
					t.Errorf("stderr %q lacks %q", stderr.String(), c.stderr)
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v\n%s", err, stderr.String())
			}
			if got != c.want {
				t.Errorf("Parse(%q) = %+v, want %+v", c.args, got, c.want)
			}
			if stderr.Len() != 0 {
				t.Errorf("stderr %q, want nothing", stderr.String())
			}
		})
	}
}

func TestExitCode(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, 0},
		{"usage", ErrUsage, 2},
		{"wrapped usage", errors.Join(errors.New("x"), ErrUsage), 2},
		{"failed", ErrFailed, 1},
		{"other", errors.New("disk full"), 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ExitCode(c.err); got != c.want {
				t.Errorf("ExitCode(%v) = %d, want %d", c.err, got, c.want)
			}
		})
	}
}
