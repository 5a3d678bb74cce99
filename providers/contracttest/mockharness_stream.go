package contracttest

import (
	"context"
	"sync"
	"time"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/providertest"
)

// MockSTTHarnessConfig configures a MockSTTHarness.
type MockSTTHarnessConfig struct {
	// STT is the mock's timetable (providertest.STTConfig defaults: an interim per
	// 200 ms of speech, the final 150 ms after Finalize, 16 kHz).
	STT providertest.STTConfig
	// IOTimeout is the deadline the adapter under test enforces (default
	// 2s); put the mock behind STTWithDeadlines(h.Provider(), Uniform(it)).
	IOTimeout time.Duration
}

// Validate rejects a negative io timeout and an invalid STT config.
func (c MockSTTHarnessConfig) Validate() error { return validateMock(c.IOTimeout, c.STT) }

// MockSTTHarness is the STTHarness of the simulator's MockSTT. A MockSTT
// takes its utterances when it is made, so the harness makes one lazily,
// at the first Connect or Warm after Reset, with the utterances scripted
// and the faults injected until then; a fault injected later goes to that
// mock, an utterance scripted later to a fresh mock for the connects that
// follow. Reset starts over with nothing scripted.
type MockSTTHarness struct {
	cfg MockSTTHarnessConfig

	mu     sync.Mutex
	utts   []string
	faults []providertest.Fault
	mock   *providertest.MockSTT // nil until the first connect after Reset or Script
}

var _ STTHarness = (*MockSTTHarness)(nil)

// NewMockSTTHarness makes a harness with nothing scripted.
func NewMockSTTHarness(cfg MockSTTHarnessConfig) (*MockSTTHarness, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.IOTimeout == 0 {
		cfg.IOTimeout = DefaultIOTimeout
	}
	if cfg.STT.Rate == 0 {
		cfg.STT.Rate = 16000
	}
	return &MockSTTHarness{cfg: cfg}, nil
}

// Reset forgets the script, the faults and the current mock.
func (h *MockSTTHarness) Reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.utts, h.faults, h.mock = nil, nil, nil
}

// Script queues text as the next utterance.
func (h *MockSTTHarness) Script(text string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.utts = append(h.utts, text)
	h.mock = nil
}

// Inject queues f for the next session.
func (h *MockSTTHarness) Inject(f providertest.Fault) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.mock != nil {
		h.mock.Inject(f)
		return
	}
	h.faults = append(h.faults, f)
}

// IOTimeout is the configured io timeout.
func (h *MockSTTHarness) IOTimeout() time.Duration { return h.cfg.IOTimeout }

// SampleRate is the mock's rate.
func (h *MockSTTHarness) SampleRate() int { return h.cfg.STT.Rate }

// current is the mock that serves the next connect, made on first use.
func (h *MockSTTHarness) current() *providertest.MockSTT {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.mock == nil {
		h.mock = providertest.NewMockSTT(h.cfg.STT, h.utts)
		for _, f := range h.faults {
			h.mock.Inject(f)
		}
		h.utts, h.faults = nil, nil
	}
	return h.mock
}

// Provider is the mock as a providers.STT, without deadlines.
func (h *MockSTTHarness) Provider() providers.STT { return mockSTTProvider{h} }

type mockSTTProvider struct{ h *MockSTTHarness }

func (p mockSTTProvider) Connect(ctx context.Context) (providers.STTSession, error) {
	return p.h.current().Connect(ctx)
}

func (p mockSTTProvider) Warm(ctx context.Context) error { return p.h.current().Warm(ctx) }

// MockTTSHarnessConfig configures a MockTTSHarness.
type MockTTSHarnessConfig struct {
	// TTS is the mock's timetable (providertest.TTSConfig defaults: the first event
	// 200 ms after a context's first push, 40 ms chunks, 16 kHz); set
	// Paced for one chunk per chunk's duration, as a real-time
	// synthesizer, or leave it unset for a burst, as a fast one.
	TTS providertest.TTSConfig
	// IOTimeout is the deadline the adapter under test enforces (default
	// 2s); put the mock behind TTSWithDeadlines(h.Provider(), Uniform(it)).
	IOTimeout time.Duration
}

// Validate rejects a negative io timeout and an invalid TTS config.
func (c MockTTSHarnessConfig) Validate() error { return validateMock(c.IOTimeout, c.TTS) }

// MockTTSHarness is the TTSHarness of the simulator's MockTTS. Reset
// starts a fresh mock, so faults injected and not used are dropped.
type MockTTSHarness struct {
	TTSDefaults
	cfg MockTTSHarnessConfig

	mu   sync.Mutex
	mock *providertest.MockTTS
}

var _ TTSHarness = (*MockTTSHarness)(nil)

// NewMockTTSHarness makes a harness with a fresh mock.
func NewMockTTSHarness(cfg MockTTSHarnessConfig) (*MockTTSHarness, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.IOTimeout == 0 {
		cfg.IOTimeout = DefaultIOTimeout
	}
	h := &MockTTSHarness{cfg: cfg}
	h.Reset()
	return h, nil
}

// Reset replaces the mock by a fresh one.
func (h *MockTTSHarness) Reset() {
	m := providertest.NewMockTTS(h.cfg.TTS)
	h.mu.Lock()
	h.mock = m
	h.mu.Unlock()
}

func (h *MockTTSHarness) current() *providertest.MockTTS {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.mock
}

// Inject queues f on the current mock.
func (h *MockTTSHarness) Inject(f providertest.Fault) { h.current().Inject(f) }

// IOTimeout is the configured io timeout.
func (h *MockTTSHarness) IOTimeout() time.Duration { return h.cfg.IOTimeout }

// Provider is the mock as a providers.TTS, without deadlines.
func (h *MockTTSHarness) Provider() providers.TTS { return mockTTSProvider{h} }

type mockTTSProvider struct{ h *MockTTSHarness }

func (p mockTTSProvider) Connect(ctx context.Context) (providers.TTSSession, error) {
	return p.h.current().Connect(ctx)
}

func (p mockTTSProvider) Warm(ctx context.Context) error { return p.h.current().Warm(ctx) }
