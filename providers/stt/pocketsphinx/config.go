package pocketsphinx

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Defaults of the zero Config fields. The model paths are where Debian's
// pocketsphinx-en-us package puts the US English model.
const (
	DefaultModelDir        = "/usr/share/pocketsphinx/model/en-us/en-us"
	DefaultLanguageModel   = "/usr/share/pocketsphinx/model/en-us/en-us.lm.bin"
	DefaultDict            = "/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict"
	DefaultSampleRate      = 16000
	DefaultInterimInterval = 200 * time.Millisecond
	DefaultPoolSize        = 4 // see PoolSize
	DefaultAcquireTimeout  = 2 * time.Second
	DefaultPreRoll         = 500 * time.Millisecond
	DefaultQueue           = 5 * time.Second
	DefaultMaxUtterance    = 60 * time.Second
	DefaultEventBuffer     = 32
	// DefaultIdleDecoderTimeout: see IdleDecoderTimeout.
	DefaultIdleDecoderTimeout = 30 * time.Second
	// DefaultDomainWeight: see DomainWeight.
	DefaultDomainWeight = 0.99
)

// The values of DomainFrom.
const (
	// DomainFromNone: Domain is as given (empty: no domain model).
	DomainFromNone = "none"
	// DomainFromLLM: the builder fills Domain with the phrases of the
	// agent's language model (the rules provider's Phrases).
	DomainFromLLM = "llm"
)

// MaxPendingFinalizes bounds the Finalize calls a session keeps before the
// worker has answered them.
const MaxPendingFinalizes = 64

// Config sets up an STT. The zero value is the Debian en-us model at 16 kHz.
type Config struct {
	// ModelDir is the acoustic model directory (pocketsphinx -hmm); it
	// must hold mdef.
	ModelDir string
	// LanguageModel is the n-gram language model (-lm).
	LanguageModel string
	// Dict is the pronunciation dictionary (-dict).
	Dict string
	// Domain biases the recognizer to what its callers say: sentences in
	// lower-case words of Dict, such as the rules provider's Phrases (an
	// agent file sets it with [stt] domain = "llm"). New checks every word
	// against Dict (the error names the missing ones) and builds a
	// trigram model of the sentences (package ngram, Kneser-Ney
	// smoothing); each decoder then reads LanguageModel and that model
	// into one interpolated model, DomainWeight to 1-DomainWeight, so the
	// domain's numbers, times and names win where the audio is ambiguous
	// while speech outside the domain still comes out as words. A
	// decoder still holds one language model, with the small domain
	// model beside it: with the rules provider's phrases a decoder takes
	// 95-98 MB of RssAnon against 89 MB without (+7%;
	// BenchmarkDomainDecoderMemory against BenchmarkDecoderMemory, each
	// alone, 2026-12-02). Empty: LanguageModel alone.
	Domain []string
	// DomainWeight is the domain model's share of the interpolation,
	// above 0 and below 1; 0 means DefaultDomainWeight, 0.99. sphinxbase
	// mixes the two models' scores after its language weight, so a share
	// acts far more weakly than its figure says: measured with `go tool
	// task asr` (flite slt, rms, awb at 16 kHz, 2026-12-02), the
	// in-domain word errors fall from 268 (general model) to 97 at 0.5,
	// 88 at 0.99 and 86 at 0.99999, while the errors on sentences outside
	// the domain rise from 4 to 17, 15 and 25 (of about 240 words).
	DomainWeight float64
	// DomainFrom says where the builder of the Config took Domain from:
	// DomainFromLLM, the agent's language model. New refuses
	// DomainFromLLM with an empty Domain, so a builder that had no
	// phrases to give fails instead of running unbiased. "" is
	// DomainFromNone.
	DomainFrom string
	// SampleRate of the audio given to SendAudio. Only 16000 is accepted:
	// the model is wideband and pocketsphinx fails on 8 kHz telephone
	// audio.
	SampleRate int
	// InterimInterval is how much audio is decoded between two looks at
	// the partial hypothesis; an interim is sent when it changed.
	InterimInterval time.Duration
	// PoolSize bounds the decoders alive at once, so the callers speaking
	// at once: a session holds one from a speech start to that
	// utterance's final only, and one is loaded only when none is idle.
	// The default, 4, is what a small 2-core host carries at its peak:
	// each decoder holds its own copy of the model, 89.5 MB of RssAnon
	// (358 MB for four, BenchmarkDecoderMemory), and decoding costs about
	// 0.17 core per caller speaking (BenchmarkConcurrentSpeech), so four
	// callers speaking at once take about 0.7 of 2 cores and leave the
	// rest to the VAD, the voice and the engine. With CallsPerDecoder it
	// serves 8 calls.
	PoolSize int
	// AcquireTimeout bounds a speech start's wait for a free decoder when
	// all PoolSize are busy (and Warm's). An utterance whose wait times
	// out is not heard; its Finalize gets an empty final.
	AcquireTimeout time.Duration
	// IdleDecoderTimeout frees a decoder that has stayed idle in the pool
	// this long, unless it is the last one alive (Warm's, or the one
	// that took its place), and then gives the C heap back to the OS
	// (glibc's malloc_trim): a decoder is about 90 MB, and without this a
	// burst of callers speaking at once keeps all PoolSize decoders for
	// the life of the process. Only a decoder idle for the whole timeout
	// goes: one taken again within it is not freed and reloaded. Default 30s; negative keeps
	// every decoder loaded (the behaviour before it).
	IdleDecoderTimeout time.Duration
	// PreRoll is the audio before a speech start that is decoded with the
	// utterance: the VAD decides that speech started a little after it
	// did. A session keeps this much of the latest audio while it holds
	// no decoder.
	PreRoll time.Duration
	// Queue is how much audio a session buffers ahead of its worker;
	// audio beyond it is dropped and counted (SendAudio never blocks). It
	// holds the speech that arrives while a speech start waits for a
	// decoder, so keep it above AcquireTimeout.
	Queue time.Duration
	// MaxUtterance ends an utterance that has gone on without Finalize for
	// this much audio: its text is sent as a final (Final without
	// SpeechFinal or FromFinalize), which bounds the decoder's memory.
	MaxUtterance time.Duration
	// EventBuffer is the capacity of a session's event channel.
	EventBuffer int

	domainARPA []byte // the domain model's ARPA text, built by New
}

// Validate checks the config and that the model files exist; zero fields
// mean the defaults. The error wraps ErrInvalidConfig, or ErrSampleRate.
func (c Config) Validate() error {
	c = c.withDefaults()
	if c.SampleRate != DefaultSampleRate {
		return fmt.Errorf("%w: SampleRate %d (16 kHz wideband audio only; narrowband audio resampled to 16 kHz still comes out mostly wrong)", ErrSampleRate, c.SampleRate)
	}
	if c.InterimInterval < minInterimInterval {
		return fmt.Errorf("%w: InterimInterval %v is under %v", ErrInvalidConfig, c.InterimInterval, minInterimInterval)
	}
	if c.PoolSize < 1 {
		return fmt.Errorf("%w: PoolSize %d is under 1", ErrInvalidConfig, c.PoolSize)
	}
	if c.AcquireTimeout < 0 {
		return fmt.Errorf("%w: AcquireTimeout %v is negative", ErrInvalidConfig, c.AcquireTimeout)
	}
	if c.PreRoll < 0 || c.PreRoll > maxPreRoll {
		return fmt.Errorf("%w: PreRoll %v is outside 0..%v", ErrInvalidConfig, c.PreRoll, maxPreRoll)
	}
	if c.Queue < minQueue {
		return fmt.Errorf("%w: Queue %v is under %v", ErrInvalidConfig, c.Queue, minQueue)
	}
	if c.MaxUtterance < minMaxUtterance {
		return fmt.Errorf("%w: MaxUtterance %v is under %v", ErrInvalidConfig, c.MaxUtterance, minMaxUtterance)
	}
	if c.EventBuffer < 1 {
		return fmt.Errorf("%w: EventBuffer %d is under 1", ErrInvalidConfig, c.EventBuffer)
	}
	if c.DomainWeight <= 0 || c.DomainWeight >= 1 {
		return fmt.Errorf("%w: DomainWeight %v is outside (0, 1)", ErrInvalidConfig, c.DomainWeight)
	}
	switch c.DomainFrom {
	case DomainFromNone:
	case DomainFromLLM:
		if len(c.Domain) == 0 {
			return fmt.Errorf("%w: DomainFrom %q but no Domain: the agent's language model gave no phrases (the rules provider is the one that has them)", ErrInvalidConfig, c.DomainFrom)
		}
	default:
		return fmt.Errorf("%w: DomainFrom %q is not %q or %q", ErrInvalidConfig, c.DomainFrom, DomainFromNone, DomainFromLLM)
	}
	for _, f := range []struct{ field, path string }{
		{"ModelDir", filepath.Join(c.ModelDir, "mdef")},
		{"LanguageModel", c.LanguageModel},
		{"Dict", c.Dict},
	} {
		fi, err := os.Stat(f.path)
		switch {
		case err != nil:
			return fmt.Errorf("%w: %s: %v (Debian: apt-get install pocketsphinx-en-us)", ErrInvalidConfig, f.field, err)
		case !fi.Mode().IsRegular() || fi.Size() == 0:
			return fmt.Errorf("%w: %s: %s is not a non-empty file", ErrInvalidConfig, f.field, f.path)
		}
	}
	return nil
}

// withDefaults fills the zero fields.
func (c Config) withDefaults() Config {
	if c.ModelDir == "" {
		c.ModelDir = DefaultModelDir
	}
	if c.LanguageModel == "" {
		c.LanguageModel = DefaultLanguageModel
	}
	if c.Dict == "" {
		c.Dict = DefaultDict
	}
	if c.SampleRate == 0 {
		c.SampleRate = DefaultSampleRate
	}
	if c.InterimInterval == 0 {
		c.InterimInterval = DefaultInterimInterval
	}
	if c.PoolSize == 0 {
		c.PoolSize = DefaultPoolSize
	}
	if c.AcquireTimeout == 0 {
		c.AcquireTimeout = DefaultAcquireTimeout
	}
	if c.IdleDecoderTimeout == 0 {
		c.IdleDecoderTimeout = DefaultIdleDecoderTimeout
	}
	if c.PreRoll == 0 {
		c.PreRoll = DefaultPreRoll
	}
	if c.Queue == 0 {
		c.Queue = DefaultQueue
	}
	if c.MaxUtterance == 0 {
		c.MaxUtterance = DefaultMaxUtterance
	}
	if c.EventBuffer == 0 {
		c.EventBuffer = DefaultEventBuffer
	}
	if c.DomainWeight == 0 {
		c.DomainWeight = DefaultDomainWeight
	}
	if c.DomainFrom == "" {
		c.DomainFrom = DomainFromNone
	}
	return c
}

// samples converts a duration of audio at the configured rate to samples.
func (c Config) samples(d time.Duration) int {
	return int(d * time.Duration(c.SampleRate) / time.Second)
}

// duration converts samples at the configured rate to a duration, without
// overflow for any count a process reaches.
func (c Config) duration(samples uint64) time.Duration {
	rate := uint64(c.SampleRate)
	return time.Duration(samples/rate)*time.Second + time.Duration(samples%rate)*time.Second/time.Duration(rate)
}
