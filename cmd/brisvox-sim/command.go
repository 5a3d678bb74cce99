package brisvoxsim

import (
	"flag"
	"fmt"
	"io"

	"github.com/brisvox/brisvox/sim"
)

// Usage is the binary's command line, printed when it is called without a
// subcommand.
const Usage = "usage: brisvox-sim demo | brisvox-sim sim [--json] [--suite main|tools]"

// The subcommands.
const (
	Demo = "demo"
	Sim  = "sim"
)

// The suites of the sim subcommand.
const (
	SuiteMain  = "main"
	SuiteTools = "tools"
)

// Command is one invocation of the binary.
type Command struct {
	// Name is the subcommand, Demo or Sim.
	Name string
	// JSON asks sim for a JSON array instead of one line per scenario.
	JSON bool
	// Suite is the suite sim runs, SuiteMain or SuiteTools.
	Suite string
}

// Parse reads the program's arguments: the subcommand, then its flags.
// What is wrong with them (and the flags' usage) goes to stderr, and the
// error wraps ErrUsage. demo takes no flags and ignores what follows it.
func Parse(args []string, stderr io.Writer) (Command, error) {
	if len(args) == 0 {
		fmt.Fprintln(stderr, Usage)
		return Command{}, fmt.Errorf("%w: no subcommand", ErrUsage)
	}
	switch args[0] {
	case Demo:
		return Command{Name: Demo}, nil
	case Sim:
		fs := flag.NewFlagSet(Sim, flag.ContinueOnError)
		fs.SetOutput(stderr)
		asJSON := fs.Bool("json", false, "print a JSON array instead of one line per scenario")
		suite := fs.String("suite", SuiteMain, "which suite: main (s01-s12 and played text) or tools (S1-S6, two shapes)")
		if err := fs.Parse(args[1:]); err != nil {
			return Command{}, fmt.Errorf("%w: %w", ErrUsage, err)
		}
		if *suite != SuiteMain && *suite != SuiteTools {
			fmt.Fprintf(stderr, "brisvox-sim sim: unknown suite %q (want main or tools)\n", *suite)
			return Command{}, fmt.Errorf("%w: unknown suite", ErrUsage)
		}
		return Command{Name: Sim, JSON: *asJSON, Suite: *suite}, nil
	default:
		fmt.Fprintf(stderr, "brisvox-sim: unknown command %q (want demo or sim)\n", args[0])
		return Command{}, fmt.Errorf("%w: unknown command", ErrUsage)
	}
}

// cases are the scenarios of the command's suite.
func (c Command) cases() []sim.Case {
	if c.Suite == SuiteTools {
		return sim.ToolCases()
	}
	return append(sim.Scenarios(), sim.PlayedTextCases()...)
}

// Run plays the command's calls and returns what they gave. Call it inside
// a testing/synctest bubble: the simulator runs in virtual time.
func (c Command) Run() Report {
	r := Report{cmd: c}
	if c.Name == Demo {
		r.call = sim.DemoCall()
		r.result, r.err = r.call.Run()
		return r
	}
	r.lines = play(c.cases())
	return r
}

// play runs each case (twice: sim.RunCase) and returns their lines.
func play(cases []sim.Case) []line {
	lines := make([]line, 0, len(cases))
	for _, c := range cases {
		lines = append(lines, lineOf(sim.RunCase(c)))
	}
	return lines
}
