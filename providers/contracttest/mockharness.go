package contracttest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/providertest"
)

// MockHarnessConfig configures a MockHarness.
type MockHarnessConfig struct {
	// LLM is the mock's timetable (providertest.LLMConfig defaults).
	LLM providertest.LLMConfig
	// IOTimeout is the deadline the adapter under test enforces (default
	// 2s); put the mock behind WithDeadlines(h.Provider(), Uniform(it)).
	IOTimeout time.Duration
}

// DefaultIOTimeout is MockHarnessConfig's default io timeout.
const DefaultIOTimeout = 2 * time.Second

// Validate rejects a negative io timeout and an invalid LLM config.
func (c MockHarnessConfig) Validate() error { return validateMock(c.IOTimeout, c.LLM) }

// validateMock rejects a negative io timeout and an invalid mock config.
func validateMock(io time.Duration, mock interface{ Validate() error }) error {
	if io < 0 {
		return fmt.Errorf("%w: io timeout %v", ErrInvalidConfig, io)
	}
	if err := mock.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return nil
}

// MockHarness is the LLMHarness of the simulator's MockLLM. Reset starts a
// fresh mock (MockLLM keeps its script and faults otherwise); Provider
// streams from the current one, and EventsSent sums over all of them, so
// a stream of an earlier mock that is still pulled keeps counting.
type MockHarness struct {
	cfg MockHarnessConfig

	mu    sync.Mutex
	mocks []*providertest.MockLLM // the last is current
}

var _ LLMHarness = (*MockHarness)(nil)

// NewMockHarness makes a harness with a fresh mock.
func NewMockHarness(cfg MockHarnessConfig) (*MockHarness, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.IOTimeout == 0 {
		cfg.IOTimeout = DefaultIOTimeout
	}
	h := &MockHarness{cfg: cfg}
	h.Reset()
	return h, nil
}

// current is the mock that serves the next stream.
func (h *MockHarness) current() *providertest.MockLLM {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.mocks[len(h.mocks)-1]
}

// Reset replaces the mock by a fresh one.
func (h *MockHarness) Reset() {
	m := providertest.NewMockLLM(h.cfg.LLM)
	h.mu.Lock()
	h.mocks = append(h.mocks, m)
	h.mu.Unlock()
}

// Script queues r on the current mock: its text word by word, each call's
// arguments in two fragments.
func (h *MockHarness) Script(r Response) {
	resp := providertest.Response{Text: r.Text}
	for _, c := range r.Calls {
		resp.Calls = append(resp.Calls, providertest.ScriptedCall{ID: c.ID, Name: c.Name, Args: c.Args})
	}
	h.current().Push(resp)
}

// Inject queues f on the current mock.
func (h *MockHarness) Inject(f providertest.Fault) { h.current().Inject(f) }

// EventsSent sums the events every mock handed out.
func (h *MockHarness) EventsSent() int {
	h.mu.Lock()
	mocks := h.mocks
	h.mu.Unlock()
	n := 0
	for _, m := range mocks {
		n += m.EventsSent()
	}
	return n
}

// IOTimeout is the configured io timeout.
func (h *MockHarness) IOTimeout() time.Duration { return h.cfg.IOTimeout }

// Provider is the mock as a providers.LLM, without deadlines.
func (h *MockHarness) Provider() providers.LLM { return mockProvider{h} }

// mockProvider streams from the harness's current mock.
type mockProvider struct{ h *MockHarness }

func (p mockProvider) Stream(ctx context.Context, req *providers.Request) (providers.LLMStream, error) {
	return p.h.current().Stream(ctx, req)
}

func (p mockProvider) Warm(ctx context.Context) error { return p.h.current().Warm(ctx) }

// words is a text of n words, "w0 w1 ... w(n-1)".
func words(prefix string, n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return strings.Join(parts, " ")
}
