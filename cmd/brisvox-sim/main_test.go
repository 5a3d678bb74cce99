package brisvoxsim

import (
	"flag"
	"fmt"
	"os"
	"testing"
	"testing/synctest"
)

// invocation is what TestMain hands to TestProgram when the binary runs as
// the brisvox-sim command, and what TestProgram hands back: set by TestMain
// before m.Run and read by it after. Under plain go test it stays nil. The
// go test driver offers no other way from TestMain to a test and back.
var invocation *program

// program is one run of the command: what to play, and what it gave.
type program struct {
	cmd    Command
	report Report
	played bool
}

// TestMain runs the command when the binary is given a subcommand:
// `brisvox-sim sim --json` (or `go test ./cmd/brisvox-sim -args sim
// --json`; the test driver's flags, -test.v and the like, may come before
// it). Given test flags alone it runs the package's tests, as under go
// test, which always passes some (-test.paniconexit0, -test.timeout).
// Given nothing at all it is the command called without a subcommand: the
// usage, exit status 2.
func TestMain(m *testing.M) {
	flag.Parse()
	if flag.NArg() == 0 && flag.NFlag() > 0 {
		os.Exit(m.Run())
	}
	err := runProgram(m, flag.Args(), os.Stdout, os.Stderr)
	os.Exit(ExitCode(err))
}

// runProgram parses args, plays the calls through m.Run in TestProgram
// alone, and writes the report on stdout. While m.Run runs, os.Stdout is
// stderr: the driver prints its verdict (PASS, FAIL) there, and stdout
// carries the report and nothing else (sim --json is one JSON array).
func runProgram(m *testing.M, args []string, stdout, stderr *os.File) error {
	cmd, err := Parse(args, stderr)
	if err != nil {
		return err
	}
	if err := flag.Set("test.run", "^TestProgram$"); err != nil {
		return fmt.Errorf("%w: %w", ErrFailed, err)
	}
	invocation = &program{cmd: cmd}
	os.Stdout = stderr
	code := m.Run()
	os.Stdout = stdout
	if code != 0 || !invocation.played {
		fmt.Fprintf(stderr, "brisvox-sim %s: the test driver exited with status %d\n", cmd.Name, code)
		return fmt.Errorf("%w: the test driver exited with status %d", ErrFailed, code)
	}
	return invocation.report.Write(stdout, stderr)
}

// TestProgram plays the command's calls in a synctest bubble. It is the
// command, not a check: under plain go test it has nothing to play.
func TestProgram(t *testing.T) {
	if invocation == nil {
		t.Skip("runs as the command only: bin/brisvox-sim sim|demo (go tool task sim, go tool task demo)")
	}
	synctest.Test(t, func(t *testing.T) {
		invocation.report = invocation.cmd.Run()
	})
	invocation.played = true
}
