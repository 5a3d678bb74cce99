package providers_test

import (
	"testing"

	"github.com/brisvox/brisvox/providers"
)

type named struct{ vendor, model string }

func (n named) Vendor() string { return n.vendor }
func (n named) Model() string  { return n.model }

// TestNameOf: a Named provider names itself; any other is "unknown".
// (Mutation seen failing: NameOf ignoring Named — "openai" read as
// "unknown".)
func TestNameOf(t *testing.T) {
	cases := []struct {
		name          string
		p             any
		vendor, model string
	}{
		{"named", named{"openai", "gpt-4o-mini"}, "openai", "gpt-4o-mini"},
		{"named without a model", named{"flite", ""}, "flite", ""},
		{"not named", struct{}{}, "unknown", ""},
		{"nil", nil, "unknown", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if v, m := providers.NameOf(c.p); v != c.vendor || m != c.model {
				t.Errorf("NameOf = %q, %q; want %q, %q", v, m, c.vendor, c.model)
			}
		})
	}
}
