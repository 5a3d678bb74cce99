package agent

import (
	"strings"
	"testing"
)

// BenchmarkAssembler assembles a typical response: a sentence in 12 text
// deltas and two calls whose arguments arrive in 8 interleaved fragments
// each, then builds the assistant message. Run with -benchmem.
func BenchmarkAssembler(b *testing.B) {
	var words []string
	for _, w := range strings.Fields("Sure, let me check the weather in Paris and book a table for two.") {
		words = append(words, w+" ")
	}
	argsA := splitInPieces(`{"city":"Paris","country":"FR","units":"metric","days":3}`, 8)
	argsB := splitInPieces(`{"restaurant":"Chez Nous","party":2,"time":"19:30","notes":"window"}`, 8)
	b.ReportAllocs()
	for b.Loop() {
		a, err := NewAssembler(AssemblerConfig{})
		if err != nil {
			b.Fatal(err)
		}
		for _, w := range words {
			if err := a.AppendText(w); err != nil {
				b.Fatal(err)
			}
		}
		for i := range argsA {
			fa := CallFragment{Index: 0, Arguments: argsA[i]}
			fb := CallFragment{Index: 1, Arguments: argsB[i]}
			if i == 0 {
				fa.ID, fa.Name = "call_weather_01", "get_weather"
				fb.ID, fb.Name = "call_booking_02", "book_table"
			}
			if err := a.AppendCall(fa); err != nil {
				b.Fatal(err)
			}
			if err := a.AppendCall(fb); err != nil {
				b.Fatal(err)
			}
		}
		r, err := a.Finish()
		if err != nil {
			b.Fatal(err)
		}
		if m, ok := r.AssistantMessage(); !ok || len(m.ToolCalls) != 2 || r.Calls[1].Invalid != nil {
			b.Fatalf("bad response: %+v", r)
		}
	}
}

// splitInPieces cuts s into n pieces of about equal length.
func splitInPieces(s string, n int) []string {
	out := make([]string, 0, n)
	step := (len(s) + n - 1) / n
	for i := 0; i < n; i++ {
		lo, hi := min(i*step, len(s)), min((i+1)*step, len(s))
		out = append(out, s[lo:hi])
	}
	return out
}
