package agent

import (
	"errors"
	"fmt"

	"github.com/brisvox/brisvox/messages"
)

// Sentinel errors of the idempotency store.
var (
	// ErrStoreFull: every entry of the store is in flight, so a new key
	// cannot be recorded. The caller answers the call store_full and does
	// not run it (a call whose result could not be recorded could run
	// twice).
	ErrStoreFull = errors.New("agent: idempotency store full")

	// ErrNotInFlight: Settle or Lose named a key that is not in flight
	// (never begun, or already settled). A caller bug: a key settles once.
	ErrNotInFlight = errors.New("agent: idempotency key not in flight")

	// ErrInvalidIdempotencyConfig: a negative bound in IdempotencyConfig.
	ErrInvalidIdempotencyConfig = errors.New("agent: invalid idempotency config")
)

// IdempotencyKey names one delivery of one tool call: every redelivery of
// the call (a replayed response, a restarted actor) has the same key, and
// two different calls never share one, since call ids are unique within a
// turn (t<epoch>.<seq>).
type IdempotencyKey struct {
	Session string
	Epoch   messages.Epoch
	CallID  string
}

// FNV-1a 64-bit parameters.
const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
)

// fnv64a is an FNV-1a 64-bit hash written inline, so digests allocate
// nothing (hash/fnv returns an interface that escapes).
type fnv64a uint64

func newFNV64a() fnv64a { return fnvOffset64 }

func (h *fnv64a) writeByte(b byte) {
	*h = (*h ^ fnv64a(b)) * fnvPrime64
}

func (h *fnv64a) writeString(s string) {
	for i := 0; i < len(s); i++ {
		h.writeByte(s[i])
	}
}

// writeUint64 writes v as 8 bytes, big-endian.
func (h *fnv64a) writeUint64(v uint64) {
	for shift := 56; shift >= 0; shift -= 8 {
		h.writeByte(byte(v >> uint(shift)))
	}
}

// writeField writes s length-prefixed, so ("ab", "c") and ("a", "bc") hash
// differently.
func (h *fnv64a) writeField(s string) {
	h.writeUint64(uint64(len(s)))
	h.writeString(s)
}

// Digest is a stable FNV-1a 64-bit hash of the key, for logs and for the
// Idempotency-Key header of a downstream API. The hashed bytes are
//
//	len(Session) as 8 bytes big-endian, Session,
//	Epoch as 8 bytes big-endian,
//	len(CallID) as 8 bytes big-endian, CallID.
//
// The encoding is pinned by a test: changing it changes every external key,
// so a provider would no longer recognise a redelivered call. Distinct keys
// may share a digest; key a store on the whole IdempotencyKey.
func (k IdempotencyKey) Digest() uint64 {
	h := newFNV64a()
	h.writeField(k.Session)
	h.writeUint64(uint64(k.Epoch))
	h.writeField(k.CallID)
	return uint64(h)
}

// String is the digest as 16 lowercase hex digits: the external form
// (CallInfo.IdempotencyKey, an Idempotency-Key header). It names no
// session, epoch or call id, so it is safe to log.
func (k IdempotencyKey) String() string {
	const hexDigits = "0123456789abcdef"
	d := k.Digest()
	var b [16]byte
	for i := 15; i >= 0; i-- {
		b[i] = hexDigits[d&0xf]
		d >>= 4
	}
	return string(b[:])
}

// KeyState is the state of a key in the IdempotencyStore.
type KeyState int

// The states of a key. A key goes from in flight to done or lost, once.
const (
	// KeyInFlight: the call is running. Another delivery answers
	// duplicate_call.
	KeyInFlight KeyState = iota + 1
	// KeyDone: the call returned; its result (a failure included) is
	// recorded and another delivery answers it without running.
	KeyDone
	// KeyLost: the run ended without a result (a panic, the backstop).
	// Another delivery answers unknown_outcome and does not run.
	KeyLost
)

// String implements fmt.Stringer.
func (s KeyState) String() string {
	switch s {
	case KeyInFlight:
		return "in_flight"
	case KeyDone:
		return "done"
	case KeyLost:
		return "lost"
	default:
		return "unknown"
	}
}

// IdempotencyEntry is what the store knows about a key.
type IdempotencyEntry struct {
	State KeyState
	// Result is the recorded result, for KeyDone only. A failed SideEffect
	// is recorded too (IsError), since the engine cannot know whether the
	// failed tool changed anything.
	Result messages.ToolResult
}

// Answer is the result a redelivery of call gets from the entry, under the
// call's own id and name: the recorded result for a done key, duplicate_call
// for one in flight, unknown_outcome for a lost one.
func (e IdempotencyEntry) Answer(call messages.ToolCall) messages.ToolResult {
	switch e.State {
	case KeyDone:
		r := e.Result
		r.CallID, r.Name = call.ID, call.Name
		return r
	case KeyLost:
		return ErrorResult(call, KindUnknownOutcome,
			"this call ran before and ended without a result; its outcome is unknown: do not repeat it without asking the caller")
	default:
		return ErrorResult(call, KindDuplicateCall,
			"this call is already running; its result follows as a note: do not repeat it")
	}
}

// StoreFullResult answers a call refused with ErrStoreFull. The call did
// not run.
func StoreFullResult(call messages.ToolCall) messages.ToolResult {
	return ErrorResult(call, KindStoreFull,
		"too many actions are still running; this call did not run: tell the caller to try again shortly")
}

// Default bounds of an IdempotencyStore, per session.
const (
	DefaultIdempotencyCapacity = 256
	DefaultIdempotencyMaxBytes = 4 << 20
)

// IdempotencyConfig bounds an IdempotencyStore. Zero fields take the
// defaults.
type IdempotencyConfig struct {
	// Capacity is the most keys held, in flight included.
	Capacity int
	// MaxBytes bounds the recorded result text (the Content of done
	// results). Set it to at least the largest result a tool may return,
	// or that result evicts every other settled entry when it is recorded.
	MaxBytes int
}

// Validate rejects negative bounds.
func (c IdempotencyConfig) Validate() error {
	if c.Capacity < 0 {
		return fmt.Errorf("%w: negative capacity %d", ErrInvalidIdempotencyConfig, c.Capacity)
	}
	if c.MaxBytes < 0 {
		return fmt.Errorf("%w: negative max bytes %d", ErrInvalidIdempotencyConfig, c.MaxBytes)
	}
	return nil
}

func (c IdempotencyConfig) withDefaults() IdempotencyConfig {
	if c.Capacity == 0 {
		c.Capacity = DefaultIdempotencyCapacity
	}
	if c.MaxBytes == 0 {
		c.MaxBytes = DefaultIdempotencyMaxBytes
	}
	return c
}

// IdempotencyUsage is how much of its bounds a store uses.
type IdempotencyUsage struct {
	Entries int
	Bytes   int
}

// IdempotencyStore records the SideEffect calls of one session by key, so a
// redelivered call is answered from the record instead of running again.
//
// It is bounded by IdempotencyConfig: when a bound is reached, the settled
// (done or lost) entry that settled first is evicted; an entry in flight is
// never evicted, since forgetting it would let a redelivery run the call a
// second time while the first still runs. A redelivery of an evicted key
// runs again; call ids are unique within a turn, so only the retry of an
// old response can do that.
//
// It is not safe for concurrent use: one actor owns it.
type IdempotencyStore struct {
	cfg     IdempotencyConfig
	entries map[IdempotencyKey]IdempotencyEntry
	// settled holds the settled keys in settle order, oldest first: the
	// eviction queue. A key enters it once, when it settles, and leaves it
	// only by eviction, so it never holds a key twice.
	settled []IdempotencyKey
	bytes   int
}

// NewIdempotencyStore makes an empty store bounded by cfg.
func NewIdempotencyStore(cfg IdempotencyConfig) (*IdempotencyStore, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	return &IdempotencyStore{
		cfg:     cfg,
		entries: make(map[IdempotencyKey]IdempotencyEntry),
	}, nil
}

// Begin claims key before its call runs. When the key is known, found is
// true and entry is what the store holds: the caller answers the call with
// entry.Answer and does not run it. Otherwise the key is recorded in flight
// and the caller runs the call, then Settles or Loses the key. When every
// entry is in flight, nothing is recorded and err wraps ErrStoreFull: the
// caller answers StoreFullResult and does not run the call.
func (s *IdempotencyStore) Begin(key IdempotencyKey) (entry IdempotencyEntry, found bool, err error) {
	if e, ok := s.entries[key]; ok {
		return e, true, nil
	}
	if len(s.entries) >= s.cfg.Capacity && !s.evictOldest() {
		return IdempotencyEntry{}, false, fmt.Errorf("%w: %d calls in flight", ErrStoreFull, len(s.entries))
	}
	s.entries[key] = IdempotencyEntry{State: KeyInFlight}
	return IdempotencyEntry{}, false, nil
}

// Settle records the result of key's call, which is in flight. A failed
// call is settled like a successful one (result.IsError), so it is not run
// again for the same key. The settled result is never evicted by its own
// recording: when it alone exceeds MaxBytes, every other settled entry is
// evicted and it stays until the next eviction.
func (s *IdempotencyStore) Settle(key IdempotencyKey, result messages.ToolResult) error {
	if err := s.settle(key, IdempotencyEntry{State: KeyDone, Result: result}); err != nil {
		return err
	}
	s.bytes += len(result.Content)
	// The new key is last in the queue; evict older ones while over.
	for s.bytes > s.cfg.MaxBytes && len(s.settled) > 1 {
		s.evictOldest()
	}
	return nil
}

// Lose records that key's call ended without a result. Another delivery
// answers unknown_outcome and does not run.
func (s *IdempotencyStore) Lose(key IdempotencyKey) error {
	return s.settle(key, IdempotencyEntry{State: KeyLost})
}

func (s *IdempotencyStore) settle(key IdempotencyKey, e IdempotencyEntry) error {
	if cur, ok := s.entries[key]; !ok || cur.State != KeyInFlight {
		return fmt.Errorf("%w: %s", ErrNotInFlight, key)
	}
	s.entries[key] = e
	s.settled = append(s.settled, key)
	return nil
}

// evictOldest removes the settled entry that settled first and reports
// whether there was one.
func (s *IdempotencyStore) evictOldest() bool {
	if len(s.settled) == 0 {
		return false
	}
	key := s.settled[0]
	s.settled[0] = IdempotencyKey{} // release the strings
	s.settled = s.settled[1:]
	s.bytes -= len(s.entries[key].Result.Content)
	delete(s.entries, key)
	return true
}

// Get returns what the store holds for key.
func (s *IdempotencyStore) Get(key IdempotencyKey) (IdempotencyEntry, bool) {
	e, ok := s.entries[key]
	return e, ok
}

// Usage reports the entries held and the bytes of recorded result text.
func (s *IdempotencyStore) Usage() IdempotencyUsage {
	return IdempotencyUsage{Entries: len(s.entries), Bytes: s.bytes}
}
