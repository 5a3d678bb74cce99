package signal

import (
	"maps"
	"sync"
)

// Stats is a snapshot of the server's counters, for the integrator's
// Prometheus metrics (brisvox_sip_requests_total{method,code} and drops
// by cause).
type Stats struct {
	// Requests counts the requests that reached us, by method (after the
	// read filter).
	Requests map[string]uint64
	// Responses counts the responses we sent, by method and code.
	Responses map[MethodCode]uint64
	// Drops counts requests and datagrams dropped without an answer, by
	// cause ("filter", "udp-oversize", "invalid", "closed").
	Drops map[string]uint64
	// Panics counts recovered panics.
	Panics uint64
	// Refers counts our transfers and their NOTIFYs by event: "sent",
	// "succeeded", "refused" (REFER not 2xx), "failed", "timeout",
	// "progress" (a 1xx sipfrag), "notify_unknown" (answered 481).
	Refers map[string]uint64
	// Dials counts the ends of Dial by DialOutcome ("answered", "busy"...).
	Dials map[string]uint64
	// DialResponses counts the responses to our INVITEs, by code.
	DialResponses map[int]uint64
	// Dialogs counts the live dialogs by state.
	Dialogs map[State]int
}

// MethodCode keys Stats.Responses.
type MethodCode struct {
	Method string
	Code   int
}

// counters are the server's counters; all methods are safe for
// concurrent use.
type counters struct {
	mu        sync.Mutex
	requests  map[string]uint64
	responses map[MethodCode]uint64
	drops     map[string]uint64
	refers    map[string]uint64
	panics    uint64
	dials     map[string]uint64
	dialRes   map[int]uint64
}

func newCounters() *counters {
	return &counters{
		requests:  make(map[string]uint64),
		responses: make(map[MethodCode]uint64),
		drops:     make(map[string]uint64),
		refers:    make(map[string]uint64),
		dials:     make(map[string]uint64),
		dialRes:   make(map[int]uint64),
	}
}

func (c *counters) refer(event string) {
	c.mu.Lock()
	c.refers[event]++
	c.mu.Unlock()
}

// methodLabel bounds the label set: unknown methods count as "OTHER".
func methodLabel(m string) string {
	switch m {
	case "INVITE", "ACK", "CANCEL", "BYE", "OPTIONS", "INFO", "UPDATE", "REFER",
		"REGISTER", "MESSAGE", "SUBSCRIBE", "NOTIFY", "PUBLISH", "PRACK":
		return m
	}
	return "OTHER"
}

func (c *counters) request(method string) {
	c.mu.Lock()
	c.requests[methodLabel(method)]++
	c.mu.Unlock()
}

func (c *counters) response(method string, code int) {
	c.mu.Lock()
	c.responses[MethodCode{methodLabel(method), code}]++
	c.mu.Unlock()
}

func (c *counters) drop(cause string) {
	c.mu.Lock()
	c.drops[cause]++
	c.mu.Unlock()
}

func (c *counters) panicked() {
	c.mu.Lock()
	c.panics++
	c.mu.Unlock()
}

func (c *counters) snapshot() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Stats{
		Requests:  maps.Clone(c.requests),
		Responses: maps.Clone(c.responses),
		Drops:     maps.Clone(c.drops),
		Refers:    maps.Clone(c.refers),
		Panics:    c.panics,
		Dials:     maps.Clone(c.dials),

		DialResponses: maps.Clone(c.dialRes),
		Dialogs:       make(map[State]int),
	}
}
