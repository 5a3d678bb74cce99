package agentbuild

import (
	"fmt"
	"io"

	"github.com/brisvox/brisvox/cmd/internal/agentfile"
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

// builder makes one provider: a fresh config for the provider's option
// table to fill (rate: the STT's input rate), what the config takes from
// the rest of the file once its options are in (prepare, may be nil),
// and the constructor.
type builder struct {
	config  func(rate int) any
	prepare func(cfg any, f *agentfile.File) error
	build   func(cfg any) (any, error)
}

// ctor adapts a provider constructor New(Config) (*T, error).
func ctor[C any, T any](newT func(C) (*T, error)) func(any) (any, error) {
	return func(cfg any) (any, error) {
		t, err := newT(*cfg.(*C))
		if err != nil {
			return nil, err
		}
		return t, nil
	}
}

// builders are the providers by stage and name, as the schema lists them
// (never written after init). The options are not here: each provider's
// table (its Options) writes them into the config.
var builders = map[[2]string]builder{
	{"stt", "deepgram"}:     {config: func(r int) any { return &deepgram.Config{SampleRate: r} }, build: ctor(deepgram.New)},
	{"stt", "pocketsphinx"}: {config: func(r int) any { return &pocketsphinx.Config{SampleRate: r} }, prepare: llmDomain, build: ctor(pocketsphinx.New)},
	{"llm", "openai"}:       {config: func(int) any { return &openai.Config{} }, build: ctor(openai.New)},
	{"llm", "anthropic"}:    {config: func(int) any { return &anthropic.Config{} }, build: ctor(anthropic.New)},
	{"llm", "gemini"}:       {config: func(int) any { return &gemini.Config{} }, build: ctor(gemini.New)},
	{"llm", "rules"}:        {config: func(int) any { return &rules.Config{} }, build: ctor(rules.New)},
	{"tts", "flite"}:        {config: func(int) any { return &flite.Config{} }, build: ctor(flite.New)},
	{"tts", "cartesia"}:     {config: func(int) any { return &cartesia.Config{} }, build: ctor(cartesia.New)},
	{"tts", "elevenlabs"}:   {config: func(int) any { return &elevenlabs.Config{} }, build: ctor(elevenlabs.New)},
	{"tts", "deepgram"}:     {config: func(int) any { return &aura.Config{} }, build: ctor(aura.New)},
	{"tts", "openaispeech"}: {config: func(int) any { return &openaispeech.Config{} }, build: ctor(openaispeech.New)},
}

// phraseSources are the language-model providers that publish what their
// callers say, by name (never written after init): what [stt] domain =
// "llm" biases the recognizer to.
var phraseSources = map[string]func() []string{"rules": rules.Phrases}

// llmDomain fills a pocketsphinx config's Domain with the phrases of the
// file's language model when the file says domain = "llm". A language
// model without phrases is ErrDomain: the recognizer is not silently
// left unbiased.
func llmDomain(cfg any, f *agentfile.File) error {
	c := cfg.(*pocketsphinx.Config)
	if c.DomainFrom != pocketsphinx.DomainFromLLM {
		return nil
	}
	phrases, ok := phraseSources[f.LLM.Name]
	if !ok {
		return fmt.Errorf("%w: domain = %q biases the recognizer to the language model's phrases, and [llm] provider %q publishes none (the rules provider does); set domain = %q", ErrDomain, pocketsphinx.DomainFromLLM, f.LLM.Name, pocketsphinx.DomainFromNone)
	}
	c.Domain = phrases()
	return nil
}

// newProvider builds provider p of stage of file f with its options. The
// result is a providers.STT, LLM or TTS (by stage) and its closer.
func newProvider(f *agentfile.File, stage string, p agentfile.Provider, rate int) (any, io.Closer, error) {
	b, ok := builders[[2]string{stage, p.Name}]
	table, known := agentfile.Table(stage, p.Name)
	if !ok || !known {
		return nil, nil, fmt.Errorf("%w: %s %q", ErrUnknownProvider, stage, p.Name)
	}
	cfg := b.config(rate)
	if err := table.Apply(cfg, values(p.Options)); err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrOption, err)
	}
	if b.prepare != nil {
		if err := b.prepare(cfg, f); err != nil {
			return nil, nil, err
		}
	}
	v, err := b.build(cfg)
	if err != nil {
		return nil, nil, err
	}
	return v, closerOf(v), nil
}

// values are the options' values by name.
func values(opts map[string]agentfile.Option) map[string]providers.Value {
	out := make(map[string]providers.Value, len(opts))
	for name, o := range opts {
		out[name] = o.Value
	}
	return out
}

// closerOf returns v's Close, or a no-op for a provider without one.
func closerOf(v any) io.Closer {
	if c, ok := v.(io.Closer); ok {
		return c
	}
	return nopCloser{}
}

type nopCloser struct{}

func (nopCloser) Close() error { return nil }
