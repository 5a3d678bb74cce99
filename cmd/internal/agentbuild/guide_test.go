package agentbuild

import (
	"slices"
	"testing"

	"github.com/brisvox/brisvox/cmd/internal/agentfile"
	"github.com/brisvox/brisvox/providers/llm/rules"
)

// TestGuide: the page's guide holds the file's description and tools, and
// the rules provider's phrases to try only when the rules provider
// answers (a real model has no list). Mutations seen failing: the
// examples given for every provider -> the openai agent shows the rules'
// phrases; the description not passed on -> empty.
func TestGuide(t *testing.T) {
	keys(t)
	cases := []struct {
		name, llm    string
		wantExamples bool
	}{
		{"rules", "provider = \"rules\"\n", true},
		{"a real model", "provider = \"openai\"\nmodel = \"gpt-4o-mini\"\napi_key_env = \"OPENAI_API_KEY\"\n", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := "prompt = \"p\"\ndescription = \"Tells the time.\"\n[stt]\nprovider = \"pocketsphinx\"\n[llm]\n" + c.llm +
				"[tts]\nprovider = \"flite\"\n[tools]\nenabled = [\"get_time\", \"end_call\"]\n[transports.pcm]\nenabled = true\nrate = 16000\n"
			f, ds := agentfile.Parse("g.toml", []byte(src), agentfile.TOML, agentfile.Options{KnownTools: ToolNames()})
			if len(ds) > 0 {
				t.Fatalf("diagnostics:\n%s", ds)
			}
			a, ds := Build(f, Options{})
			if len(ds) > 0 {
				t.Fatalf("build:\n%s", ds)
			}
			defer a.Close()
			g := a.Guide()
			if g.Name != "g" || g.Description != "Tells the time." || !slices.Equal(g.Tools, []string{"get_time", "end_call"}) {
				t.Errorf("guide %+v", g)
			}
			if got := len(g.Examples) > 0; got != c.wantExamples {
				t.Errorf("examples %q, want some: %v", g.Examples, c.wantExamples)
			}
			if c.wantExamples && !slices.Equal(g.Examples, rules.Examples()) {
				t.Errorf("examples %q, want the rules provider's %q", g.Examples, rules.Examples())
			}
		})
	}
}
