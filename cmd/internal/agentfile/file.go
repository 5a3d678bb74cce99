package agentfile

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/brisvox/brisvox/providers"
)

// Format is an agent file's syntax.
type Format uint8

// The formats.
const (
	TOML Format = iota + 1
	YAML
)

// String names the format.
func (f Format) String() string {
	switch f {
	case TOML:
		return "toml"
	case YAML:
		return "yaml"
	}
	return fmt.Sprintf("Format(%d)", uint8(f))
}

// FormatOf is the format of a path by its extension: .toml, .yaml or
// .yml.
func FormatOf(path string) (Format, bool) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".toml":
		return TOML, true
	case ".yaml", ".yml":
		return YAML, true
	}
	return 0, false
}

// Options are what a check needs from outside the file.
type Options struct {
	// LookupEnv tells whether a key variable is set; default
	// os.LookupEnv. Only presence is asked: a key's value never leaves
	// the environment here.
	LookupEnv func(string) (string, bool)
	// KnownTools is the catalogue tools.enabled is checked against; nil
	// leaves the names unchecked (the command always passes one).
	KnownTools []string
}

// Value is a setting: what the file wrote, or its default.
type Value[T any] struct {
	V T
	// Pos is where the value is written; for a default, the place of
	// the table it belongs to (or 1:1).
	Pos Pos
	// Set: written in the file.
	Set bool
}

// Option is a provider option. The field of its kind holds the value.
type Option struct {
	Kind providers.Type
	// Pos is where the value is written (the provider's name for an
	// Implied one).
	Pos Pos
	// Implied: not written, filled in by the schema (api_key_env and the
	// endpoint, see provider key rules in docs/CONFIG.md).
	Implied bool

	// Value holds the value in the field of its Kind (TypeEnv: the
	// variable's name in String, "": no key).
	providers.Value
}

// Provider is the stt, llm or tts provider and its options, keyed by
// their name in the file (snake_case of the provider Config field).
type Provider struct {
	Name    string
	Pos     Pos // of the name
	Options map[string]Option
}

// Rounds are the llm stage's settings (llm.Config) other than the
// provider's, written in the [llm] table beside them.
type Rounds struct {
	MaxRounds    Value[int]           // 1..20, default 6
	RoundTimeout Value[time.Duration] // 1s..2m, default 15s
	// WindowTokens bounds a request's estimated size: 0 the default
	// (agent.DefaultWindowTokens), -1 off, else 1000..2000000.
	WindowTokens Value[int]
	FallbackLine Value[string] // "": the stage's own line
}

// VAD picks and tunes the voice activity detector.
type VAD struct {
	Engine Value[string] // "silero" or "energy" (default)
	Silero SileroVAD
	Energy EnergyVAD
	Pos    Pos
}

// SileroVAD tunes media.SpeechGateConfig.
type SileroVAD struct {
	Threshold     Value[float64]       // start threshold 0..1, default 0.5
	StopThreshold Value[float64]       // 0..threshold, default threshold - 0.15
	MinSpeech     Value[time.Duration] // 0..2s, default 64ms
	Hangover      Value[time.Duration] // 0..5s, default 300ms
	// FloorDBFS is the window RMS (dB of full scale) under which a window
	// is silence without the model (vad.Model.Floor); -100..-30, default
	// -60; under -90.3 dBFS (an RMS under 1) nothing is skipped.
	FloorDBFS Value[float64]
}

// EnergyVAD tunes media.EnergyVADConfig.
type EnergyVAD struct {
	Threshold  Value[float64]       // RMS 1..32767, default 500
	StartAfter Value[time.Duration] // 0..2s, default 40ms
	StopAfter  Value[time.Duration] // 0..5s, default 300ms
}

// Turn is turn.Config.
type Turn struct {
	EndOfTurnDelay Value[time.Duration] // 0..5s, default 0
	// ByText ends a turn by its transcript (turn.Config.EndOfTurnByText):
	// EndOfTurnDelay after words that read as finished, EndOfTurnMax
	// after words left hanging.
	ByText       Value[bool]          // default false
	EndOfTurnMax Value[time.Duration] // 50ms..5s, default 800ms; only with ByText
	BargeInDelay Value[time.Duration] // 0..2s, default 0
	Speculate    Value[bool]          // needs EndOfTurnDelay > 0
	DrainTimeout Value[time.Duration] // 0..1m, default 15s
	Pos          Pos
}

// Fillers are the llm stage's filler phrases.
type Fillers struct {
	// After is the delay before a filler (0..10s, default 1.2s); negative
	// when the file says "off".
	After   Value[time.Duration]
	PerTool Value[bool]
	Phrases []Value[string] // none: the stage's own
	Pos     Pos
}

// Tools are the tools offered to the model.
type Tools struct {
	Enabled []Value[string]
	// Confirm turns Spec.Confirm on for these tools (a subset of
	// Enabled).
	Confirm []Value[string]
	// TransferCall is [tools.transfer_call] (telephony.go).
	TransferCall TransferTool
	Pos          Pos
}

// Confirms tells whether the file asks a confirmation for tool name.
func (t Tools) Confirms(name string) bool {
	if name == "transfer_call" && t.TransferCall.Confirm.V {
		return true
	}
	for _, c := range t.Confirm {
		if c.V == name {
			return true
		}
	}
	return false
}

// Names are the enabled tools' names, in file order.
func (t Tools) Names() []string {
	out := make([]string, len(t.Enabled))
	for i, e := range t.Enabled {
		out[i] = e.V
	}
	return out
}

// Transports are the transports to open; a transport's table present
// means enabled unless it says enabled = false. Addresses are the
// command line's.
type Transports struct {
	WebRTC WebRTC
	Twilio Twilio
	PCM    PCM
	SIP    SIP
	Pos    Pos
}

// Access says who may use a websocket media endpoint (the PCM stream, the
// WebRTC page with its /offer and websocket). Only variable NAMES are in
// a file: the token and the secret stay in the environment.
type Access struct {
	// Public: the owner says anyone who can reach the endpoint may use
	// it (default false). Refused together with TokenEnv or
	// SigningSecretEnv: one of them would be ignored.
	Public Value[bool]
	// TokenEnv names the variable holding the bearer token a client
	// sends ("Authorization: Bearer ..."); "" none.
	TokenEnv Value[string]
	// SigningSecretEnv names the variable holding the HMAC secret of
	// signed URLs (an expiry and a signature in the query); "" none.
	SigningSecretEnv Value[string]
	// AllowedOrigins are the browser origins allowed beside the
	// endpoint's own, "scheme://host[:port]" (http or https, lower-cased,
	// no path); "*" is refused (public = true says that).
	AllowedOrigins []Value[string]
}

// Guarded tells whether the endpoint asks for a token or a signed URL.
func (a Access) Guarded() bool { return a.TokenEnv.V != "" || a.SigningSecretEnv.V != "" }

// WebRTC is the browser transport's agent-side options.
type WebRTC struct {
	Enabled         Value[bool]
	IncludeLoopback Value[bool]
	Interfaces      []Value[string]
	STUN            []Value[string] // stun: or stuns: URLs
	Access                          // the page, /offer and its websocket
	Pos             Pos
}

// Twilio is the telephony transport (Media Streams, 8 kHz mu-law).
type Twilio struct {
	Enabled Value[bool]
	Path    Value[string] // default "/twilio"
	// Public: anyone may open the stream, no signature is checked
	// (default false).
	Public Value[bool]
	// AuthTokenEnv names the variable holding the account's auth token,
	// which checks X-Twilio-Signature on the upgrade. Implied (not Set)
	// as "TWILIO_AUTH_TOKEN" when the transport is enabled and not
	// public; "" when public.
	AuthTokenEnv Value[string]
	// PublicURL is the wss:// or https:// URL Twilio is configured to
	// connect to, signed in place of the request's own when a proxy
	// rewrites the Host ("": the request's).
	PublicURL Value[string]
	Pos       Pos
}

// PCM is the raw PCM websocket transport.
type PCM struct {
	Enabled Value[bool]
	Path    Value[string] // default "/pcm"
	Rate    Value[int]    // 8000, 16000 (default), 24000 or 48000
	Access
	Pos Pos
}

// Serve are the settings of `brisvox serve` for this agent (the [serve]
// table): admission and the process's memory.
type Serve struct {
	// RateLimit is the new connections a second one source address may
	// open (> 0, default 5); Burst the bucket's size (>= 1, default 20).
	RateLimit Value[float64]
	Burst     Value[int]
	// OverCapacity allows a call limit above the agent's capacity
	// (default false: serve refuses one).
	OverCapacity Value[bool]
	// MemoryLimit is the soft memory limit in bytes (a size in the file:
	// "512MiB", "2GiB", "1500MB"); 0, the default, sets none. GOMEMLIMIT
	// in the environment wins over it.
	MemoryLimit Value[int64]
	// GCPercent is the collector's target: -1 (off) or 10..1000. Apply it
	// only when Set: V is 100 otherwise, and the runtime's own (GOGC)
	// stays.
	GCPercent Value[int]
	// Admission is how calls are admitted: "fixed" (the call limit
	// alone; the default) or "measured" (also the measured CPU cost of
	// one more call, under CPUCeiling of the cores). serve's --admission
	// wins when given.
	Admission Value[string]
	// CPUCeiling is the share of the cores (GOMAXPROCS) the estimated
	// load may reach under measured admission: (0, 1], default
	// admit.DefaultCeiling. serve's --cpu-ceiling wins when given.
	CPUCeiling Value[float64]
	Pos        Pos
}

// Warm is a stage's warm-up before serving: which probe runs, and whether
// its failure stops `serve`. Written beside the provider's options in
// [stt], [llm] and [tts] as warm and warm_required.
type Warm struct {
	// Mode is one of the provider's probes (ProviderInfo.Warm, the first
	// the default): "models" (GET {base_url}/models), "request" (a
	// one-token completion), "connect" (a websocket opened), "load" (the
	// local engine loaded) or "none". "" when the provider is unknown.
	Mode Value[string]
	// Required: a failed probe stops serve (default false: it is logged
	// and serving goes on).
	Required Value[bool]
}

// File is a checked agent file. Every value carries its position.
type File struct {
	// Path is the name given to Parse (Load: the path).
	Path   string
	Format Format
	// Digest is the sha256 (hex) of the file's bytes: which version of
	// the agent a call record was made by.
	Digest string

	Name     Value[string] // default: the file's base name
	Prompt   Value[string]
	Greeting Value[string]
	// Description says what the agent can do, for the callers of its web
	// page (GET /agent). Never spoken.
	Description Value[string]
	// EndLine is spoken when a stage gave up and the call ends ("": the
	// session's own).
	EndLine Value[string]

	STT, LLM, TTS Provider
	// STTWarm, LLMWarm and TTSWarm are the stages' warm-up choices.
	STTWarm, LLMWarm, TTSWarm Warm
	Rounds                    Rounds
	VAD                       VAD
	Turn                      Turn
	Fillers                   Fillers
	Tools                     Tools
	DTMF                      DTMF
	Transports                Transports
	Serve                     Serve
	// Outbound is [outbound]: the calls the agent places (outbound.go).
	Outbound Outbound
	// Records is [records] and Tracing [tracing] (records.go).
	Records Records
	Tracing Tracing
}

// Diag is a diagnostic of the file at pos: how the command reports what
// building the agent found (a provider constructor's error) at the
// setting that caused it.
func (f *File) Diag(pos Pos, path, msg, hint string) Diagnostic {
	return Diagnostic{File: f.Path, Line: pos.Line, Col: pos.Col, Path: path, Msg: msg, Hint: hint}
}

// sizeHint is the hint of a file over maxBytes.
const sizeHint = "an agent file is a few kilobytes: is this the right file?"

// Load reads and checks the agent file at path; its format is chosen by
// the extension. The File is nil only when the file could not be read;
// otherwise it holds what could be decoded, even with diagnostics.
func Load(path string, opts Options) (*File, Diagnostics) {
	format, ok := FormatOf(path)
	if !ok {
		return nil, Diagnostics{{File: path, Msg: "unknown format", Hint: "name the file .toml, .yaml or .yml"}}
	}
	st, err := os.Stat(path)
	if err == nil && st.Size() > maxBytes {
		return nil, Diagnostics{{File: path, Msg: fmt.Sprintf("%d bytes: an agent file is at most %d", st.Size(), maxBytes), Hint: sizeHint}}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, Diagnostics{{File: path, Msg: fmt.Sprintf("cannot read: %v", err), Hint: "check the path, and that the file is readable by this user"}}
	}
	return Parse(path, data, format, opts)
}

// Parse checks an agent file's bytes; name is used in the diagnostics
// and the default agent name. Every problem is reported, in the order
// found (Diagnostics.Sort orders them by position).
func Parse(name string, data []byte, format Format, opts Options) (*File, Diagnostics) {
	if opts.LookupEnv == nil {
		opts.LookupEnv = os.LookupEnv
	}
	w := &walker{name: name, opts: opts, format: format}
	if len(data) > maxBytes {
		w.at(Pos{1, 1}, "", fmt.Sprintf("%d bytes: an agent file is at most %d", len(data), maxBytes), sizeHint)
		return nil, w.diags
	}
	w.data, w.lines = data, newLineIndex(data)
	var root *node
	var complete bool
	switch format {
	case TOML:
		root, complete = readTOML(data, w.at)
	case YAML:
		root, complete = readYAML(data, w.at)
	default:
		w.at(Pos{1, 1}, "", "unknown format "+format.String(), "name the file .toml, .yaml or .yml")
		return nil, w.diags
	}
	f := w.decode(root, complete)
	f.Format = format
	sum := sha256.Sum256(data)
	f.Digest = hex.EncodeToString(sum[:])
	return f, w.diags
}
