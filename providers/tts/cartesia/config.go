package cartesia

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"time"
)

// Defaults of the zero Config fields.
const (
	DefaultURL       = "wss://api.cartesia.ai/tts/websocket"
	DefaultAPIKeyEnv = "CARTESIA_API_KEY"
	// DefaultVersion is the Cartesia-Version header: the API version the
	// message shapes were written against.
	DefaultVersion = "2025-04-16"
	DefaultModel   = "sonic-3"
	// DefaultVoice is the voice of the service's own API examples
	// ("Barbershop Man"); set Voice for a real deployment.
	DefaultVoice      = "a0e99841-438c-4a64-b679-ae501e7d6091"
	DefaultLanguage   = "en"
	DefaultSampleRate = 16000

	DefaultConnectTimeout = 5 * time.Second
	// DefaultReplyTimeout bounds the wait for the service while an answer
	// is owed (see Config.ReplyTimeout). The service may hold pushed text
	// up to its buffer delay (3 s by default) before it speaks.
	DefaultReplyTimeout = 10 * time.Second
	DefaultCloseTimeout = 2 * time.Second
	// DefaultMaxMessageBytes bounds one inbound message. An audio chunk is
	// a few KiB of base64 (0.1 s at 24 kHz is 6.4 KiB).
	DefaultMaxMessageBytes = 512 << 10
	// DefaultQueueFrames is the send queue (texts, flushes, cancels).
	DefaultQueueFrames = 64
	// DefaultEventBuffer is the capacity of the Events channel.
	DefaultEventBuffer = 64
	// DefaultPendingEvents bounds the decoded events waiting for the
	// Events channel; past it the reader stops reading (the service's
	// audio waits in the socket).
	DefaultPendingEvents = 1024
)

// SampleRates are the raw PCM rates the service offers.
var SampleRates = []int{8000, 16000, 22050, 24000, 44100, 48000}

// Config sets up an Adapter. The zero value is usable with the key in
// CARTESIA_API_KEY: sonic-3, the example voice, English, 16 kHz.
type Config struct {
	// URL is the websocket endpoint, without query (DefaultURL); ws:// for
	// local servers and mocks.
	URL string
	// APIKeyEnv is the NAME of the environment variable holding the key,
	// read once by New (DefaultAPIKeyEnv).
	APIKeyEnv string
	// Version is the Cartesia-Version header (DefaultVersion).
	Version string

	// Model (model_id), Voice (a voice id) and Language (a short tag).
	Model    string
	Voice    string
	Language string
	// SampleRate of the PCM16 mono audio asked for (output_format
	// sample_rate, raw pcm_s16le); one of SampleRates.
	SampleRate int
	// Speed (0.6-1.5), Volume (0.5-2.0) and Emotion go in
	// generation_config (sonic-3 and later) when set; zero: the service's
	// default.
	Speed   float64
	Volume  float64
	Emotion string
	// MaxBufferDelay is how long the service may hold pushed text before
	// it speaks (max_buffer_delay_ms, at most 5 s); zero leaves the
	// service's default (3 s). NoBufferDelay sends 0: speak each text as
	// it comes, for callers that push whole phrases.
	MaxBufferDelay time.Duration
	NoBufferDelay  bool

	// ConnectTimeout bounds the dial, TLS and websocket handshake.
	ConnectTimeout time.Duration
	// ReplyTimeout bounds the wait for the service while an answer is
	// owed: from a Push or Flush sent after the last message received,
	// and from each message received while a flushed context awaits its
	// done. A context with text pushed but not flushed owes nothing once
	// the service has answered, so a slow LLM between pushes is not cut
	// off. Also the write timeout.
	ReplyTimeout time.Duration
	// CloseTimeout bounds Close (the close handshake).
	CloseTimeout time.Duration
	// MaxMessageBytes bounds one inbound message.
	MaxMessageBytes int
	// QueueFrames is the capacity of the send queue.
	QueueFrames int
	// EventBuffer is the capacity of the Events channel.
	EventBuffer int
	// PendingEvents bounds the decoded events not yet in Events.
	PendingEvents int

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
		if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("%w: URL must carry no credentials, query or fragment", ErrInvalidConfig)
		}
	}
	if c.SampleRate != 0 && !slices.Contains(SampleRates, c.SampleRate) {
		return fmt.Errorf("%w: SampleRate %d is not one of %v", ErrInvalidConfig, c.SampleRate, SampleRates)
	}
	if c.Speed != 0 && (c.Speed < minSpeed || c.Speed > maxSpeed) {
		return fmt.Errorf("%w: Speed %v is outside [%v, %v]", ErrInvalidConfig, c.Speed, minSpeed, maxSpeed)
	}
	if c.Volume != 0 && (c.Volume < minVolume || c.Volume > maxVolume) {
		return fmt.Errorf("%w: Volume %v is outside [%v, %v]", ErrInvalidConfig, c.Volume, minVolume, maxVolume)
	}
	if c.MaxBufferDelay < 0 || c.MaxBufferDelay > maxBufferDelay || (c.MaxBufferDelay > 0 && c.NoBufferDelay) {
		return fmt.Errorf("%w: MaxBufferDelay must be within (0, %v], and not set with NoBufferDelay", ErrInvalidConfig, maxBufferDelay)
	}
	if c.ConnectTimeout < 0 || c.ReplyTimeout < 0 || c.CloseTimeout < 0 {
		return fmt.Errorf("%w: durations must not be negative", ErrInvalidConfig)
	}
	if c.MaxMessageBytes < 0 || (c.MaxMessageBytes > 0 && c.MaxMessageBytes < minMessageBytes) {
		return fmt.Errorf("%w: MaxMessageBytes must be 0 (default) or at least %d", ErrInvalidConfig, minMessageBytes)
	}
	if c.QueueFrames < 0 || c.EventBuffer < 0 || c.PendingEvents < 0 {
		return fmt.Errorf("%w: sizes must not be negative", ErrInvalidConfig)
	}
	for _, s := range []string{c.Version, c.Model, c.Voice, c.Language, c.Emotion} {
		for _, r := range s {
			if r < 0x20 || r == 0x7f {
				return fmt.Errorf("%w: Version, Model, Voice, Language and Emotion must hold no control characters", ErrInvalidConfig)
			}
		}
	}
	return nil
}

// withDefaults fills the zero fields.
func (c Config) withDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	str := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	str(&c.URL, DefaultURL)
	str(&c.APIKeyEnv, DefaultAPIKeyEnv)
	str(&c.Version, DefaultVersion)
	str(&c.Model, DefaultModel)
	str(&c.Voice, DefaultVoice)
	str(&c.Language, DefaultLanguage)
	if c.SampleRate == 0 {
		c.SampleRate = DefaultSampleRate
	}
	def(&c.ConnectTimeout, DefaultConnectTimeout)
	def(&c.ReplyTimeout, DefaultReplyTimeout)
	def(&c.CloseTimeout, DefaultCloseTimeout)
	if c.MaxMessageBytes == 0 {
		c.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if c.QueueFrames == 0 {
		c.QueueFrames = DefaultQueueFrames
	}
	if c.EventBuffer == 0 {
		c.EventBuffer = DefaultEventBuffer
	}
	if c.PendingEvents == 0 {
		c.PendingEvents = DefaultPendingEvents
	}
	return c
}

// requestFields is the part of a generation request that every request
// of a context repeats unchanged (the service requires it), as JSON
// members without braces: model, voice, language, output format,
// timestamps, generation config, buffer delay.
func (c Config) requestFields() []byte {
	type voice struct {
		Mode string `json:"mode"`
		ID   string `json:"id"`
	}
	type format struct {
		Container  string `json:"container"`
		Encoding   string `json:"encoding"`
		SampleRate int    `json:"sample_rate"`
	}
	type genConfig struct {
		Speed   float64 `json:"speed,omitempty"`
		Volume  float64 `json:"volume,omitempty"`
		Emotion string  `json:"emotion,omitempty"`
	}
	f := struct {
		ModelID       string     `json:"model_id"`
		Voice         voice      `json:"voice"`
		Language      string     `json:"language"`
		OutputFormat  format     `json:"output_format"`
		AddTimestamps bool       `json:"add_timestamps"`
		GenConfig     *genConfig `json:"generation_config,omitempty"`
	}{
		ModelID: c.Model, Voice: voice{Mode: "id", ID: c.Voice}, Language: c.Language,
		OutputFormat:  format{Container: "raw", Encoding: "pcm_s16le", SampleRate: c.SampleRate},
		AddTimestamps: true,
	}
	if c.Speed != 0 || c.Volume != 0 || c.Emotion != "" {
		f.GenConfig = &genConfig{Speed: c.Speed, Volume: c.Volume, Emotion: c.Emotion}
	}
	b, _ := json.Marshal(f) // plain strings and numbers: cannot fail
	b = b[1 : len(b)-1]
	switch {
	case c.NoBufferDelay:
		b = append(b, `,"max_buffer_delay_ms":0`...)
	case c.MaxBufferDelay > 0:
		b = append(b, `,"max_buffer_delay_ms":`...)
		b = strconv.AppendInt(b, c.MaxBufferDelay.Milliseconds(), 10)
	}
	return b
}
