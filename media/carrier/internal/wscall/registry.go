package wscall

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/brisvox/brisvox/internal/ratelog"
	"github.com/brisvox/brisvox/media/conn"
	"github.com/coder/websocket"
	"github.com/rs/zerolog"
)

// DrainRetryAfter is the Retry-After of the refusals of a closed handler
// (cause "draining"): by then another instance, or this one restarted,
// may take the call.
const DrainRetryAfter = 5 * time.Second

// RefusalEvery is the interval of the refusals' summary log line.
const RefusalEvery = 10 * time.Second

// Denial is a request refused before admission by a handler's check (a
// bad signature, an origin not allowed): an HTTP status, a message safe
// to show the client (it quotes nothing of the request) and the cause it
// is counted and logged under.
type Denial struct {
	Status  int
	Cause   string
	Message string
}

func (d *Denial) Error() string { return d.Message }

// RegistryConfig sets up a Registry. What names the handler in its log
// lines ("pcm websocket"); Stats must have "refused", "forbidden",
// "bad_upgrades" and "upgrades".
type RegistryConfig struct {
	What  string
	Admit conn.Admitter
	// Check, when set, runs before Admit: a Denial refuses the request
	// without taking a slot.
	Check func(*http.Request) *Denial
	// OriginPatterns are the websocket accept's allowed origin hosts
	// (websocket.AcceptOptions).
	OriginPatterns []string
	Stats          *Counters
	Log            zerolog.Logger
}

// Registry is a handler's gate and its set of live calls. Every
// ServeHTTP enters it before the upgrade and leaves it when the call is
// over, so Close can hang up the live calls and wait for all of them.
// Refusals and denials are not logged one by one: a ratelog.Tally writes
// the first at once and then a summary per RefusalEvery with the counts
// by cause.
type Registry struct {
	cfg      RegistryConfig
	refusals *ratelog.Tally

	wg     sync.WaitGroup
	mu     sync.Mutex
	closed bool
	calls  map[*Core]struct{}
}

// NewRegistry makes an open registry.
func NewRegistry(cfg RegistryConfig) *Registry {
	return &Registry{
		cfg:      cfg,
		refusals: ratelog.New(cfg.Log, cfg.What+": requests refused", RefusalEvery),
		calls:    map[*Core]struct{}{},
	}
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

// Close refuses new requests (503, cause "draining"), hangs up the live
// calls (StatusGoingAway), waits until every request has left and writes
// the refusals' last summary. Safe to call more than once.
func (r *Registry) Close() {
	r.mu.Lock()
	r.closed = true
	for c := range r.calls {
		c.Hangup(websocket.StatusGoingAway, "server shutting down")
	}
	r.mu.Unlock()
	r.wg.Wait()
	r.refusals.Close()
}

// refusalBody is the JSON body of a refusal or denial.
type refusalBody struct {
	Error string `json:"error"`
	Cause string `json:"cause"`
}

// Accept admits a request and upgrades it: the registry's gate (503,
// cause "draining", when the handler is closed), the check (its Denial's
// status), the admit hook (503 with Retry-After and the refusal's cause:
// the slot is reserved before the upgrade), then the websocket handshake
// (Accept writes its own HTTP error). On success the caller must call
// r.Leave when the call is over, and release the admission (a no-op once
// the call started); on failure the request was answered and counted,
// and the slot released.
func (r *Registry) Accept(w http.ResponseWriter, req *http.Request) (*websocket.Conn, conn.Admission, bool) {
	stats := r.cfg.Stats
	if !r.Enter() {
		r.refuse(w, &conn.Refusal{Cause: conn.RefusedDraining, Detail: "shutting down", RetryAfter: DrainRetryAfter})
		return nil, nil, false
	}
	if r.cfg.Check != nil {
		if d := r.cfg.Check(req); d != nil {
			r.Leave()
			stats.Inc("forbidden")
			r.refusals.Add(d.Cause)
			writeJSON(w, d.Status, refusalBody{Error: d.Message, Cause: d.Cause})
			return nil, nil, false
		}
	}
	var adm conn.Admission = noAdmission{}
	if r.cfg.Admit != nil {
		a, err := r.cfg.Admit()
		if err != nil {
			r.Leave()
			r.refuse(w, conn.RefusalOf(err))
			return nil, nil, false
		}
		adm = a
	}
	ws, err := websocket.Accept(w, req, &websocket.AcceptOptions{
		CompressionMode: websocket.CompressionDisabled,
		OriginPatterns:  r.cfg.OriginPatterns,
	})
	if err != nil {
		adm.Release()
		r.Leave()
		stats.Inc("bad_upgrades") // Accept wrote the HTTP error
		return nil, nil, false
	}
	stats.Inc("upgrades")
	return ws, adm, true
}

// refuse answers 503 with Retry-After and the refusal as JSON, counted
// and tallied by cause.
func (r *Registry) refuse(w http.ResponseWriter, ref *conn.Refusal) {
	r.cfg.Stats.Inc("refused")
	r.refusals.Add(string(ref.Cause))
	w.Header().Set("Retry-After", strconv.Itoa(ref.RetryAfterSeconds()))
	writeJSON(w, http.StatusServiceUnavailable, refusalBody{Error: ref.Error(), Cause: string(ref.Cause)})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v) // two strings: never fails
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// noAdmission is the slot of a handler without an admit hook.
type noAdmission struct{}

func (noAdmission) Release() {}

// CloseCode is the websocket close code of the way the server ended a
// call: never 1000 for a call that could not be started.
func CloseCode(k conn.EndKind) websocket.StatusCode {
	switch k {
	case conn.EndTryLater:
		return websocket.StatusTryAgainLater
	case conn.EndInternal:
		return websocket.StatusInternalError
	case conn.EndGoingAway:
		return websocket.StatusGoingAway
	}
	return websocket.StatusNormalClosure
}
