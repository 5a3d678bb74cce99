package elevenlabs

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Models that stream over the websocket (eleven_v3 does not).
const (
	// ModelFlashV25: the lowest latency (about 75 ms), 32 languages.
	ModelFlashV25 = "eleven_flash_v2_5"
	// ModelTurboV25: low latency, better quality than flash.
	ModelTurboV25 = "eleven_turbo_v2_5"
	// ModelMultilingualV2: the highest quality, slower.
	ModelMultilingualV2 = "eleven_multilingual_v2"
)

// Defaults of the zero Config fields.
const (
	DefaultURL       = "wss://api.elevenlabs.io"
	DefaultAPIKeyEnv = "ELEVENLABS_API_KEY"
	DefaultModel     = ModelFlashV25
	// DefaultVoiceID is "Rachel", one of the service's premade voices.
	DefaultVoiceID    = "21m00Tcm4TlvDq8ikWAM"
	DefaultSampleRate = 16000
	// DefaultInactivityTimeout is how long the service keeps a context
	// without new text (inactivity_timeout; the service's own default is
	// 20 s, its maximum 180 s): an LLM that pauses longer loses its
	// context.
	DefaultInactivityTimeout = 60 * time.Second
	// DefaultMaxContexts is the service's limit of simultaneous contexts
	// per socket; one more closes the socket with 1008.
	DefaultMaxContexts = 5

	DefaultConnectTimeout = 5 * time.Second
	// DefaultReplyTimeout bounds the wait for audio while a flushed
	// context owes it (see Config.ReplyTimeout).
	DefaultReplyTimeout = 5 * time.Second
	DefaultCloseTimeout = 2 * time.Second
	// DefaultKeepAlive: an empty text is sent after that long without any
	// message sent, so that the service does not close a quiet socket.
	DefaultKeepAlive = 10 * time.Second
	// DefaultMaxMessageBytes bounds one inbound message: an audio chunk
	// of about a second at 44.1 kHz is 118 KB of base64 plus its
	// alignment.
	DefaultMaxMessageBytes = 1 << 20
	DefaultQueueFrames     = 64
	// DefaultEventBuffer bounds the events received and not yet handed
	// over; the reader waits when it is full.
	DefaultEventBuffer = 64
)

// SampleRates are the PCM output rates the service offers (pcm_<rate>).
var sampleRates = []int{8000, 16000, 22050, 24000, 44100}

// VoiceSettings are the voice's settings, sent with the socket's first
// context (the service refuses them later). Nil fields are left to the
// voice's stored settings.
type VoiceSettings struct {
	Stability       *float64 `json:"stability,omitempty"`
	SimilarityBoost *float64 `json:"similarity_boost,omitempty"`
	Style           *float64 `json:"style,omitempty"`
	UseSpeakerBoost *bool    `json:"use_speaker_boost,omitempty"`
	// Speed is 0.7 to 1.2; 1 is the voice's speed.
	Speed *float64 `json:"speed,omitempty"`
}

// Config sets up an Adapter. The zero value is usable with the key in
// ELEVENLABS_API_KEY: flash v2.5, the default voice, PCM at 16 kHz.
type Config struct {
	// URL is the service's root, without path or query (DefaultURL;
	// wss://api.eu.residency.elevenlabs.io and the like for data
	// residency); ws:// for local servers and mocks.
	URL string
	// APIKeyEnv is the NAME of the environment variable holding the key,
	// read once by New (DefaultAPIKeyEnv).
	APIKeyEnv string

	// VoiceID (the path) and Model (model_id=).
	VoiceID string
	Model   string
	// Language is language_code= (ISO 639-1), for the models that take
	// it; the service's choice when empty.
	Language string
	// SampleRate of the PCM16 mono audio (output_format=pcm_<rate>): 8000,
	// 16000, 22050, 24000 or 44100.
	SampleRate int
	// Voice is sent with the first context of each socket.
	Voice *VoiceSettings
	// ChunkLengthSchedule is generation_config.chunk_length_schedule (each
	// 50-500 characters): how much text the service buffers before each
	// generation. Empty: the service's [120, 160, 250, 290].
	ChunkLengthSchedule []int
	// AutoMode (auto_mode=true) drops the chunk schedule and buffers: for
	// text sent in whole sentences or phrases.
	AutoMode bool
	// TextNormalization is apply_text_normalization= ("auto", "on",
	// "off"); the service's "auto" when empty.
	TextNormalization string
	// NoLogging sends enable_logging=false (zero retention; the
	// service's enterprise plans).
	NoLogging bool
	// InactivityTimeout is inactivity_timeout= (1 s to 180 s, whole
	// seconds).
	InactivityTimeout time.Duration
	// MaxContexts bounds the contexts open on one socket, cancelled ones
	// included until the service finished them (see ErrTooManyContexts).
	MaxContexts int

	// ConnectTimeout bounds the dial, TLS and websocket handshake.
	ConnectTimeout time.Duration
	// ReplyTimeout bounds the wait for audio while some flushed context
	// owes it: from its Flush to the first message, and from each message
	// to the next, until its isFinal. Unflushed text owes nothing (the
	// service may hold it for its chunk schedule), nor does a quiet
	// socket.
	ReplyTimeout time.Duration
	// CloseTimeout bounds Close (close_socket and the close handshake).
	CloseTimeout time.Duration
	// KeepAlive is the quiet time after which an empty text is sent;
	// NoKeepAlive turns it off.
	KeepAlive   time.Duration
	NoKeepAlive bool
	// MaxMessageBytes bounds one inbound message.
	MaxMessageBytes int
	// QueueFrames is the capacity of the send queue.
	QueueFrames int
	// EventBuffer bounds the events received and not yet handed over.
	EventBuffer int

	// DialContext, for tests and special transports, opens the TCP
	// connection; nil: a net.Dialer.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
}

// Validate checks the config; zero fields mean the defaults. The error
// wraps ErrInvalidConfig.
func (c Config) Validate() error {
	if c.URL != "" {
		u, err := url.Parse(c.URL)
		if err != nil || (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
			return fmt.Errorf("%w: URL is not a ws(s) URL", ErrInvalidConfig)
		}
		if u.User != nil || u.RawQuery != "" || u.Fragment != "" || (u.Path != "" && u.Path != "/") {
			return fmt.Errorf("%w: URL must be the service's root: no credentials, path, query or fragment", ErrInvalidConfig)
		}
	}
	if strings.ContainsAny(c.VoiceID, "/?#&=% ") {
		return fmt.Errorf("%w: VoiceID holds a path or query character", ErrInvalidConfig)
	}
	if strings.ContainsAny(c.Model+c.Language, "/?#&=% ") {
		return fmt.Errorf("%w: Model or Language holds a query character", ErrInvalidConfig)
	}
	if strings.HasPrefix(c.Model, "eleven_v3") {
		return fmt.Errorf("%w: %s does not stream over the websocket", ErrInvalidConfig, c.Model)
	}
	if c.SampleRate != 0 && !rateOK(c.SampleRate) {
		return fmt.Errorf("%w: SampleRate %d is not one of %v", ErrInvalidConfig, c.SampleRate, sampleRates)
	}
	for _, n := range c.ChunkLengthSchedule {
		if n < minChunkLength || n > maxChunkLength {
			return fmt.Errorf("%w: ChunkLengthSchedule entries must be %d-%d", ErrInvalidConfig, minChunkLength, maxChunkLength)
		}
	}
	if n := normalizations(); c.TextNormalization != "" && !slices.Contains(n, c.TextNormalization) {
		return fmt.Errorf("%w: TextNormalization must be %s or %s", ErrInvalidConfig, strings.Join(n[:len(n)-1], ", "), n[len(n)-1])
	}
	if c.InactivityTimeout != 0 && (c.InactivityTimeout < minInactivity || c.InactivityTimeout > maxInactivity || c.InactivityTimeout%time.Second != 0) {
		return fmt.Errorf("%w: InactivityTimeout must be whole seconds from %d to %d", ErrInvalidConfig, int(minInactivity/time.Second), int(maxInactivity/time.Second))
	}
	if v := c.Voice; v != nil && v.Speed != nil && (*v.Speed < minVoiceSpeed || *v.Speed > maxVoiceSpeed) {
		return fmt.Errorf("%w: Voice.Speed must be %v to %v", ErrInvalidConfig, minVoiceSpeed, maxVoiceSpeed)
	}
	if c.ConnectTimeout < 0 || c.ReplyTimeout < 0 || c.CloseTimeout < 0 || c.KeepAlive < 0 || c.InactivityTimeout < 0 {
		return fmt.Errorf("%w: durations must not be negative", ErrInvalidConfig)
	}
	if c.MaxMessageBytes < 0 || (c.MaxMessageBytes > 0 && c.MaxMessageBytes < minMessageBytes) {
		return fmt.Errorf("%w: MaxMessageBytes must be 0 (default) or at least %d", ErrInvalidConfig, minMessageBytes)
	}
	if c.QueueFrames < 0 || c.EventBuffer < 0 || c.MaxContexts < 0 {
		return fmt.Errorf("%w: sizes must not be negative", ErrInvalidConfig)
	}
	return nil
}

func rateOK(r int) bool {
	for _, x := range sampleRates {
		if x == r {
			return true
		}
	}
	return false
}

// withDefaults fills the zero fields.
func (c Config) withDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	defInt := func(d *int, v int) {
		if *d == 0 {
			*d = v
		}
	}
	if c.URL == "" {
		c.URL = DefaultURL
	}
	c.URL = strings.TrimSuffix(c.URL, "/")
	if c.APIKeyEnv == "" {
		c.APIKeyEnv = DefaultAPIKeyEnv
	}
	if c.VoiceID == "" {
		c.VoiceID = DefaultVoiceID
	}
	if c.Model == "" {
		c.Model = DefaultModel
	}
	defInt(&c.SampleRate, DefaultSampleRate)
	def(&c.InactivityTimeout, DefaultInactivityTimeout)
	defInt(&c.MaxContexts, DefaultMaxContexts)
	def(&c.ConnectTimeout, DefaultConnectTimeout)
	def(&c.ReplyTimeout, DefaultReplyTimeout)
	def(&c.CloseTimeout, DefaultCloseTimeout)
	def(&c.KeepAlive, DefaultKeepAlive)
	defInt(&c.MaxMessageBytes, DefaultMaxMessageBytes)
	defInt(&c.QueueFrames, DefaultQueueFrames)
	defInt(&c.EventBuffer, DefaultEventBuffer)
	return c
}

// Path is the endpoint's path for a voice.
func Path(voiceID string) string {
	return "/v1/text-to-speech/" + voiceID + "/multi-stream-input"
}

// streamURL is the endpoint with the session options as its query.
func (c Config) streamURL() string {
	q := url.Values{}
	q.Set("model_id", c.Model)
	q.Set("output_format", "pcm_"+strconv.Itoa(c.SampleRate))
	q.Set("sync_alignment", "true")
	q.Set("inactivity_timeout", strconv.Itoa(int(c.InactivityTimeout/time.Second)))
	if c.Language != "" {
		q.Set("language_code", c.Language)
	}
	if c.AutoMode {
		q.Set("auto_mode", "true")
	}
	if c.TextNormalization != "" {
		q.Set("apply_text_normalization", c.TextNormalization)
	}
	if c.NoLogging {
		q.Set("enable_logging", "false")
	}
	return c.URL + Path(c.VoiceID) + "?" + q.Encode()
}

// openingExtras is the JSON of the members a context's opening carries
// besides text and context_id, with a leading comma: generation_config on
// every context (it is per context), voice_settings on the socket's first
// only (the service closes the socket with 1008 when they come again and
// differ). Empty when none.
func (c Config) openingExtras(first bool) []byte {
	var b []byte
	if c.Voice != nil && first {
		v, _ := json.Marshal(c.Voice)
		b = append(append(b, `,"voice_settings":`...), v...)
	}
	if len(c.ChunkLengthSchedule) > 0 {
		v, _ := json.Marshal(struct {
			S []int `json:"chunk_length_schedule"`
		}{c.ChunkLengthSchedule})
		b = append(append(b, `,"generation_config":`...), v...)
	}
	return b
}
