package deepgram

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Defaults of the zero Config fields.
const (
	DefaultURL        = "wss://api.deepgram.com/v1/listen"
	DefaultAPIKeyEnv  = "DEEPGRAM_API_KEY"
	DefaultModel      = "nova-3"
	DefaultSampleRate = 16000

	DefaultConnectTimeout = 5 * time.Second
	// DefaultResultTimeout bounds the wait for a result that is owed
	// (see Config.ResultTimeout).
	DefaultResultTimeout = 10 * time.Second
	DefaultCloseTimeout  = 2 * time.Second
	// DefaultKeepAlive: the service closes a socket that got neither
	// audio nor KeepAlive for 10 s (NET-0001); its docs ask for a
	// KeepAlive every 3 to 5 s of silence.
	DefaultKeepAlive = 4 * time.Second
	// DefaultMaxMessageBytes bounds one inbound message. A Results
	// message with word timings is a few KiB.
	DefaultMaxMessageBytes = 256 << 10
	// DefaultQueueFrames: 64 frames, 1.28 s of 20 ms audio.
	DefaultQueueFrames = 64
	// DefaultEventBuffer is the capacity of the Events channel.
	DefaultEventBuffer = 64
)

// Config sets up an Adapter. The zero value is usable with the key in
// DEEPGRAM_API_KEY: nova-3, 16 kHz, interim results on.
type Config struct {
	// URL is the listen endpoint, without query (DefaultURL); ws:// for
	// local servers and mocks.
	URL string
	// APIKeyEnv is the NAME of the environment variable holding the key,
	// read once by New (DefaultAPIKeyEnv).
	APIKeyEnv string

	// Model (model=) and Language (language=, a BCP-47 tag; the service's
	// default when empty).
	Model    string
	Language string
	// SampleRate of the PCM16 mono audio given to SendAudio (sample_rate=;
	// encoding=linear16 and channels=1 are always sent).
	SampleRate int
	// NoInterimResults turns interim results off (interim_results=false).
	NoInterimResults bool
	// Endpointing is the silence after which the service finalizes with
	// speech_final (endpointing=<ms>); 0 leaves the service's default.
	// DisableEndpointing sends endpointing=false.
	Endpointing        time.Duration
	DisableEndpointing bool
	// Punctuate and SmartFormat turn the formatting options on.
	Punctuate   bool
	SmartFormat bool
	// ProfanityFilter asks the service to mask recognized profanity with
	// asterisks (profanity_filter=true; English and a few other
	// languages).
	ProfanityFilter bool
	// VADEvents asks for SpeechStarted messages (vad_events=true); they
	// make no STTEvent but count as signs of life.
	VADEvents bool
	// UtteranceEnd asks for UtteranceEnd messages after that long without
	// a word (utterance_end_ms=, at least 1 s, needs interim results);
	// each becomes an STTEvent with Final and SpeechFinal and no text.
	UtteranceEnd time.Duration

	// ConnectTimeout bounds the dial, TLS and websocket handshake.
	ConnectTimeout time.Duration
	// ResultTimeout bounds the wait for a result while one is owed: from
	// the first audio or Finalize sent after the last message received,
	// and from each message received while an interim is open or a
	// Finalize unanswered. Nothing is owed while no audio flows, so a
	// quiet line kept open by KeepAlive does not time out.
	ResultTimeout time.Duration
	// CloseTimeout bounds Close (CloseStream and the close handshake).
	CloseTimeout time.Duration
	// KeepAlive is the quiet time after which a KeepAlive message is sent.
	KeepAlive time.Duration
	// MaxMessageBytes bounds one inbound message.
	MaxMessageBytes int
	// QueueFrames is the capacity of the send queue (audio frames and
	// control messages).
	QueueFrames int
	// EventBuffer is the capacity of the Events channel.
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
		if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("%w: URL must carry no credentials, query or fragment", ErrInvalidConfig)
		}
	}
	if c.SampleRate != 0 && (c.SampleRate < 8000 || c.SampleRate > 48000) {
		return fmt.Errorf("%w: SampleRate %d is outside [8000, 48000]", ErrInvalidConfig, c.SampleRate)
	}
	if c.Endpointing < 0 || (c.Endpointing > 0 && c.DisableEndpointing) {
		return fmt.Errorf("%w: Endpointing must be positive, and not set with DisableEndpointing", ErrInvalidConfig)
	}
	if c.UtteranceEnd != 0 && (c.UtteranceEnd < minUtteranceEnd || c.NoInterimResults) {
		return fmt.Errorf("%w: UtteranceEnd must be at least %v and needs interim results", ErrInvalidConfig, minUtteranceEnd)
	}
	if c.ConnectTimeout < 0 || c.ResultTimeout < 0 || c.CloseTimeout < 0 || c.KeepAlive < 0 {
		return fmt.Errorf("%w: durations must not be negative", ErrInvalidConfig)
	}
	if c.KeepAlive != 0 && c.KeepAlive >= idleLimit {
		return fmt.Errorf("%w: KeepAlive %v must be under the service's %d s idle limit", ErrInvalidConfig, c.KeepAlive, int(idleLimit/time.Second))
	}
	if c.MaxMessageBytes < 0 || (c.MaxMessageBytes > 0 && c.MaxMessageBytes < minMessageBytes) {
		return fmt.Errorf("%w: MaxMessageBytes must be 0 (default) or at least %d", ErrInvalidConfig, minMessageBytes)
	}
	if c.QueueFrames < 0 || c.EventBuffer < 0 {
		return fmt.Errorf("%w: sizes must not be negative", ErrInvalidConfig)
	}
	if strings.ContainsAny(c.Model+c.Language, "&=?# ") {
		return fmt.Errorf("%w: Model or Language holds a query character", ErrInvalidConfig)
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
	if c.URL == "" {
		c.URL = DefaultURL
	}
	if c.APIKeyEnv == "" {
		c.APIKeyEnv = DefaultAPIKeyEnv
	}
	if c.Model == "" {
		c.Model = DefaultModel
	}
	if c.SampleRate == 0 {
		c.SampleRate = DefaultSampleRate
	}
	def(&c.ConnectTimeout, DefaultConnectTimeout)
	def(&c.ResultTimeout, DefaultResultTimeout)
	def(&c.CloseTimeout, DefaultCloseTimeout)
	def(&c.KeepAlive, DefaultKeepAlive)
	if c.MaxMessageBytes == 0 {
		c.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if c.QueueFrames == 0 {
		c.QueueFrames = DefaultQueueFrames
	}
	if c.EventBuffer == 0 {
		c.EventBuffer = DefaultEventBuffer
	}
	return c
}

// listenURL is the endpoint with the session options as its query.
func (c Config) listenURL() string {
	q := url.Values{}
	q.Set("model", c.Model)
	if c.Language != "" {
		q.Set("language", c.Language)
	}
	q.Set("encoding", "linear16")
	q.Set("sample_rate", strconv.Itoa(c.SampleRate))
	q.Set("channels", "1")
	q.Set("interim_results", strconv.FormatBool(!c.NoInterimResults))
	switch {
	case c.DisableEndpointing:
		q.Set("endpointing", "false")
	case c.Endpointing > 0:
		q.Set("endpointing", strconv.FormatInt(c.Endpointing.Milliseconds(), 10))
	}
	if c.Punctuate {
		q.Set("punctuate", "true")
	}
	if c.SmartFormat {
		q.Set("smart_format", "true")
	}
	if c.ProfanityFilter {
		q.Set("profanity_filter", "true")
	}
	if c.VADEvents {
		q.Set("vad_events", "true")
	}
	if c.UtteranceEnd > 0 {
		q.Set("utterance_end_ms", strconv.FormatInt(c.UtteranceEnd.Milliseconds(), 10))
	}
	return c.URL + "?" + q.Encode()
}
