package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: brisvox vad [--engine energy|silero] FILE.wav | brisvox check FILE... | brisvox serve --agent FILE [--addr HOST:PORT] | brisvox dial --trunk NAME --to NUMBER [--var k=v]... | brisvox sign --secret-env NAME --path /pcm [--ttl 5m] | brisvox calls [--addr URL] list|show|restart|hangup|nodes|drain|undrain | brisvox records [--addr URL] list|show|export|recording|pause|resume|erase|audit (the simulator: go tool task sim, go tool task demo)")
		return 2
	}
	switch args[0] {
	case "demo", "sim":
		// The simulator is a dev command: it runs in synctest bubbles,
		// which need the go test driver, and serve links neither.
		fmt.Fprintf(stderr, "brisvox: %s is not in the serving binary: go tool task %s (the dev command brisvox-sim, cmd/brisvox-sim)\n", args[0], args[0])
		return 2
	case "vad":
		return vadCommand(args[1:], stdout, stderr)
	case "serve":
		return serveCommand(args[1:], stdout, stderr)
	case "sign":
		return signCommand(args[1:], stdout, stderr)
	case "check":
		return checkCommand(args[1:], stdout, stderr, os.LookupEnv)
	case "dial":
		return dialCommand(args[1:], stdout, stderr)
	case "calls":
		return callsCommand(args[1:], stdout, stderr)
	case "records":
		return recordsCommand(args[1:], stdout, stderr)
	default:
		fmt.Fprintf(stderr, "brisvox: unknown command %q (want vad, check, serve, dial, sign, calls or records)\n", args[0])
		return 2
	}
}
