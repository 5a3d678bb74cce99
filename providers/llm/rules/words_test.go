package rules

import (
	"slices"
	"testing"
)

// TestWords: a transcript's words as the provider reads them and a
// recognizer's measurement scores them (brisvox-bench asr).
func TestWords(t *testing.T) {
	cases := []struct {
		name, in string
		want     []string
	}{
		{"lower case, punctuation separates", "Hello, there!", []string{"hello", "there"}},
		// Mutation: dropping the apostrophe case splits "o'clock" into "o" "clock".
		{"apostrophes dropped", "at nine o'clock, I'd", []string{"at", "9", "oclock", "id"}},
		// Mutation: not folding number words leaves "for four" != "for 4".
		{"number words become digits", "for four at 4", []string{"for", "4", "at", "4"}},
		// Mutation: no tens+unit join scores "forty five" as two words against "45".
		{"a ten and a unit are one number", "six forty five", []string{"6", "45"}},
		{"a ten alone", "seven thirty", []string{"7", "30"}},
		{"a ten before a non-unit", "twenty people", []string{"20", "people"}},
		// "twenty ten" is not 30: only units 1..9 join a ten.
		{"a ten before ten stays two", "twenty ten", []string{"20", "10"}},
		{"p.m. splits", "eight p.m.", []string{"8", "p", "m"}},
		{"digits split from letters", "7pm", []string{"7", "pm"}},
		{"empty", "  ", []string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Words(c.in); !slices.Equal(got, c.want) {
				t.Errorf("Words(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}
