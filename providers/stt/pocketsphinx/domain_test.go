package pocketsphinx

import (
	"errors"
	"strings"
	"testing"

	"github.com/brisvox/brisvox/providers/stt/pocketsphinx/ngram"
)

// TestDomainModel: the domain's words are checked against the
// dictionary, and the error names the missing ones; a domain of known
// words builds a trigram ARPA model.
// Mutation caught (seen failing): the dictionary not given to
// ngram.New (the unknown words pass, and pocketsphinx would drop them at
// load without a word).
func TestDomainModel(t *testing.T) {
	if err := (Config{}).Validate(); err != nil {
		t.Skipf("the Debian model is missing: %v", err)
	}
	tests := []struct {
		name   string
		domain []string
		want   []error
		says   string
	}{
		{"known words", []string{"book a table for two", "what time is it"}, nil, ""},
		{"missing words named", []string{"book a table for zorblax", "hiya", "oclock please"}, []error{ErrInvalidConfig, ngram.ErrUnknownWords}, "3 words: hiya, oclock, zorblax"},
		{"an empty sentence", []string{"hello", " "}, []error{ErrInvalidConfig, ngram.ErrInvalidConfig}, "sentence 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			arpa, err := domainModel(Config{Domain: tt.domain}.withDefaults())
			for _, w := range tt.want {
				if !errors.Is(err, w) {
					t.Fatalf("domainModel: %v, want %v", err, w)
				}
			}
			if tt.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				if !strings.HasPrefix(string(arpa), "\\data\\\nngram 1=") || !strings.Contains(string(arpa), "\\3-grams:") {
					t.Errorf("not a trigram ARPA model: %.60q", arpa)
				}
				return
			}
			if !strings.Contains(err.Error(), tt.says) {
				t.Errorf("error %q does not say %q", err, tt.says)
			}
		})
	}
}
