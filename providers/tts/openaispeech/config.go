package openaispeech

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"
)

// Response formats the adapter reads.
const (
	// FormatPCM is raw PCM16 little-endian mono, without a header, at
	// Config.PCMRate (24 kHz from OpenAI).
	FormatPCM = "pcm"
	// FormatWAV is a RIFF/WAVE stream; its header (PCM16 mono only) gives
	// the rate.
	FormatWAV = "wav"
)

// Defaults of the zero Config fields.
const (
	DefaultConnectTimeout   = 5 * time.Second
	DefaultFirstByteTimeout = 10 * time.Second
	DefaultIdleTimeout      = 10 * time.Second
	// DefaultPCMRate is the rate of OpenAI's raw PCM.
	DefaultPCMRate = 24000
	// DefaultMaxInputRunes is the service's bound on one request's input.
	DefaultMaxInputRunes = 4096
	// DefaultMaxQueuedBytes bounds a context's text not yet requested.
	DefaultMaxQueuedBytes = 64 << 10
	// DefaultMaxOpenContexts bounds the contexts a session holds.
	DefaultMaxOpenContexts = 8
	// DefaultReadBytes is the read buffer of a session: one Audio event
	// carries at most this many bytes (170 ms at 24 kHz).
	DefaultReadBytes = 8 << 10
)

// Config sets up an Adapter. Start from a preset (OpenAI, Local).
type Config struct {
	// BaseURL is the API root, without /audio/speech
	// (https://api.openai.com/v1).
	BaseURL string
	// Model is sent with every request (tts-1, tts-1-hd, gpt-4o-mini-tts).
	Model string
	// Voice is sent with every request (alloy, coral, ...).
	Voice string
	// Format is the response_format: FormatPCM (default) or FormatWAV.
	Format string
	// Speed, when not 0, is sent as speed (0.25 to 4).
	Speed float64
	// Instructions, when set, are sent as instructions (the voice's tone;
	// ignored or refused by tts-1 and tts-1-hd).
	Instructions string
	// APIKeyEnv is the NAME of the environment variable holding the key,
	// read once by New. Empty means no key (local servers).
	APIKeyEnv string
	// PCMRate is the sample rate of FormatPCM responses.
	PCMRate int

	// ConnectTimeout bounds the wait for the response headers of a
	// request (dial, TLS, request, headers), and Warm.
	ConnectTimeout time.Duration
	// FirstByteTimeout bounds the wait from the request (the text) to
	// the first bytes of the body, the wait for the headers included.
	FirstByteTimeout time.Duration
	// IdleTimeout bounds the gap between two reads of the body.
	IdleTimeout time.Duration

	// MaxInputRunes bounds the input of one request; longer queued text
	// is cut at a space before the bound and requested in parts.
	MaxInputRunes int
	// MaxQueuedBytes bounds a context's text not yet requested; a Push
	// beyond it is ErrTextTooLong.
	MaxQueuedBytes int
	// MaxOpenContexts bounds the contexts of a session not yet spoken.
	MaxOpenContexts int
	// ReadBytes is the session's read buffer, the most audio one event
	// carries.
	ReadBytes int

	// DialContext, for tests and special transports, opens the
	// connections instead of the default dialer (a net.Dialer bounded by
	// ConnectTimeout).
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
}

// OpenAI is the preset for api.openai.com with raw 24 kHz PCM; the key is
// in OPENAI_API_KEY.
func OpenAI(model, voice string) Config {
	return Config{BaseURL: DefaultBaseURL, Model: model, Voice: voice, Format: FormatPCM, APIKeyEnv: DefaultAPIKeyEnv}
}

// Local is the preset for a local OpenAI-compatible speech server at
// baseURL (http://localhost:8880/v1, say), without a key, asking for WAV
// so the server's rate is read from the header.
func Local(baseURL, model, voice string) Config {
	return Config{BaseURL: baseURL, Model: model, Voice: voice, Format: FormatWAV}
}

// Validate checks the config; zero durations and sizes mean the defaults.
// The error wraps ErrInvalidConfig.
func (c Config) Validate() error {
	u, err := url.Parse(c.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%w: BaseURL %q is not an http(s) URL", ErrInvalidConfig, c.BaseURL)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%w: BaseURL must carry no credentials, query or fragment", ErrInvalidConfig)
	}
	if strings.TrimSpace(c.Model) == "" {
		return fmt.Errorf("%w: Model is empty", ErrInvalidConfig)
	}
	if strings.TrimSpace(c.Voice) == "" {
		return fmt.Errorf("%w: Voice is empty", ErrInvalidConfig)
	}
	if c.Format != "" && c.Format != FormatPCM && c.Format != FormatWAV {
		return fmt.Errorf("%w: Format %q is not %q or %q", ErrInvalidConfig, c.Format, FormatPCM, FormatWAV)
	}
	if c.Speed != 0 && (c.Speed < minSpeed || c.Speed > maxSpeed) {
		return fmt.Errorf("%w: Speed %v is outside [%v, %v]", ErrInvalidConfig, c.Speed, minSpeed, maxSpeed)
	}
	if c.PCMRate != 0 && (c.PCMRate < minPCMRate || c.PCMRate > maxPCMRate) {
		return fmt.Errorf("%w: PCMRate %d is outside [%d, %d]", ErrInvalidConfig, c.PCMRate, minPCMRate, maxPCMRate)
	}
	if c.ConnectTimeout < 0 || c.FirstByteTimeout < 0 || c.IdleTimeout < 0 {
		return fmt.Errorf("%w: timeouts must not be negative", ErrInvalidConfig)
	}
	if c.MaxInputRunes < 0 || c.MaxQueuedBytes < 0 || c.MaxOpenContexts < 0 {
		return fmt.Errorf("%w: bounds must not be negative", ErrInvalidConfig)
	}
	if c.ReadBytes != 0 && (c.ReadBytes < minReadBytes || c.ReadBytes > maxReadBytes) {
		return fmt.Errorf("%w: ReadBytes %d is outside [%d, %d MiB]", ErrInvalidConfig, c.ReadBytes, minReadBytes, maxReadBytes>>20)
	}
	return nil
}

// withDefaults fills the zero fields.
func (c Config) withDefaults() Config {
	if c.Format == "" {
		c.Format = FormatPCM
	}
	if c.PCMRate == 0 {
		c.PCMRate = DefaultPCMRate
	}
	if c.ConnectTimeout == 0 {
		c.ConnectTimeout = DefaultConnectTimeout
	}
	if c.FirstByteTimeout == 0 {
		c.FirstByteTimeout = DefaultFirstByteTimeout
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.MaxInputRunes == 0 {
		c.MaxInputRunes = DefaultMaxInputRunes
	}
	if c.MaxQueuedBytes == 0 {
		c.MaxQueuedBytes = DefaultMaxQueuedBytes
	}
	if c.MaxOpenContexts == 0 {
		c.MaxOpenContexts = DefaultMaxOpenContexts
	}
	if c.ReadBytes == 0 {
		c.ReadBytes = DefaultReadBytes
	}
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	return c
}

// WithIOTimeout is c with one deadline for every wait of a request (the
// headers, the first byte, the gap between reads), as a contract harness
// sets it.
func (c Config) WithIOTimeout(d time.Duration) Config {
	c.ConnectTimeout, c.FirstByteTimeout, c.IdleTimeout = d, d, d
	return c
}
