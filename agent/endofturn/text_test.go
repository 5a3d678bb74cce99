package endofturn

import (
	"strings"
	"testing"
)

// TestText reads transcripts as a recognizer gives them (lower case, no
// punctuation) and as a keyboard or a model would (capitals, stops).
// Mutations caught: the first word read instead of the last ("a table
// for four" left hanging); punctuation kept on the word ("for," finished);
// case kept ("The" finished); "you" taken as dangling ("thank you" left
// hanging).
func TestText(t *testing.T) {
	tests := []struct {
		text string
		want float32
	}{
		{"what time is it", TextComplete},
		{"hello", TextComplete},
		{"what can you do", TextComplete},
		{"thank you", TextComplete},
		{"yes", TextComplete},
		{"no", TextComplete},
		{"a table for four", TextComplete},
		{"book a table for", TextIncomplete},
		{"i want to book a table for two at", TextIncomplete},
		{"at seven and", TextIncomplete},
		{"under the", TextIncomplete},
		{"I want to", TextIncomplete},
		{"um", TextIncomplete},
		{"for four people uh", TextIncomplete},
		{"A table for,", TextIncomplete},
		{"For two, please.", TextComplete},
		{"I'm", TextIncomplete},
		{"It's UNDER THE", TextIncomplete},
		{"", TextIncomplete},
		{"  ...  ", TextIncomplete},
		{"¿qué hora es?", TextComplete},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			if got := Text(tt.text); got != tt.want {
				t.Errorf("Text(%q) = %v, want %v", tt.text, got, tt.want)
			}
		})
	}
}

// TestTextDelay: through the policy, a finished turn waits MinDelay and
// one left hanging MaxDelay.
func TestTextDelay(t *testing.T) {
	p, err := NewPolicy(PolicyConfig{MinDelay: 0, MaxDelay: 800e6})
	if err != nil {
		t.Fatal(err)
	}
	if d := p.Delay(Text("what time is it")); d != 0 {
		t.Errorf("finished: %v", d)
	}
	if d := p.Delay(Text("a table for")); d != 800e6 {
		t.Errorf("hanging: %v", d)
	}
}

// FuzzText: any text gives one of the two estimates, the same with
// punctuation or space after it, and for ASCII text the same in capitals.
func FuzzText(f *testing.F) {
	for _, s := range []string{"what time is it", "a table for", "Um,", "", "I'm", "thank you."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Text(s)
		if got != TextComplete && got != TextIncomplete {
			t.Fatalf("Text(%q) = %v", s, got)
		}
		if again := Text(s + " ?! "); again != got {
			t.Fatalf("Text(%q) = %v, %v with punctuation after", s, got, again)
		}
		ascii := true
		for i := 0; i < len(s); i++ {
			ascii = ascii && s[i] < 0x80
		}
		if again := Text(strings.ToUpper(s)); ascii && again != got {
			t.Fatalf("Text(%q) = %v, %v in capitals", s, got, again)
		}
	})
}
