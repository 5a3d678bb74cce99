package brisvoxsim

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/sim"
)

// Report is what a command's calls gave, made by Command.Run inside the
// bubble and written by Write outside it.
type Report struct {
	cmd Command
	// lines are sim's, one per scenario.
	lines []line
	// call, result and err are demo's.
	call   *sim.Call
	result *sim.Result
	err    error
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

func lineOf(out sim.Outcome) line {
	l := line{Name: out.Name, Passed: out.Passed, Fingerprint: out.Fingerprint,
		FirstAudioMS: millis(out.FirstAudio), ToSilenceMS: millis(out.ToSilence)}
	if out.Err != nil {
		l.Error = out.Err.Error()
	}
	return l
}

func millis(ds []time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = float64(d.Microseconds()) / 1000
	}
	return out
}

// Write prints the report on stdout (a run that could not be made on
// stderr). The error wraps ErrFailed when a scenario failed, the demo's
// call or its checks failed, or stdout refused the report.
func (r Report) Write(stdout, stderr io.Writer) error {
	if r.cmd.Name == Demo {
		return r.writeDemo(stdout, stderr)
	}
	return r.writeSuite(stdout)
}

func (r Report) writeSuite(stdout io.Writer) error {
	failed := 0
	for _, l := range r.lines {
		if !l.Passed {
			failed++
		}
	}
	if r.cmd.JSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(r.lines); err != nil {
			return fmt.Errorf("%w: %w", ErrFailed, err)
		}
	} else {
		for _, l := range r.lines {
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
		fmt.Fprintf(stdout, "%d passed, %d failed\n", len(r.lines)-failed, failed)
	}
	if failed > 0 {
		return fmt.Errorf("%w: %d of %d scenarios", ErrFailed, failed, len(r.lines))
	}
	return nil
}

// writeDemo prints the demo call: the caller's script, the conversation as
// the bot remembers it, each turn's timeline and the invariants' verdict.
func (r Report) writeDemo(stdout, stderr io.Writer) error {
	if r.err != nil {
		fmt.Fprintln(stderr, "brisvox-sim demo:", r.err)
		return fmt.Errorf("%w: the demo call: %w", ErrFailed, r.err)
	}
	res := r.result
	fmt.Fprintln(stdout, "Simulated call on the production actor tree (mock STT, LLM and TTS; virtual time).")
	fmt.Fprintln(stdout, "\nThe caller's script:")
	for _, st := range r.call.Scenario.Steps {
		if st.Speech {
			fmt.Fprintf(stdout, "  speaks %-6v %q\n", st.Duration, st.Text)
		} else {
			fmt.Fprintf(stdout, "  silent %v\n", st.Duration)
		}
	}
	fmt.Fprintln(stdout, "\nThe conversation as the bot remembers it (only what the caller heard):")
	for i := 0; i < res.Context.Len(); i++ {
		m := res.Context.At(i)
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
	for _, tl := range res.Timelines {
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
		fmt.Fprintf(stdout, "  epoch %d (at %.2fs): %s\n", tl.Epoch, base.Sub(res.Start).Seconds(), strings.Join(parts, " "))
	}
	fmt.Fprintf(stdout, "\nInterrupts at the output: %d. Checks: ", res.Interrupts())
	if err := sim.CheckInvariants(res, 1); err != nil {
		fmt.Fprintln(stdout, "FAILED:", err)
		return fmt.Errorf("%w: the demo's checks: %w", ErrFailed, err)
	}
	_, err := fmt.Fprintln(stdout, "no stale audio, context equals what was heard, roles valid.")
	if err != nil {
		return fmt.Errorf("%w: %w", ErrFailed, err)
	}
	return nil
}
