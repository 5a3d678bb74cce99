package llmtest

import (
	"sync"
	"time"

	"github.com/brisvox/brisvox/providers/contracttest"
	"github.com/brisvox/brisvox/providers/llm/internal/llmmock"
	"github.com/brisvox/brisvox/providers/providertest"
)

// Harness is the provider contract suite's harness over an adapter's mock:
// every streaming request takes the next scripted response (idle when
// none is left) and the next injected fault (the zero Fault when none
// is), which respond merges into the mock's answer in the vendor's wire
// format.
type Harness struct {
	srv     Mock
	io      time.Duration
	idle    contracttest.Response
	respond func(contracttest.Response, providertest.Fault) llmmock.Response

	mu     sync.Mutex
	script []contracttest.Response
	faults []providertest.Fault
}

var _ contracttest.LLMHarness = (*Harness)(nil)

// NewHarness serves the harness's responses on srv, in place of its
// script. ioTimeout is the adapter's deadline for the connect, the first
// event and every gap, as the suite is to judge it. respond must not be
// nil.
func NewHarness(srv Mock, ioTimeout time.Duration, idle contracttest.Response, respond func(contracttest.Response, providertest.Fault) llmmock.Response) *Harness {
	h := &Harness{srv: srv, io: ioTimeout, idle: idle, respond: respond}
	srv.SetSource(h.next)
	return h
}

// Reset drops what is scripted or injected and not yet used.
func (h *Harness) Reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.script, h.faults = nil, nil
}

// Script queues r as the answer to a later stream.
func (h *Harness) Script(r contracttest.Response) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.script = append(h.script, r)
}

// Inject queues f for a later stream.
func (h *Harness) Inject(f providertest.Fault) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.faults = append(h.faults, f)
}

// EventsSent counts the event-stream data lines the mock has sent.
func (h *Harness) EventsSent() int { return h.srv.Events() }

// IOTimeout is the adapter's deadline given to NewHarness.
func (h *Harness) IOTimeout() time.Duration { return h.io }

// next is the mock's answer to a streaming request: the next scripted
// response (idle when none is left) with the next fault (if any) applied.
func (h *Harness) next() llmmock.Response {
	h.mu.Lock()
	r := h.idle
	if len(h.script) > 0 {
		r, h.script = h.script[0], h.script[1:]
	}
	var f providertest.Fault
	if len(h.faults) > 0 {
		f, h.faults = h.faults[0], h.faults[1:]
	}
	h.mu.Unlock()
	return h.respond(r, f)
}
