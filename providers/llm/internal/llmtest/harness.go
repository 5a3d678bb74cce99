package llmtest

import (
	"sync"
	"time"

	"github.com/brisvox/brisvox/providers/llm/internal/llmmock"
)

// Harness is the provider contract suite's harness over an adapter's mock:
// every streaming request takes the next scripted response (idle when
// none is left) and the next injected fault (the zero F when none is),
// which respond merges into the mock's answer in the vendor's wire format.
//
// R and F are the suite's contract.Response and sim.Fault: type
// parameters only because this package may not import sim (see the
// package doc). Harness[contract.Response, sim.Fault] has the methods of
// contract.LLMHarness; each adapter's contract test asserts it.
type Harness[R, F any] struct {
	srv     Mock
	io      time.Duration
	idle    R
	respond func(R, F) llmmock.Response

	mu     sync.Mutex
	script []R
	faults []F
}

// NewHarness serves the harness's responses on srv, in place of its
// script. ioTimeout is the adapter's deadline for the connect, the first
// event and every gap, as the suite is to judge it. respond must not be
// nil.
func NewHarness[R, F any](srv Mock, ioTimeout time.Duration, idle R, respond func(R, F) llmmock.Response) *Harness[R, F] {
	h := &Harness[R, F]{srv: srv, io: ioTimeout, idle: idle, respond: respond}
	srv.SetSource(h.next)
	return h
}

// Reset drops what is scripted or injected and not yet used.
func (h *Harness[R, F]) Reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.script, h.faults = nil, nil
}

// Script queues r as the answer to a later stream.
func (h *Harness[R, F]) Script(r R) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.script = append(h.script, r)
}

// Inject queues f for a later stream.
func (h *Harness[R, F]) Inject(f F) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.faults = append(h.faults, f)
}

// EventsSent counts the event-stream data lines the mock has sent.
func (h *Harness[R, F]) EventsSent() int { return h.srv.Events() }

// IOTimeout is the adapter's deadline given to NewHarness.
func (h *Harness[R, F]) IOTimeout() time.Duration { return h.io }

// next is the mock's answer to a streaming request: the next scripted
// response (idle when none is left) with the next fault (if any) applied.
func (h *Harness[R, F]) next() llmmock.Response {
	h.mu.Lock()
	r := h.idle
	if len(h.script) > 0 {
		r, h.script = h.script[0], h.script[1:]
	}
	var f F
	if len(h.faults) > 0 {
		f, h.faults = h.faults[0], h.faults[1:]
	}
	h.mu.Unlock()
	return h.respond(r, f)
}
