package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/brisvox/brisvox/agent/agentfile"
)

// knownTools is the tool catalogue agent files are checked against: the
// tools this binary can build (examples/tools and the telephony ones).
func knownTools() []string {
	return []string{"get_time", "save_note", "book_table", "end_call", "send_dtmf", "transfer_call"}
}

// checkCommand checks agent files offline: each diagnostic on stderr, one
// per line, "FILE: ok" on stdout for a clean file. Exit status 0 when all
// are clean, 1 when any has a diagnostic, 2 for bad usage.
func checkCommand(args []string, stdout, stderr io.Writer, lookupEnv func(string) (string, bool)) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: brisvox check FILE.toml|FILE.yaml...")
		fmt.Fprintln(stderr, "Checks agent files offline: every problem with its line:column and a hint; key variables must be set.")
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	status := 0
	for _, path := range fs.Args() {
		_, diags := agentfile.Load(path, agentfile.Options{LookupEnv: lookupEnv, KnownTools: knownTools()})
		if len(diags) == 0 {
			fmt.Fprintf(stdout, "%s: ok\n", path)
			continue
		}
		status = 1
		diags.Sort()
		for _, d := range diags {
			fmt.Fprintln(stderr, d.String())
		}
	}
	return status
}
