package sim

import (
	"strings"
	"testing"
	"testing/synctest"
)

// TestSuiteCanFail breaks one thing at a time and pins which check of the
// suite rejects it (or, for the rows with an empty want, that a fault
// within the budget passes). Each check was mutation-checked: removing it
// from the suite (or weakening it as the note says) makes its row fail.
func TestSuiteCanFail(t *testing.T) {
	cases := map[string]Case{}
	for _, c := range append(Scenarios(), PlayedTextCases()...) {
		cases[c.Name] = c
	}
	mutations := map[string]Mutation{}
	for _, m := range Mutations() {
		mutations[m.Name] = m
	}
	tests := []struct {
		mutation, scenario string
		want               string // substring of the failure; empty: must pass
	}{
		// s01's exact first-audio check (mutation: compare with <= want+200ms).
		{"end_of_turn_plus_100ms", "s01_happy_path", "first audio 1.109s after the end of speech, want exactly 1.009s"},
		// The barge-in bound allows one frame of slack: +20 ms passes...
		{"barge_in_confirmation_plus_20ms", "s02_barge_in", ""},
		// ...+40 ms does not (mutation: BargeInBound 80 ms).
		{"barge_in_confirmation_plus_40ms", "s02_barge_in", "interrupt at the output 80ms after the barge-in started"},
		// Interrupts are counted at the output (mutation: expect() ignoring interrupts).
		{"dropped_interrupt_at_output", "s02_barge_in", "0 interrupts at the output, want 1"},
		{"dropped_interrupt_at_output", "played_text_exact_at_3300ms", "0 interrupts at the output, want 1"},
		// Stale audio is found in wire order (mutation: CheckNoStaleAudio returning nil).
		{"old_turn_audio_after_interrupt", "s02_barge_in", "audio of epoch 1 at 3.04s after a clear to epoch 2"},
		// The context never holds an unheard word, margin or not (mutation:
		// the "more than heard" branch removed).
		{"unheard_word_kept", "s02_barge_in", "more than heard"},
		{"unheard_word_kept", "played_text_exact_at_3300ms", "more than heard"},
		{"unheard_word_kept", "played_text_margin_at_3300ms", "more than heard"},
		// A client that reads slower than real time hears less than the
		// pacer released: the engine's heard position runs ahead, and the
		// played-text check says so (the pacer has no playout feedback from
		// the transport yet).
		{"slow_transport_consumer_30ms", "s02_barge_in", "more than heard"},
		{"slow_transport_consumer_150ms", "s02_barge_in", "more than heard"},
		{"slow_transport_consumer_150ms", "s01_happy_path", "more than heard"},
	}
	for _, tc := range tests {
		t.Run(tc.mutation+"/"+tc.scenario, func(t *testing.T) {
			c, ok := cases[tc.scenario]
			m, ok2 := mutations[tc.mutation]
			if !ok || !ok2 {
				t.Fatalf("unknown scenario or mutation")
			}
			build := c.Build
			c.Build = func() *Call { call := build(); m.Apply(call); return call }
			synctest.Test(t, func(t *testing.T) {
				out := RunCase(c)
				switch {
				case tc.want == "" && !out.Passed:
					t.Fatalf("want a pass within the budget, got %v", out.Err)
				case tc.want != "" && out.Passed:
					t.Fatalf("the suite did not notice %s", tc.mutation)
				case tc.want != "" && !strings.Contains(out.Err.Error(), tc.want):
					t.Fatalf("failed for another reason: %v\nwant %q", out.Err, tc.want)
				}
			})
		})
	}
}
