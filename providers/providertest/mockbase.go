package providertest

import (
	"context"
	"sync"

	"github.com/brisvox/brisvox/providers"
)

// mockBase is what the three mock providers share: the lock over their
// state, the queue of injected faults, and the connect and warm counts.
type mockBase struct {
	mu       sync.Mutex
	faults   faultQueue
	connects int
	warms    int
}

var (
	_ providers.Named = (*MockLLM)(nil)
	_ providers.Named = (*MockSTT)(nil)
	_ providers.Named = (*MockTTS)(nil)
)

// Vendor is "mock" (providers.Named).
func (*mockBase) Vendor() string { return "mock" }

// Model is "": a mock has none (providers.Named).
func (*mockBase) Model() string { return "" }

// Inject queues a fault for the next session that connects (for the LLM:
// the next stream).
func (m *mockBase) Inject(f Fault) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.faults.push(f)
}

// Connects counts connects (LLM: streams), failed ones included.
func (m *mockBase) Connects() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.connects
}

// Warms counts Warm calls.
func (m *mockBase) Warms() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.warms
}

// Warm does nothing but count; a mock has nothing to open ahead.
func (m *mockBase) Warm(ctx context.Context) error {
	m.mu.Lock()
	m.warms++
	m.mu.Unlock()
	return ctx.Err()
}

// connectLocked counts a connect and takes the fault it gets.
func (m *mockBase) connectLocked() Fault {
	m.connects++
	return m.faults.pop()
}
