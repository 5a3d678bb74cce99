package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/brisvox/brisvox/cmd/internal/agentbuild"
	"github.com/brisvox/brisvox/cmd/internal/agentfile"
)

// loadAgent checks an agent file and builds its agent (no I/O: the
// provider constructors check their configs, Open loads the models). The
// diagnostics are the file's, then the builder's at the file's positions.
func loadAgent(path string, lookupEnv func(string) (string, bool), opts agentbuild.Options) (*agentbuild.Agent, agentfile.Diagnostics) {
	f, diags := agentfile.Load(path, agentfile.Options{LookupEnv: lookupEnv, KnownTools: agentbuild.ToolNames()})
	if len(diags) > 0 {
		diags.Sort()
		return nil, diags
	}
	a, diags := agentbuild.Build(f, opts)
	for i, d := range diags {
		if d.Hint == "" {
			// A provider constructor's refusal says what is wrong, not
			// where its options are told: every line check prints has a
			// hint.
			diags[i].Hint = "the provider's options, their ranges and defaults are in docs/CONFIG.md, Providers and their options"
		}
	}
	return a, diags
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
		a, diags := loadAgent(path, lookupEnv, agentbuild.Options{})
		if len(diags) == 0 {
			// What serve would take as its call limit without
			// --max-calls, and why (issue 14: a limit above the
			// decoders went unnoticed).
			fmt.Fprintf(stdout, "%s: ok; %s\n", path, a.Capacity(defaultMaxCalls))
			_ = a.Close()
			continue
		}
		status = 1
		for _, d := range diags {
			fmt.Fprintln(stderr, d.String())
		}
	}
	return status
}
