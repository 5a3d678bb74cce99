package flite

import (
	"fmt"
	"strings"
	"time"
)

// Defaults of the zero Config fields.
const (
	// DefaultVoice is the voice of a zero Config.Voice: cmu_us_slt, a
	// 16 kHz female US English voice (clustergen).
	DefaultVoice = "slt"
	// DefaultChunk is the audio of one TTSAudio event. Cancel takes effect
	// between two events, so a chunk bounds how much audio of a cancelled
	// context can still go out.
	DefaultChunk = 40 * time.Millisecond
	// DefaultMaxPieceRunes bounds the text of one synthesis call. A call
	// cannot be interrupted, so the bound caps the time a cancelled piece
	// keeps the library busy (about 200 ms of CPU at 200 runes).
	DefaultMaxPieceRunes = 200
	// DefaultMaxContextBytes bounds the unspoken text a context holds.
	DefaultMaxContextBytes = 64 << 10
	// DefaultMaxOpenContexts bounds the contexts open at once in a session.
	DefaultMaxOpenContexts = 16
	// MaxWordRunes is how much of one whitespace-free word is spoken; the
	// rest of a longer "word" (a URL, a hash) is left out of the audio,
	// not of the Word event.
	MaxWordRunes = 48
)

// voiceRate returns the native rate of a voice linked into the binary.
func voiceRate(name string) (int, bool) {
	switch name {
	case "slt", "rms", "awb": // cmu_us_*: clustergen, female (slt) and male
		return 16000, true
	case "kal16": // cmu_us_kal16: male, diphone, the fastest
		return 16000, true
	case "kal": // cmu_us_kal: male, diphone at 8 kHz
		return 8000, true
	}
	return 0, false
}

// Voices lists the voice names Config.Voice accepts.
func Voices() []string { return []string{"awb", "kal", "kal16", "rms", "slt"} }

// Config sets up an Engine. The zero Config is valid: the slt voice at
// 16 kHz.
type Config struct {
	// Voice is one of Voices(); empty means DefaultVoice.
	Voice string
	// Rate is the sample rate of the audio events; 0 means the voice's own
	// (16000, or 8000 for kal). Another rate is resampled by libflite.
	Rate int
	// Chunk is the audio of one TTSAudio event, 10 ms to 200 ms.
	Chunk time.Duration
	// MaxPieceRunes bounds the text of one synthesis call, at least 20.
	MaxPieceRunes int
	// MaxContextBytes bounds the unspoken text of a context, at least 256.
	MaxContextBytes int
	// MaxOpenContexts bounds the contexts open at once, at least 1.
	MaxOpenContexts int
}

// Validate checks the config; zero fields mean the defaults. The error
// wraps ErrInvalidConfig or ErrUnknownVoice.
func (c Config) Validate() error {
	if v := strings.TrimSpace(c.Voice); v != "" {
		if _, ok := voiceRate(v); !ok {
			return fmt.Errorf("%w: %q (known: %s)", ErrUnknownVoice, c.Voice, strings.Join(Voices(), ", "))
		}
	}
	if c.Rate != 0 && (c.Rate < minRate || c.Rate > maxRate) {
		return fmt.Errorf("%w: Rate %d is outside [%d, %d]", ErrInvalidConfig, c.Rate, minRate, maxRate)
	}
	if c.Chunk != 0 && (c.Chunk < minChunk || c.Chunk > maxChunk) {
		return fmt.Errorf("%w: Chunk %v is outside [%v, %v]", ErrInvalidConfig, c.Chunk, minChunk, maxChunk)
	}
	if c.MaxPieceRunes != 0 && c.MaxPieceRunes < minMaxPieceRunes {
		return fmt.Errorf("%w: MaxPieceRunes %d is below %d", ErrInvalidConfig, c.MaxPieceRunes, minMaxPieceRunes)
	}
	if c.MaxContextBytes != 0 && c.MaxContextBytes < minMaxContextBytes {
		return fmt.Errorf("%w: MaxContextBytes %d is below %d", ErrInvalidConfig, c.MaxContextBytes, minMaxContextBytes)
	}
	if c.MaxOpenContexts < 0 {
		return fmt.Errorf("%w: MaxOpenContexts %d is negative", ErrInvalidConfig, c.MaxOpenContexts)
	}
	return nil
}

// withDefaults fills the zero fields.
func (c Config) withDefaults() Config {
	c.Voice = strings.TrimSpace(c.Voice)
	if c.Voice == "" {
		c.Voice = DefaultVoice
	}
	if c.Rate == 0 {
		c.Rate, _ = voiceRate(c.Voice)
	}
	if c.Chunk == 0 {
		c.Chunk = DefaultChunk
	}
	if c.MaxPieceRunes == 0 {
		c.MaxPieceRunes = DefaultMaxPieceRunes
	}
	if c.MaxContextBytes == 0 {
		c.MaxContextBytes = DefaultMaxContextBytes
	}
	if c.MaxOpenContexts == 0 {
		c.MaxOpenContexts = DefaultMaxOpenContexts
	}
	return c
}

// chunkSamples is the length of one audio event in samples.
func (c Config) chunkSamples() int {
	return max(1, int(int64(c.Rate)*int64(c.Chunk)/int64(time.Second)))
}
