package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/brisvox/brisvox/messages"
)

// ErrInvalidOrphanConfig: a negative capacity in OrphanConfig.
var ErrInvalidOrphanConfig = errors.New("agent: invalid orphan config")

// KindAlreadyReported answers a regenerated call whose orphan's result is
// already in the context as a late note. It is an error kind, like those of
// result.go.
const KindAlreadyReported = "already_reported"

// Bounds of the orphan table, per session.
const (
	// DefaultOrphanCapacity is how many recent SideEffect calls are
	// remembered; both checks of OrphanTable.Check scan at most this many.
	DefaultOrphanCapacity = 32
	// DefaultOrphanWindow is how long after its last news an orphan still
	// answers a regenerated identical call.
	DefaultOrphanWindow = 120 * time.Second
)

// ArgumentsDigest is a stable FNV-1a 64-bit digest of a tool name and its
// JSON arguments, compared as JSON values: object key order and whitespace
// do not matter, string escapes are decoded ("\u0041" equals "A"), array
// order does. Numbers compare by their literal text, so 1 and 1.0 differ:
// a missed repeat runs a call, while treating two values as one could refuse
// a call the model meant. Empty arguments equal {}, as for RunCall.
// Arguments that are not one valid JSON value are hashed as raw bytes under
// their own tag, so they never equal a valid value.
//
// The hashed encoding is the tool name length-prefixed (8 bytes
// big-endian), then the value: null 'z', true 't', false 'f', a number 'n'
// and its literal length-prefixed, a string 's' and its bytes
// length-prefixed, an array 'a', its length and its elements, an object
// 'o', its length and its members sorted by key bytes, each key
// length-prefixed then its value; invalid JSON is 'r' and the raw bytes
// length-prefixed.
func ArgumentsDigest(tool string, args json.RawMessage) uint64 {
	h := newFNV64a()
	h.writeField(tool)
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 {
		trimmed = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.InputOffset() != int64(len(trimmed)) {
		h.writeByte('r')
		h.writeField(string(trimmed))
		return uint64(h)
	}
	h.writeValue(v)
	return uint64(h)
}

// writeValue hashes a value decoded with UseNumber in the canonical walk
// ArgumentsDigest documents.
func (h *fnv64a) writeValue(v any) {
	switch v := v.(type) {
	case nil:
		h.writeByte('z')
	case bool:
		if v {
			h.writeByte('t')
		} else {
			h.writeByte('f')
		}
	case json.Number:
		h.writeByte('n')
		h.writeField(string(v))
	case string:
		h.writeByte('s')
		h.writeField(v)
	case []any:
		h.writeByte('a')
		h.writeUint64(uint64(len(v)))
		for _, e := range v {
			h.writeValue(e)
		}
	case map[string]any:
		h.writeByte('o')
		h.writeUint64(uint64(len(v)))
		for _, k := range slices.Sorted(maps.Keys(v)) {
			h.writeField(k)
			h.writeValue(v[k])
		}
	default:
		// Decode into any yields only the types above.
		panic(fmt.Sprintf("agent: unexpected JSON value %T", v))
	}
}

// OrphanConfig bounds an OrphanTable. Zero fields take the defaults.
type OrphanConfig struct {
	// Capacity is how many recent calls are remembered; the oldest started
	// is forgotten first.
	Capacity int
	// Window is how long an orphan answers a regenerated call after its
	// last news (start, settle or orphaning). Zero means
	// DefaultOrphanWindow; negative turns the orphan answers off (the
	// repeat check, which has no window, stays on).
	Window time.Duration
}

// Validate rejects a negative capacity.
func (c OrphanConfig) Validate() error {
	if c.Capacity < 0 {
		return fmt.Errorf("%w: negative capacity %d", ErrInvalidOrphanConfig, c.Capacity)
	}
	return nil
}

func (c OrphanConfig) withDefaults() OrphanConfig {
	if c.Capacity == 0 {
		c.Capacity = DefaultOrphanCapacity
	}
	if c.Window == 0 {
		c.Window = DefaultOrphanWindow
	}
	return c
}

// TrackedCall is a SideEffect call as the orphan table remembers it. Epoch
// (in Key) and Round together name the response run that made the call:
// calls of one run share them, and each execute or commit of a new response
// must use a new pair.
type TrackedCall struct {
	Key    IdempotencyKey
	Round  int
	Tool   string
	Digest uint64 // ArgumentsDigest(Tool, arguments)
}

func (c TrackedCall) sameRun(o TrackedCall) bool {
	return c.Key.Epoch == o.Key.Epoch && c.Round == o.Round
}

// Probe is a new SideEffect call checked against the table before it runs.
type Probe struct {
	TrackedCall
	// Repeatable opts the call out of the repeat check (Spec's repeatable:
	// pressing the same IVR digit twice). Orphan answers still apply.
	Repeatable bool
}

// Verdict is what OrphanTable.Check decided for a probe. Its String is the
// trace outcome.
type Verdict int

// The verdicts.
const (
	// VerdictRun: no earlier call answers this one; run it.
	VerdictRun Verdict = iota
	// VerdictAlreadyDone: an identical call of an earlier response of the
	// same turn succeeded and its result was delivered (already_done).
	VerdictAlreadyDone
	// VerdictOrphanReplayed: an identical orphan finished; its recorded
	// result answers, under the new call id.
	VerdictOrphanReplayed
	// VerdictAlreadyReported: an identical orphan finished and its late note
	// is already in the context (already_reported).
	VerdictAlreadyReported
	// VerdictOrphanInFlight: an identical orphan is still running
	// (duplicate_call); its note follows when it finishes.
	VerdictOrphanInFlight
	// VerdictOrphanLost: an identical orphan ended without a result
	// (unknown_outcome).
	VerdictOrphanLost
)

// String implements fmt.Stringer with the trace outcome names.
func (v Verdict) String() string {
	switch v {
	case VerdictRun:
		return "run"
	case VerdictAlreadyDone:
		return "repeat_refused"
	case VerdictOrphanReplayed:
		return "orphan_replayed"
	case VerdictAlreadyReported:
		return "orphan_reported"
	case VerdictOrphanInFlight:
		return "orphan_in_flight"
	case VerdictOrphanLost:
		return "orphan_lost"
	default:
		return "unknown"
	}
}

// Match is the answer of OrphanTable.Check.
type Match struct {
	Verdict Verdict
	// Original is the earlier call that answers; zero for VerdictRun. After
	// a VerdictOrphanReplayed or VerdictOrphanLost answer reaches the
	// context, Consume it.
	Original IdempotencyKey
	// Result is the original's recorded result, for VerdictAlreadyDone and
	// VerdictOrphanReplayed.
	Result messages.ToolResult
}

// Answer is the result for call (the probe's call) when the match answers
// it, and false when the call should run.
func (m Match) Answer(call messages.ToolCall) (messages.ToolResult, bool) {
	switch m.Verdict {
	case VerdictAlreadyDone:
		return ErrorResult(call, KindAlreadyDone,
			"an identical call already ran earlier in this turn and succeeded; its result is above: do not repeat this call, tell the caller what happened"), true
	case VerdictOrphanReplayed:
		r := m.Result
		r.CallID, r.Name = call.ID, call.Name
		return r, true
	case VerdictAlreadyReported:
		return ErrorResult(call, KindAlreadyReported,
			"an identical call already ran; its result is in the note above: do not repeat it"), true
	case VerdictOrphanInFlight:
		return ErrorResult(call, KindDuplicateCall,
			"an identical call is still running; its result follows as a note: do not repeat it"), true
	case VerdictOrphanLost:
		return ErrorResult(call, KindUnknownOutcome,
			"an identical call ran before and ended without a result; its outcome is unknown: do not repeat it without asking the caller"), true
	default:
		return messages.ToolResult{}, false
	}
}

// orphanEntry is one remembered call.
type orphanEntry struct {
	call     TrackedCall
	state    KeyState
	result   messages.ToolResult // KeyDone only
	orphan   bool                // its result cannot reach the model as its own tool result
	reported bool                // its late note reached the context
	news     time.Time           // start, settle or orphaning, the latest: the window's start
}

// OrphanTable remembers the recent SideEffect calls of one session, by tool
// and argument digest, for the two checks the idempotency key cannot make
// because the new call has a new call id:
//
//   - repeats within a turn: the model read the success of a call and asks
//     for it again in a later response of the same turn (already_done);
//   - orphans: a call whose result could not reach the model as its own tool
//     result (interrupted or timed out while running, its execution
//     dropped), asked for again by a regenerated response.
//
// Record only SideEffect calls that are not gated by a confirmation: a
// ReadOnly call may always repeat, and a gated call has its own cycle.
// Time is passed in; the table reads no clock. It is not safe for
// concurrent use: one actor owns it.
type OrphanTable struct {
	cfg     OrphanConfig
	entries []orphanEntry // in start order, oldest first
}

// NewOrphanTable makes an empty table bounded by cfg.
func NewOrphanTable(cfg OrphanConfig) (*OrphanTable, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	// Entries grow as calls come: most calls never run a SideEffect tool.
	return &OrphanTable{cfg: cfg}, nil
}

// Start remembers a call that starts running now, forgetting the oldest
// call when the table is full. A key already remembered is left as it is.
func (t *OrphanTable) Start(c TrackedCall, now time.Time) {
	if t.find(c.Key) >= 0 {
		return
	}
	if len(t.entries) >= t.cfg.Capacity {
		// Shift rather than reslice, so the backing array stays the
		// capacity's and the forgotten entry's strings are released.
		copy(t.entries, t.entries[1:])
		t.entries[len(t.entries)-1] = orphanEntry{}
		t.entries = t.entries[:len(t.entries)-1]
	}
	t.entries = append(t.entries, orphanEntry{call: c, state: KeyInFlight, news: now})
}

// Settle records key's result (a failure included). It reports whether the
// key is remembered.
func (t *OrphanTable) Settle(key IdempotencyKey, result messages.ToolResult, now time.Time) bool {
	return t.update(key, now, func(e *orphanEntry) {
		e.state, e.result = KeyDone, result
	})
}

// Lose records that key's call ended without a result.
func (t *OrphanTable) Lose(key IdempotencyKey, now time.Time) bool {
	return t.update(key, now, func(e *orphanEntry) {
		e.state, e.result = KeyLost, messages.ToolResult{}
	})
}

// MarkOrphan records that key's result can no longer reach the model as its
// own tool result: it was interrupted or timed out while running, or the
// execution carrying it was dropped undelivered.
func (t *OrphanTable) MarkOrphan(key IdempotencyKey, now time.Time) bool {
	return t.update(key, now, func(e *orphanEntry) { e.orphan = true })
}

// MarkReported records that key's late note reached the context, so a
// regenerated call is answered already_reported instead of reading the
// result twice. It does not move the window.
func (t *OrphanTable) MarkReported(key IdempotencyKey) bool {
	i := t.find(key)
	if i < 0 {
		return false
	}
	t.entries[i].reported = true
	return true
}

// Consume ends key's orphan answers once a replayed or lost answer
// reached the context: the model has now read what happened, so the call
// counts as delivered (a repeat in the same turn is already_done, a new
// turn may run it again).
func (t *OrphanTable) Consume(key IdempotencyKey) bool {
	i := t.find(key)
	if i < 0 {
		return false
	}
	t.entries[i].orphan = false
	return true
}

func (t *OrphanTable) update(key IdempotencyKey, now time.Time, f func(*orphanEntry)) bool {
	i := t.find(key)
	if i < 0 {
		return false
	}
	f(&t.entries[i])
	t.entries[i].news = now
	return true
}

func (t *OrphanTable) find(key IdempotencyKey) int {
	for i := range t.entries {
		if t.entries[i].call.Key == key {
			return i
		}
	}
	return -1
}

// Len is the number of remembered calls.
func (t *OrphanTable) Len() int { return len(t.entries) }

// Check decides whether an earlier call answers p, scanning from the most
// recently started call; the first that applies decides. An earlier call
// applies when it has the same session, tool and digest, comes from another
// response run (identical calls of one response are separate calls), and
// either
//
//   - is an orphan whose last news is less than the window before now
//     (exactly the window is expired): VerdictOrphanInFlight while it runs,
//     VerdictAlreadyReported when it finished and its note was delivered,
//     VerdictOrphanReplayed when it finished otherwise, VerdictOrphanLost
//     when it ended without a result; or
//   - is not an orphan, is of the same turn (epoch), finished and did not
//     fail, and p is not Repeatable: VerdictAlreadyDone.
//
// Not a repeat, so VerdictRun: other arguments, another turn for a
// delivered call, the same response, an earlier failure (a failed call may
// be retried), a running or lost call that is not an orphan.
func (t *OrphanTable) Check(p Probe, now time.Time) Match {
	for i := len(t.entries) - 1; i >= 0; i-- {
		e := &t.entries[i]
		c := e.call
		if c.Key.Session != p.Key.Session || c.Tool != p.Tool || c.Digest != p.Digest || c.sameRun(p.TrackedCall) {
			continue
		}
		if e.orphan {
			if t.cfg.Window < 0 || now.Sub(e.news) >= t.cfg.Window {
				continue
			}
			m := Match{Original: c.Key}
			switch {
			case e.state == KeyInFlight:
				m.Verdict = VerdictOrphanInFlight
			case e.state == KeyLost:
				m.Verdict = VerdictOrphanLost
			case e.reported:
				m.Verdict = VerdictAlreadyReported
			default:
				m.Verdict, m.Result = VerdictOrphanReplayed, e.result
			}
			return m
		}
		if !p.Repeatable && c.Key.Epoch == p.Key.Epoch && e.state == KeyDone && !e.result.IsError {
			return Match{Verdict: VerdictAlreadyDone, Original: c.Key, Result: e.result}
		}
	}
	return Match{Verdict: VerdictRun}
}
