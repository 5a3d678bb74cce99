package wscall

import "sync/atomic"

// Counters is a fixed set of named counters, safe for concurrent use. The
// names are given once; the map is never written afterwards, so Inc is a
// lookup and an atomic add.
type Counters struct {
	m map[string]*atomic.Uint64
}

// NewCounters makes counters with the given names, all zero.
func NewCounters(names ...string) *Counters {
	c := &Counters{m: make(map[string]*atomic.Uint64, len(names))}
	for _, n := range names {
		c.m[n] = new(atomic.Uint64)
	}
	return c
}

// Inc adds one to name. A name that was not registered is ignored (the
// tests of each package check that their names are registered).
func (c *Counters) Inc(name string) { c.Add(name, 1) }

// Add adds n to name.
func (c *Counters) Add(name string, n uint64) {
	if v, ok := c.m[name]; ok {
		v.Add(n)
	}
}

// Get is the value of name (0 for an unknown name).
func (c *Counters) Get(name string) uint64 {
	if v, ok := c.m[name]; ok {
		return v.Load()
	}
	return 0
}

// Has tells whether name was registered.
func (c *Counters) Has(name string) bool {
	_, ok := c.m[name]
	return ok
}

// Snapshot copies the counters.
func (c *Counters) Snapshot() map[string]uint64 {
	out := make(map[string]uint64, len(c.m))
	for n, v := range c.m {
		out[n] = v.Load()
	}
	return out
}
