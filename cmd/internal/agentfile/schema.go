package agentfile

import (
	"slices"
	"time"
)

// OptionKind is the type of a provider option.
type OptionKind uint8

// The option kinds. An enum or URL option is a KindString (or KindInt for
// a set of rates) with its check in the schema.
const (
	KindString OptionKind = iota + 1
	KindInt
	KindFloat
	KindBool
	KindDuration
	KindStrings
	KindInts
	// KindEnv is the NAME of an environment variable that holds a key.
	KindEnv
)

// String names the kind as the docs do.
func (k OptionKind) String() string {
	switch k {
	case KindString:
		return "string"
	case KindInt:
		return "integer"
	case KindFloat:
		return "number"
	case KindBool:
		return "boolean"
	case KindDuration:
		return "duration"
	case KindStrings:
		return "list of strings"
	case KindInts:
		return "list of integers"
	case KindEnv:
		return "variable name"
	}
	return "unknown"
}

// optSpec declares one provider option.
type optSpec struct {
	name string
	kind OptionKind
	// lo and hi bound an int or float (each item of KindInts); dlo and dhi
	// a duration. Set when ranged.
	ranged bool
	lo, hi float64
	dlo    time.Duration
	dhi    time.Duration
	// oneOf lists the values a string or int option may take.
	oneOf []string
	ints  []int64
	// schemes makes a string option a URL of one of these schemes.
	schemes []string
	// required: the provider cannot work without it.
	required bool
}

// keyRule says how a provider's key variable defaults.
type keyRule uint8

const (
	// noKey: the provider takes no key (an engine on this machine).
	noKey keyRule = iota
	// keyAlways: the adapter always sends a key; api_key_env defaults to
	// the provider's variable and cannot be empty.
	keyAlways
	// keyUnlessURL: the key variable defaults to the provider's only while
	// the endpoint option is left at the vendor's; with another endpoint
	// no key is sent unless api_key_env names one (a key is never sent to
	// another host by default). An empty api_key_env means no key.
	keyUnlessURL
)

// provSpec declares a provider: its options and how its key is found.
type provSpec struct {
	name string
	opts []optSpec
	keys keyRule
	// keyEnv is the default variable; urlOpt and defURL the endpoint
	// option and its default (filled in, Implied, when not written).
	keyEnv string
	urlOpt string
	defURL string
	// warm are the warm-up probes the provider offers, the first the
	// default ("none" always last).
	warm []string
}

func (p *provSpec) opt(name string) *optSpec {
	for i := range p.opts {
		if p.opts[i].name == name {
			return &p.opts[i]
		}
	}
	return nil
}

// Small constructors keep the tables below readable.
func str(name string) optSpec { return optSpec{name: name, kind: KindString} }
func req(o optSpec) optSpec   { o.required = true; return o }
func boolean(name string) optSpec {
	return optSpec{name: name, kind: KindBool}
}
func env(name string) optSpec { return optSpec{name: name, kind: KindEnv} }
func url(name string, schemes ...string) optSpec {
	return optSpec{name: name, kind: KindString, schemes: schemes}
}
func enum(name string, vals ...string) optSpec {
	return optSpec{name: name, kind: KindString, oneOf: vals}
}
func rates(name string, vals ...int64) optSpec {
	return optSpec{name: name, kind: KindInt, ints: vals}
}
func integer(name string, lo, hi float64) optSpec {
	return optSpec{name: name, kind: KindInt, ranged: true, lo: lo, hi: hi}
}
func number(name string, lo, hi float64) optSpec {
	return optSpec{name: name, kind: KindFloat, ranged: true, lo: lo, hi: hi}
}
func dur(name string, lo, hi time.Duration) optSpec {
	return optSpec{name: name, kind: KindDuration, ranged: true, dlo: lo, dhi: hi}
}
func ints(name string, lo, hi float64) optSpec {
	return optSpec{name: name, kind: KindInts, ranged: true, lo: lo, hi: hi}
}

// Common bounds.
const (
	maxTimeout = 5 * time.Minute
	maxTokens  = 1_000_000
	maxBuffer  = 1 << 16
	maxBytes64 = 64 << 20
)

// timeouts are the I/O bounds of a provider, each 0 to 5 minutes.
func timeouts(names ...string) []optSpec {
	out := make([]optSpec, len(names))
	for i, n := range names {
		out[i] = dur(n, 0, maxTimeout)
	}
	return out
}

func cat(parts ...[]optSpec) []optSpec {
	var out []optSpec
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// The warm-up probes of the providers, by what their Warm does (first:
// the default). HTTP LLMs GET {base_url}/models or send a one-token
// request; websocket providers open a connection; local engines load
// their model (pocketsphinx a decoder, flite a first synthesis); rules
// has nothing to open; openaispeech's Warm GETs {base_url}/models.
var (
	warmHTTP    = []string{"models", "request", "none"}
	warmConnect = []string{"connect", "none"}
	warmLoad    = []string{"load", "none"}
	warmModels  = []string{"models", "none"}
	warmNothing = []string{"none"}
)

// sttProviders, llmProviders and ttsProviders mirror the provider Config
// fields that belong in a file (snake_case of the field name). They are
// never written after init.
var sttProviders = []provSpec{
	{name: "deepgram", warm: warmConnect, keys: keyAlways, keyEnv: "DEEPGRAM_API_KEY", opts: cat([]optSpec{
		url("url", "ws", "wss"), env("api_key_env"),
		str("model"), str("language"),
		boolean("no_interim_results"),
		dur("endpointing", 10*time.Millisecond, 10*time.Second), boolean("disable_endpointing"),
		boolean("punctuate"), boolean("smart_format"), boolean("vad_events"),
		dur("utterance_end", time.Second, 5*time.Second),
		dur("keep_alive", time.Second, 10*time.Second-time.Millisecond),
		integer("max_message_bytes", 1024, maxBytes64),
		integer("queue_frames", 1, maxBuffer), integer("event_buffer", 1, maxBuffer),
	}, timeouts("connect_timeout", "result_timeout", "close_timeout"))},
	{name: "pocketsphinx", warm: warmLoad, keys: noKey, opts: []optSpec{
		str("model_dir"), str("language_model"), str("dict"),
		dur("interim_interval", 20*time.Millisecond, 5*time.Second),
		integer("pool_size", 1, 64),
		dur("acquire_timeout", 0, maxTimeout),
		dur("idle_decoder_timeout", 0, time.Hour),
		dur("queue", 100*time.Millisecond, time.Minute),
		dur("max_utterance", time.Second, 10*time.Minute),
		dur("pre_roll", 0, 5*time.Second),
		integer("event_buffer", 1, maxBuffer),
	}},
}

var llmProviders = []provSpec{
	{name: "openai", warm: warmHTTP, keys: keyUnlessURL, keyEnv: "OPENAI_API_KEY", urlOpt: "base_url", defURL: "https://api.openai.com/v1", opts: cat([]optSpec{
		url("base_url", "http", "https"), req(str("model")), env("api_key_env"),
		number("temperature", 0, 2),
		integer("max_tokens", 1, maxTokens), boolean("max_completion_tokens"),
		enum("reasoning_effort", "none", "minimal", "low", "medium", "high", "xhigh"),
		integer("max_line_bytes", 256, maxBytes64),
	}, timeouts("connect_timeout", "first_event_timeout", "idle_timeout"))},
	{name: "anthropic", warm: warmHTTP, keys: keyUnlessURL, keyEnv: "ANTHROPIC_API_KEY", urlOpt: "base_url", defURL: "https://api.anthropic.com", opts: cat([]optSpec{
		url("base_url", "http", "https"), req(str("model")), env("api_key_env"),
		str("version"),
		integer("max_tokens", 1, maxTokens),
		number("temperature", 0, 1),
		integer("thinking_budget", 1024, maxTokens),
		integer("max_line_bytes", 256, maxBytes64),
	}, timeouts("connect_timeout", "first_event_timeout", "idle_timeout"))},
	{name: "gemini", warm: warmHTTP, keys: keyUnlessURL, keyEnv: "GEMINI_API_KEY", urlOpt: "base_url", defURL: "https://generativelanguage.googleapis.com", opts: cat([]optSpec{
		url("base_url", "http", "https"), req(str("model")), env("api_key_env"),
		integer("max_tokens", 1, maxTokens),
		number("temperature", 0, 2),
		integer("thinking_budget", -1, maxTokens),
		integer("max_line_bytes", 256, maxBytes64),
	}, timeouts("connect_timeout", "first_event_timeout", "idle_timeout"))},
	{name: "rules", warm: warmNothing, keys: noKey, opts: []optSpec{
		dur("first_token", 0, 5*time.Second),
		dur("token_gap", 0, 5*time.Second),
	}},
}

var ttsProviders = []provSpec{
	{name: "flite", warm: warmLoad, keys: noKey, opts: []optSpec{
		enum("voice", "awb", "kal", "kal16", "rms", "slt"),
		integer("rate", 8000, 48000),
		dur("chunk", 10*time.Millisecond, 200*time.Millisecond),
		integer("max_piece_runes", 20, 1<<16),
		integer("max_context_bytes", 256, maxBytes64),
		integer("max_open_contexts", 1, 1024),
	}},
	{name: "cartesia", warm: warmConnect, keys: keyAlways, keyEnv: "CARTESIA_API_KEY", opts: cat([]optSpec{
		url("url", "ws", "wss"), env("api_key_env"), str("version"),
		str("model"), str("voice"), str("language"),
		rates("sample_rate", 8000, 16000, 22050, 24000, 44100, 48000),
		number("speed", 0.6, 1.5), number("volume", 0.5, 2), str("emotion"),
		dur("max_buffer_delay", time.Millisecond, 5*time.Second), boolean("no_buffer_delay"),
		integer("max_message_bytes", 4096, maxBytes64),
		integer("queue_frames", 1, maxBuffer), integer("event_buffer", 1, maxBuffer), integer("pending_events", 1, maxBuffer),
	}, timeouts("connect_timeout", "reply_timeout", "close_timeout"))},
	{name: "elevenlabs", warm: warmConnect, keys: keyAlways, keyEnv: "ELEVENLABS_API_KEY", opts: cat([]optSpec{
		url("url", "ws", "wss"), env("api_key_env"),
		str("voice_id"), str("model"), str("language"),
		rates("sample_rate", 8000, 16000, 22050, 24000, 44100),
		number("stability", 0, 1), number("similarity_boost", 0, 1), number("style", 0, 1),
		boolean("use_speaker_boost"), number("speed", 0.7, 1.2),
		ints("chunk_length_schedule", 50, 500),
		boolean("auto_mode"), enum("text_normalization", "auto", "on", "off"), boolean("no_logging"),
		dur("inactivity_timeout", time.Second, 180*time.Second),
		integer("max_contexts", 1, 64),
		dur("keep_alive", time.Second, time.Minute), boolean("no_keep_alive"),
		integer("max_message_bytes", 4096, maxBytes64),
		integer("queue_frames", 1, maxBuffer), integer("event_buffer", 1, maxBuffer),
	}, timeouts("connect_timeout", "reply_timeout", "close_timeout"))},
	{name: "deepgram", warm: warmConnect, keys: keyAlways, keyEnv: "DEEPGRAM_API_KEY", opts: cat([]optSpec{
		url("url", "ws", "wss"), env("api_key_env"), str("model"),
		rates("sample_rate", 8000, 16000, 24000, 32000, 48000),
		enum("flush_policy", "per-turn", "per-text"),
		dur("probe_interval", 100*time.Millisecond, time.Minute),
		integer("max_message_bytes", 1024, maxBytes64),
		integer("queue_frames", 1, maxBuffer), integer("event_buffer", 1, maxBuffer),
		integer("pending_events", 1, maxBuffer), integer("max_held_bytes", 1, maxBytes64),
	}, timeouts("connect_timeout", "reply_timeout", "close_timeout"))},
	{name: "openaispeech", warm: warmModels, keys: keyUnlessURL, keyEnv: "OPENAI_API_KEY", urlOpt: "base_url", defURL: "https://api.openai.com/v1", opts: cat([]optSpec{
		url("base_url", "http", "https"), req(str("model")), req(str("voice")),
		enum("format", "pcm", "wav"), number("speed", 0.25, 4), str("instructions"),
		env("api_key_env"), integer("pcm_rate", 8000, 48000),
		integer("max_input_runes", 1, 1<<20), integer("max_queued_bytes", 1, maxBytes64),
		integer("max_open_contexts", 1, 1024), integer("read_bytes", 64, 1<<20),
	}, timeouts("connect_timeout", "first_byte_timeout", "idle_timeout"))},
}

// OptionInfo names a provider option and its kind.
type OptionInfo struct {
	Name string
	Kind OptionKind
}

// ProviderInfo is a provider of the schema: its stage (stt, llm, tts),
// name, options and warm-up probes.
type ProviderInfo struct {
	Stage, Name string
	Options     []OptionInfo
	// Warm are the values its stage's warm setting may take, the first
	// the default.
	Warm []string
}

// Providers lists the schema's providers and their options, for the code
// that maps the options onto provider configs (and its tests).
func Providers() []ProviderInfo {
	var out []ProviderInfo
	for _, st := range []struct {
		stage string
		specs []provSpec
	}{{"stt", sttProviders}, {"llm", llmProviders}, {"tts", ttsProviders}} {
		for _, p := range st.specs {
			info := ProviderInfo{Stage: st.stage, Name: p.name, Warm: slices.Clone(p.warm)}
			for _, o := range p.opts {
				info.Options = append(info.Options, OptionInfo{Name: o.name, Kind: o.kind})
			}
			out = append(out, info)
		}
	}
	return out
}
