package agentbuild

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/brisvox/brisvox/cmd/internal/agentfile"
	"github.com/brisvox/brisvox/providers/llm/rules"
	"github.com/brisvox/brisvox/providers/stt/pocketsphinx"
)

// domainFile is an agent file with stt and llm tables as given.
func domainFile(stt, llm string) string {
	return "prompt = \"You are a test.\"\n[stt]\nprovider = \"pocketsphinx\"\n" + stt + "\n[llm]\n" + llm +
		"\n[tts]\nprovider = \"flite\"\n[transports.webrtc]\nenabled = true\n"
}

// TestSTTDomain: [stt] domain = "llm" biases pocketsphinx to the rules
// provider's phrases; with a language model that has none the build
// fails at the stt table saying why; a value outside none and llm, or a
// weight out of range, is refused by the file's check.
// Mutations caught (seen failing): prepare not run (the rules file fails
// in pocketsphinx.New: "no Domain"); the phrases given whatever the
// language model (the openai file builds).
func TestSTTDomain(t *testing.T) {
	keys(t)
	tests := []struct {
		name, stt, llm string
		parse          string // a diagnostic of the file's check
		build          string // a diagnostic of Build
	}{
		{name: "rules", stt: `domain = "llm"`, llm: `provider = "rules"`},
		{name: "rules with a weight", stt: "domain = \"llm\"\ndomain_weight = 0.8", llm: `provider = "rules"`},
		{name: "off", stt: `domain = "none"`, llm: `provider = "rules"`},
		{name: "a model without phrases", stt: `domain = "llm"`, llm: "provider = \"openai\"\nmodel = \"gpt-4o-mini\"", build: `[llm] provider "openai" publishes none`},
		{name: "a bad value", stt: `domain = "grammar"`, llm: `provider = "rules"`, parse: "none, llm"},
		{name: "a weight of 1", stt: "domain = \"llm\"\ndomain_weight = 1.0", llm: `provider = "rules"`, parse: "domain_weight"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, ds := agentfile.Parse("d.toml", []byte(domainFile(tt.stt, tt.llm)), agentfile.TOML, agentfile.Options{KnownTools: ToolNames()})
			if tt.parse != "" {
				if len(ds) == 0 || !strings.Contains(ds.String(), tt.parse) {
					t.Fatalf("check: %v, want a diagnostic saying %q", ds, tt.parse)
				}
				return
			}
			if len(ds) > 0 {
				t.Fatalf("check: %v", ds)
			}
			a, ds := Build(f, Options{})
			if tt.build != "" {
				if a != nil || len(ds) != 1 || ds[0].Path != "stt" || !strings.Contains(ds[0].Msg, tt.build) {
					t.Fatalf("Build: %v, want one stt diagnostic saying %q", ds, tt.build)
				}
				return
			}
			if len(ds) > 0 {
				t.Fatalf("Build: %v", ds)
			}
			_ = a.Close()
		})
	}
}

// TestLLMDomain: the phrases llmDomain gives are the rules provider's,
// only when asked, and a language model without any is ErrDomain.
func TestLLMDomain(t *testing.T) {
	f := &agentfile.File{}
	f.LLM.Name = "rules"
	c := &pocketsphinx.Config{DomainFrom: pocketsphinx.DomainFromLLM}
	if err := llmDomain(c, f); err != nil || !slices.Equal(c.Domain, rules.Phrases()) {
		t.Fatalf("llmDomain: %v, %d phrases, want the rules provider's %d", err, len(c.Domain), len(rules.Phrases()))
	}
	off := &pocketsphinx.Config{DomainFrom: pocketsphinx.DomainFromNone}
	if err := llmDomain(off, f); err != nil || off.Domain != nil {
		t.Fatalf("llmDomain with domain none: %v, %d phrases", err, len(off.Domain))
	}
	f.LLM.Name = "anthropic"
	if err := llmDomain(&pocketsphinx.Config{DomainFrom: pocketsphinx.DomainFromLLM}, f); !errors.Is(err, ErrDomain) {
		t.Fatalf("llmDomain for anthropic: %v, want ErrDomain", err)
	}
}
