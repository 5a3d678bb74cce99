package agentfile

import (
	"strings"
	"testing"
)

// TestDescription: the page's guide text is read, and a long one is
// refused with its length. Mutation seen failing: the length check
// dropped -> no diagnostic for 401 characters.
func TestDescription(t *testing.T) {
	base := "prompt = \"p\"\n[stt]\nprovider = \"pocketsphinx\"\n[llm]\nprovider = \"rules\"\n[tts]\nprovider = \"flite\"\n"
	cases := []struct {
		name, desc string
		wantDiag   string
	}{
		{"short", "Tells the time and books tables.", ""},
		{"at the limit", strings.Repeat("é", maxDescriptionRunes), ""},
		{"over the limit", strings.Repeat("a", maxDescriptionRunes+1), "1:15: description: has 401 characters, over 400"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, ds := Parse("agent.toml", []byte("description = \""+c.desc+"\"\n"+base), TOML, Options{LookupEnv: envWith()})
			var got []string
			for _, d := range ds {
				if d.Path == "description" {
					got = append(got, d.String())
				}
			}
			if c.wantDiag == "" {
				if len(got) != 0 || f == nil || f.Description.V != c.desc {
					t.Fatalf("diagnostics %v, description %q", got, f.Description.V)
				}
				return
			}
			if len(got) != 1 || !strings.Contains(got[0], c.wantDiag) {
				t.Fatalf("diagnostics %v, want one with %q", got, c.wantDiag)
			}
		})
	}
}
