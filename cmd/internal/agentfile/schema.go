package agentfile

import (
	"slices"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/llm/anthropic"
	"github.com/brisvox/brisvox/providers/llm/gemini"
	"github.com/brisvox/brisvox/providers/llm/openai"
	"github.com/brisvox/brisvox/providers/llm/rules"
	"github.com/brisvox/brisvox/providers/stt/deepgram"
	"github.com/brisvox/brisvox/providers/stt/pocketsphinx"
	"github.com/brisvox/brisvox/providers/tts/cartesia"
	aura "github.com/brisvox/brisvox/providers/tts/deepgram"
	"github.com/brisvox/brisvox/providers/tts/elevenlabs"
	"github.com/brisvox/brisvox/providers/tts/flite"
	"github.com/brisvox/brisvox/providers/tts/openaispeech"
)

// sttProviders, llmProviders and ttsProviders are the providers a file
// may name, by stage, in the order hints list them: each is the option
// table its package publishes, from which the schema of the provider's
// table is derived (names, types, bounds, enums, the key variable, the
// warm-up probes). They are never written after init.
var (
	sttProviders = []providers.Options{deepgram.Options(), pocketsphinx.Options()}
	llmProviders = []providers.Options{openai.Options(), anthropic.Options(), gemini.Options(), rules.Options()}
	ttsProviders = []providers.Options{flite.Options(), cartesia.Options(), elevenlabs.Options(), aura.Options(), openaispeech.Options()}
)

// stages pairs each stage with its providers.
func stages() []struct {
	stage string
	specs []providers.Options
} {
	return []struct {
		stage string
		specs []providers.Options
	}{{"stt", sttProviders}, {"llm", llmProviders}, {"tts", ttsProviders}}
}

// optOf is spec's option of that name, or nil.
func optOf(spec *providers.Options, name string) *providers.Option {
	for i := range spec.List {
		if spec.List[i].Name == name {
			return &spec.List[i]
		}
	}
	return nil
}

// ProviderInfo is a provider of the schema: its stage (stt, llm, tts),
// name, warm-up probes and option table.
type ProviderInfo struct {
	Stage, Name string
	// Warm are the values its stage's warm setting may take, the first
	// the default.
	Warm []string
	// Table is the provider's option table: what the file may set and
	// how each value is written into the provider's Config.
	Table providers.Options
}

// Providers lists the schema's providers, for the code that builds them
// from a File (and its tests).
func Providers() []ProviderInfo {
	var out []ProviderInfo
	for _, st := range stages() {
		for _, p := range st.specs {
			out = append(out, ProviderInfo{Stage: st.stage, Name: p.Vendor, Warm: slices.Clone(p.Warm), Table: p})
		}
	}
	return out
}

// Table is the option table of the provider of that stage and name.
func Table(stage, name string) (providers.Options, bool) {
	for _, p := range Providers() {
		if p.Stage == stage && p.Name == name {
			return p.Table, true
		}
	}
	return providers.Options{}, false
}
