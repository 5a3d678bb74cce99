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
		fmt.Fprintln(stderr, "usage: brisvox-bench webrtc-load [--calls 60] [--hold 30s] [--warmup 5s] [--complexity 5] [--json]")
		fmt.Fprintln(stderr, "       brisvox-bench sip-load [--calls 500] [--rate 50] [--hold 60s] [--churn --call-length 2s] [--json]")
		fmt.Fprintln(stderr, "       brisvox-bench latency --brisvox PATH [--agent examples/agents/local.toml] [--turns 20] [--voice slt] [--json]")
		fmt.Fprintln(stderr, "       brisvox-bench asr [--voices slt,rms,awb,espeak] [--paths 16k,mulaw8k] [--models general,domain] [--json]")
		fmt.Fprintln(stderr, "       brisvox-bench admission [--admission fixed|measured|both] [--calls 30] [--rate 2] [--cost 0.1] [--cpu-ceiling 0.75] [--wait-quiet 0] [--json]")
		fmt.Fprintln(stderr, "       brisvox-bench dial [--rate 20] [--duration 60s] [--trunk-addr HOST:PORT] [--answer-hold 2s] [--json]")
		fmt.Fprintln(stderr, "       brisvox-bench calls [--calls 50 | --sweep 50,100,200,400,600] [--hold 60s] [--warmup 10s] [--seed 1] [--energy] [--transport pcm|sip] [--floor-dbfs -60] [--noise-dbfs 0] [--soak 30m] [--report out.html] [--json]")
		fmt.Fprintln(stderr, "       brisvox-bench chaos [--calls 200] [--hold 60s] [--seed 1] [--pairs 1] [--json]")
		return 2
	}
	switch args[0] {
	case "webrtc-load":
		return webrtcLoad(args[1:], stdout, stderr)
	case "webrtc-callers":
		return webrtcCallers(args[1:], stdout, stderr)
	case "sip-load":
		return sipLoad(args[1:], stdout, stderr)
	case "burst":
		return burst(args[1:], stdout, stderr)
	case "latency":
		return latency(args[1:], stdout, stderr)
	case "sip-media":
		return sipMedia(args[1:], stdout, stderr)
	case "asr":
		return asr(args[1:], stdout, stderr)
	case "admission":
		return admission(args[1:], stdout, stderr)
	case "dial":
		return dial(args[1:], stdout, stderr)
	case "calls":
		return calls(args[1:], stdout, stderr)
	case "calls-callers":
		return callsCallers(args[1:], stdout, stderr)
	case "chaos":
		return chaosBench(args[1:], stdout, stderr)
	case "calls-soak-callers":
		return callsSoakCallers(args[1:], stdout, stderr)
	default:
		fmt.Fprintf(stderr, "brisvox-bench: unknown command %q (want webrtc-load, sip-load, burst, latency, asr, admission, dial, calls or chaos)\n", args[0])
		return 2
	}
}
