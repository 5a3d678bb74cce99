package wscall

import (
	"net/http"
	"sync"

	"github.com/brisvox/brisvox/actors/transport"
	"github.com/coder/websocket"
	"github.com/rs/zerolog"
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

// Accept admits a request and upgrades it: the registry's gate (503 when
// the handler is closed), the admit hook (503 when it refuses: the slot
// is reserved before the upgrade), then the websocket handshake (Accept
// writes its own HTTP error). On success the caller must call r.Leave
// when the call is over, and release the admission (a no-op once the
// call started); on failure the request was answered and counted, and
// the slot released.
func (r *Registry) Accept(w http.ResponseWriter, req *http.Request, admit transport.Admitter, stats *Counters, log zerolog.Logger, what string) (*websocket.Conn, transport.Admission, bool) {
	if !r.Enter() {
		stats.Inc("refused")
		http.Error(w, "shutting down", http.StatusServiceUnavailable)
		return nil, nil, false
	}
	var adm transport.Admission = noAdmission{}
	if admit != nil {
		a, err := admit()
		if err != nil {
			r.Leave()
			stats.Inc("refused")
			log.Warn().Err(err).Msg(what + " refused")
			http.Error(w, "not admitted", http.StatusServiceUnavailable)
			return nil, nil, false
		}
		adm = a
	}
	ws, err := websocket.Accept(w, req, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		adm.Release()
		r.Leave()
		stats.Inc("bad_upgrades") // Accept wrote the HTTP error
		return nil, nil, false
	}
	stats.Inc("upgrades")
	return ws, adm, true
}

// noAdmission is the slot of a handler without an admit hook.
type noAdmission struct{}

func (noAdmission) Release() {}

// CloseCode is the websocket close code of the way the server ended a
// call: never 1000 for a call that could not be started.
func CloseCode(k transport.EndKind) websocket.StatusCode {
	switch k {
	case transport.EndTryLater:
		return websocket.StatusTryAgainLater
	case transport.EndInternal:
		return websocket.StatusInternalError
	case transport.EndGoingAway:
		return websocket.StatusGoingAway
	}
	return websocket.StatusNormalClosure
}
