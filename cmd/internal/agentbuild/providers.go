package agentbuild

import (
	"fmt"
	"io"
	"reflect"

	"github.com/brisvox/brisvox/cmd/internal/agentfile"
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

// builder makes one provider: a fresh config to fill, the hooks of its
// enum options, and the constructor (rate: the STT's input rate).
type builder struct {
	config func(rate int) any
	hooks  map[string]special
	build  func(cfg any) (any, error)
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
// (never written after init).
var builders = map[[2]string]builder{
	{"stt", "deepgram"}:     {config: func(r int) any { return &deepgram.Config{SampleRate: r} }, build: ctor(deepgram.New)},
	{"stt", "pocketsphinx"}: {config: func(r int) any { return &pocketsphinx.Config{SampleRate: r} }, build: ctor(pocketsphinx.New)},
	{"llm", "openai"}:       {config: func(int) any { return &openai.Config{} }, build: ctor(openai.New)},
	{"llm", "anthropic"}:    {config: func(int) any { return &anthropic.Config{} }, build: ctor(anthropic.New)},
	{"llm", "gemini"}:       {config: func(int) any { return &gemini.Config{} }, build: ctor(gemini.New)},
	{"llm", "rules"}:        {config: func(int) any { return &rules.Config{} }, build: ctor(rules.New)},
	{"tts", "flite"}:        {config: func(int) any { return &flite.Config{} }, build: ctor(flite.New)},
	{"tts", "cartesia"}:     {config: func(int) any { return &cartesia.Config{} }, build: ctor(cartesia.New)},
	{"tts", "elevenlabs"}: {config: func(int) any { return &elevenlabs.Config{} }, build: ctor(elevenlabs.New),
		hooks: map[string]special{"stability": voice, "similarity_boost": voice, "style": voice, "use_speaker_boost": voice, "speed": voice}},
	{"tts", "deepgram"}: {config: func(int) any { return &aura.Config{} }, build: ctor(aura.New),
		hooks: map[string]special{"flush_policy": flushPolicy}},
	{"tts", "openaispeech"}: {config: func(int) any { return &openaispeech.Config{} }, build: ctor(openaispeech.New)},
}

// newProvider builds provider p of stage with its options. The result is
// a providers.STT, LLM or TTS (by stage) and its closer.
func newProvider(stage string, p agentfile.Provider, rate int) (any, io.Closer, error) {
	b, ok := builders[[2]string{stage, p.Name}]
	if !ok {
		return nil, nil, fmt.Errorf("%w: %s %q", ErrUnknownProvider, stage, p.Name)
	}
	cfg := b.config(rate)
	if err := fill(cfg, p.Options, b.hooks); err != nil {
		return nil, nil, err
	}
	v, err := b.build(cfg)
	if err != nil {
		return nil, nil, err
	}
	return v, closerOf(v), nil
}

// flushPolicy maps Aura's flush_policy.
func flushPolicy(cfg reflect.Value, _ string, o agentfile.Option) error {
	f := cfg.FieldByName("FlushPolicy")
	switch o.String {
	case "per-turn":
		f.Set(reflect.ValueOf(aura.PerTurn))
	case "per-text":
		f.Set(reflect.ValueOf(aura.PerText))
	default:
		return fmt.Errorf("%w: flush_policy %q", ErrOption, o.String)
	}
	return nil
}

// voice sets an ElevenLabs voice setting (Config.Voice, a nested struct
// of optional values).
func voice(cfg reflect.Value, name string, o agentfile.Option) error {
	v := cfg.FieldByName("Voice")
	if v.IsNil() {
		v.Set(reflect.ValueOf(&elevenlabs.VoiceSettings{}))
	}
	return set(v.Elem().FieldByName(fieldName(name)), name, o)
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
