package wscall

import (
	"sync"

	"github.com/coder/websocket"
)

// Registry is a handler's set of live calls. Every ServeHTTP enters it
// before the upgrade and leaves it when the call is over, so Close can
// hang up the live calls and wait for all of them.
type Registry struct {
	wg     sync.WaitGroup
	mu     sync.Mutex
	closed bool
	calls  map[*Core]struct{}
}

// Enter counts a request in; false when the handler is closed (the
// request must then be refused).
func (r *Registry) Enter() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	r.wg.Add(1)
	return true
}

// Leave counts a request out (after Enter returned true).
func (r *Registry) Leave() { r.wg.Done() }

// Add registers a live call. When the handler closed meanwhile, the call
// is hung up at once.
func (r *Registry) Add(c *Core) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		c.Hangup(websocket.StatusGoingAway, "server shutting down")
		return
	}
	if r.calls == nil {
		r.calls = map[*Core]struct{}{}
	}
	r.calls[c] = struct{}{}
}

// Remove unregisters a call.
func (r *Registry) Remove(c *Core) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.calls, c)
}

// Live is the number of live calls.
func (r *Registry) Live() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.calls)
}

// Close refuses new requests, hangs up the live calls (StatusGoingAway)
// and waits until every request has left. Safe to call more than once.
func (r *Registry) Close() {
	r.mu.Lock()
	r.closed = true
	for c := range r.calls {
		c.Hangup(websocket.StatusGoingAway, "server shutting down")
	}
	r.mu.Unlock()
	r.wg.Wait()
}
