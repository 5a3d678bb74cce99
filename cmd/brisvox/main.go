package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/internal/bubble"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/sim"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: brisvox demo | brisvox sim [--json] [--suite main|tools] | brisvox vad [--engine energy|silero] FILE.wav | brisvox check FILE... | brisvox serve --agent FILE [--addr HOST:PORT] | brisvox sign --secret-env NAME --path /pcm [--ttl 5m]")
		return 2
	}
	switch args[0] {
	case "demo":
		return demo(stdout, stderr)
	case "sim":
		fs := flag.NewFlagSet("sim", flag.ContinueOnError)
		fs.SetOutput(stderr)
		asJSON := fs.Bool("json", false, "print a JSON array instead of one line per scenario")
		suite := fs.String("suite", "main", "which suite: main (s01-s12 and played text) or tools (S1-S6, two shapes)")
		if err := fs.Parse(args[1:]); err != nil {
			return 2
		}
		var cases []sim.Case
		switch *suite {
		case "main":
			cases = append(sim.Scenarios(), sim.PlayedTextCases()...)
		case "tools":
			cases = sim.ToolCases()
		default:
			fmt.Fprintf(stderr, "brisvox sim: unknown suite %q (want main or tools)\n", *suite)
			return 2
		}
		return suites(stdout, stderr, cases, *asJSON)
	case "vad":
		return vadCommand(args[1:], stdout, stderr)
	case "serve":
		return serveCommand(args[1:], stdout, stderr)
	case "sign":
		return signCommand(args[1:], stdout, stderr)
	case "check":
		return checkCommand(args[1:], stdout, stderr, os.LookupEnv)
	default:
		fmt.Fprintf(stderr, "brisvox: unknown command %q (want demo, sim, vad, check, serve or sign)\n", args[0])
		return 2
	}
}

// line is one scenario's result as printed.
type line struct {
	Name         string    `json:"name"`
	Passed       bool      `json:"passed"`
	Error        string    `json:"error,omitempty"`
	FirstAudioMS []float64 `json:"first_audio_ms"`
	ToSilenceMS  []float64 `json:"interrupt_to_silence_ms"`
	Fingerprint  string    `json:"fingerprint"`
}

func suites(stdout, stderr io.Writer, cases []sim.Case, asJSON bool) int {
	lines := make([]line, 0, len(cases))
	err := bubble.Run(func(t *testing.T) {
		for _, c := range cases {
			out := sim.RunCase(c)
			l := line{Name: out.Name, Passed: out.Passed, Fingerprint: out.Fingerprint,
				FirstAudioMS: millis(out.FirstAudio), ToSilenceMS: millis(out.ToSilence)}
			if out.Err != nil {
				l.Error = out.Err.Error()
			}
			lines = append(lines, l)
		}
	})
	if err != nil {
		fmt.Fprintln(stderr, "brisvox sim:", err)
		return 1
	}
	failed := 0
	for _, l := range lines {
		if !l.Passed {
			failed++
		}
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(lines); err != nil {
			return 1
		}
	} else {
		for _, l := range lines {
			verdict := "pass"
			if !l.Passed {
				verdict = "FAIL"
			}
			fmt.Fprintf(stdout, "%-40s %s first_audio_ms=%v to_silence_ms=%v fingerprint=%s", l.Name, verdict, l.FirstAudioMS, l.ToSilenceMS, l.Fingerprint)
			if l.Error != "" {
				fmt.Fprintf(stdout, " error=%q", l.Error)
			}
			fmt.Fprintln(stdout)
		}
		fmt.Fprintf(stdout, "%d passed, %d failed\n", len(lines)-failed, failed)
	}
	if failed > 0 {
		return 1
	}
	return 0
}

func millis(ds []time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = float64(d.Microseconds()) / 1000
	}
	return out
}

// demo runs one call with a tool turn and a barge-in and prints it.
func demo(stdout, stderr io.Writer) int {
	var r *sim.Result
	var c *sim.Call
	var runErr error
	err := bubble.Run(func(t *testing.T) {
		c = sim.DemoCall()
		r, runErr = c.Run()
	})
	if err == nil {
		err = runErr
	}
	if err != nil {
		fmt.Fprintln(stderr, "brisvox demo:", err)
		return 1
	}
	fmt.Fprintln(stdout, "Simulated call on the production actor tree (mock STT, LLM and TTS; virtual time).")
	fmt.Fprintln(stdout, "\nThe caller's script:")
	for _, st := range c.Scenario.Steps {
		if st.Speech {
			fmt.Fprintf(stdout, "  speaks %-6v %q\n", st.Duration, st.Text)
		} else {
			fmt.Fprintf(stdout, "  silent %v\n", st.Duration)
		}
	}
	fmt.Fprintln(stdout, "\nThe conversation as the bot remembers it (only what the caller heard):")
	for i := 0; i < r.Context.Len(); i++ {
		m := r.Context.At(i)
		switch m.Role {
		case agent.RoleTool:
			fmt.Fprintf(stdout, "  %-9s [%s] %s\n", m.Role, m.ToolCallID, m.Text)
		case agent.RoleAssistant:
			calls := ""
			for _, tc := range m.ToolCalls {
				calls += fmt.Sprintf(" -> %s(%s) [%s]", tc.Name, string(tc.Arguments), tc.ID)
			}
			fmt.Fprintf(stdout, "  %-9s %s%s\n", m.Role, m.Text, calls)
		default:
			fmt.Fprintf(stdout, "  %-9s %s\n", m.Role, m.Text)
		}
	}
	fmt.Fprintln(stdout, "\nEach turn's timeline (ms from the end of the caller's speech):")
	for _, tl := range r.Timelines {
		base, ok := tl.Marks[messages.MarkVADStop]
		if !ok {
			base = tl.Marks[messages.MarkInterrupt]
		}
		kinds := make([]messages.MarkKind, 0, len(tl.Marks))
		for k := range tl.Marks {
			kinds = append(kinds, k)
		}
		sort.Slice(kinds, func(i, j int) bool {
			return tl.Marks[kinds[i]].Before(tl.Marks[kinds[j]]) || (tl.Marks[kinds[i]].Equal(tl.Marks[kinds[j]]) && kinds[i] < kinds[j])
		})
		parts := make([]string, 0, len(kinds))
		for _, k := range kinds {
			parts = append(parts, fmt.Sprintf("%s=%d", k, tl.Marks[k].Sub(base).Milliseconds()))
		}
		fmt.Fprintf(stdout, "  epoch %d (at %.2fs): %s\n", tl.Epoch, base.Sub(r.Start).Seconds(), strings.Join(parts, " "))
	}
	fmt.Fprintf(stdout, "\nInterrupts at the output: %d. Checks: ", r.Interrupts())
	if err := sim.CheckInvariants(r, 1); err != nil {
		fmt.Fprintln(stdout, "FAILED:", err)
		return 1
	}
	fmt.Fprintln(stdout, "no stale audio, context equals what was heard, roles valid.")
	return 0
}
