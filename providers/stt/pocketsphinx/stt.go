package pocketsphinx

import (
	"context"
	"fmt"
	"time"

	"github.com/brisvox/brisvox/providers"
)

// CallsPerDecoder is how many calls one decoder serves (providers.Limit's
// CallsPerUnit). A session holds a decoder from the VAD's speech start to
// that utterance's final only, not for the call: in a dialogue the caller
// speaks well under half of the time (the agent speaks, and both wait for
// each other, the rest of it), so two calls share a decoder and in the
// common case neither waits; when both speak at once the second waits at
// most AcquireTimeout. The pipeline measurement in
// TestDecoderHoldFraction (docs/MEDIA.md, "Recognizer capacity") is the
// figure behind it.
const CallsPerDecoder = 2

// STT is the offline recognizer: its sessions take a decoder from a
// bounded pool for each utterance the VAD hears. Close it to free the
// decoders' memory.
type STT struct {
	cfg  Config
	pool *pool
	use  *usage
}

var (
	_ providers.STT     = (*STT)(nil)
	_ providers.Limited = (*STT)(nil)
)

// New checks cfg and prepares the pool; it loads no decoder (Warm does).
// With a Domain it reads Dict and builds the domain model (about 0.1 s
// for the rules provider's phrases). It
// refuses a build without cgo (ErrNoCgo) and any rate but 16 kHz
// (ErrSampleRate: pocketsphinx fails on 8 kHz telephone audio).
func New(cfg Config) (*STT, error) {
	if !cgoEnabled {
		return nil, ErrNoCgo
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if len(cfg.Domain) > 0 {
		arpa, err := domainModel(cfg)
		if err != nil {
			return nil, err
		}
		cfg.domainARPA = arpa
	}
	return &STT{
		cfg:  cfg,
		pool: newPool(cfg.PoolSize, cfg.IdleDecoderTimeout, func() (recognizer, error) { return loadDecoder(cfg) }, trimHeap),
		use:  &usage{},
	}, nil
}

// Connect starts a session. It takes no decoder: the session takes one at
// each speech start (SpeechStarted) and gives it back after the final, so
// an open session that hears no speech costs its queue and nothing of the
// pool. It fails when the engine is closed (ErrEngineClosed) or ctx has
// ended; cancelling ctx later ends the session like Close.
func (t *STT) Connect(ctx context.Context) (providers.STTSession, error) {
	if err := t.pool.isClosed(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("pocketsphinx: connect: %w", err)
	}
	return startSession(ctx, t.cfg, t.pool, t.use), nil
}

// Warm makes sure one decoder is loaded and idle, so the first utterance
// does not pay the model load. Loading cannot be interrupted once started.
func (t *STT) Warm(ctx context.Context) error {
	dec, err := t.pool.acquire(ctx, t.cfg.AcquireTimeout)
	if err != nil {
		return fmt.Errorf("pocketsphinx: warm: %w", err)
	}
	t.pool.release(dec, true)
	return nil
}

// Close frees the idle decoders (returning their memory to the OS) and
// refuses new sessions; a session that
// holds a decoder frees it when its utterance or the session ends, and a
// later speech start of an open session fails it with ErrEngineClosed.
// Idempotent.
func (t *STT) Close() error {
	t.pool.close()
	return nil
}

// Decoders reports the decoders alive (idle or in use) and idle.
func (t *STT) Decoders() (loaded, idle int) { return t.pool.stats() }

// Limits reports the decoder pool: PoolSize decoders, each serving
// CallsPerDecoder calls, since a call holds one only while its caller
// speaks.
func (t *STT) Limits() []providers.Limit {
	return []providers.Limit{{Name: "pocketsphinx decoders", Size: t.cfg.PoolSize, CallsPerUnit: CallsPerDecoder}}
}

// Stats are the engine's decoder counts, for metrics (see STT.Stats).
type Stats struct {
	// Loaded is the decoders alive (idle or held); Idle those in the pool.
	Loaded, Idle int
	// Acquired counts the decoders taken from the pool: one per utterance
	// a session heard, and Warm's.
	Acquired uint64
	// Waited counts the takes that found every decoder busy and waited.
	Waited uint64
	// TimedOut counts the waits that ended after AcquireTimeout without a
	// decoder; each dropped an utterance.
	TimedOut uint64
	// IdleFreed counts the decoders freed after IdleDecoderTimeout idle
	// in the pool (each followed by a trim of the C heap).
	IdleFreed uint64
	// Audio is the audio the sessions took from their queues; Decoded is
	// the part of it a decoder heard. Decoded/Audio is the fraction of
	// the sessions' time that they held a decoder.
	Audio, Decoded time.Duration
}

// Stats reads the engine's counts since New.
func (t *STT) Stats() Stats {
	st := Stats{}
	st.Loaded, st.Idle = t.pool.stats()
	st.Acquired, st.Waited, st.TimedOut, st.IdleFreed = t.pool.counts()
	st.Audio = t.cfg.duration(t.use.taken.Load())
	st.Decoded = t.cfg.duration(t.use.decoded.Load())
	return st
}

var _ providers.Named = (*STT)(nil)

// Vendor is "pocketsphinx" (providers.Named).
func (*STT) Vendor() string { return "pocketsphinx" }

// Model is "": the acoustic and language models are local files (providers.Named).
func (*STT) Model() string { return "" }
