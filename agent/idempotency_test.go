package agent

import (
	"encoding/binary"
	"errors"
	"hash/fnv"
	"strconv"
	"strings"
	"testing"

	"github.com/brisvox/brisvox/messages"
)

// TestIdempotencyKeyDigestPinned pins the digest encoding. The values were
// computed by hash/fnv over the documented bytes (see encodeKey), not by
// Digest. Catches any change of encoding (field order, no length prefix,
// little-endian, FNV-1 instead of FNV-1a): every external key would change
// and providers would no longer recognise a redelivered call.
func TestIdempotencyKeyDigestPinned(t *testing.T) {
	cases := []struct {
		name string
		key  IdempotencyKey
		want string
	}{
		{name: "zero key", key: IdempotencyKey{}, want: "81d23fd7003c2305"},
		{name: "first call", key: IdempotencyKey{Session: "s1", Epoch: 1, CallID: "t1.0"}, want: "21cf0eee8071bb01"},
		{name: "other epoch", key: IdempotencyKey{Session: "s1", Epoch: 2, CallID: "t1.0"}, want: "c344553d0889e91c"},
		{name: "other call id", key: IdempotencyKey{Session: "s1", Epoch: 1, CallID: "t1.1"}, want: "21cf0dee8071b94e"},
		{name: "other session", key: IdempotencyKey{Session: "s2", Epoch: 1, CallID: "t1.0"}, want: "90418f21651821fc"},
		{name: "typical", key: IdempotencyKey{Session: "call-7f3a", Epoch: 42, CallID: "t42.3"}, want: "45ec2db83f9202c2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.key.String(); got != tc.want {
				t.Errorf("String() = %s, want %s", got, tc.want)
			}
			if got, want := tc.key.Digest(), fnvOf(encodeKey(tc.key)); got != want {
				t.Errorf("Digest() = %016x, hash/fnv over the documented encoding = %016x", got, want)
			}
			if got, _ := strconv.ParseUint(tc.want, 16, 64); tc.key.Digest() != got {
				t.Errorf("Digest() = %016x, want %s", tc.key.Digest(), tc.want)
			}
		})
	}
}

// TestIdempotencyKeyDigestSeparatesFields: keys whose fields concatenate to
// the same bytes differ. Catches dropping the length prefixes (a mutation
// seen failing): with the epoch's 8 bytes between them, a session ending in
// zero bytes and a call id starting with them would share a digest.
func TestIdempotencyKeyDigestSeparatesFields(t *testing.T) {
	pairs := []struct {
		name string
		a, b IdempotencyKey
	}{
		{name: "session and call id boundary", a: IdempotencyKey{Session: "ab", CallID: "c"}, b: IdempotencyKey{Session: "a", CallID: "bc"}},
		{name: "zero bytes across the epoch", a: IdempotencyKey{Session: "a", CallID: zeros8}, b: IdempotencyKey{Session: "a" + zeros8}},
		{name: "session empty vs call id empty", a: IdempotencyKey{Session: "x"}, b: IdempotencyKey{CallID: "x"}},
		{name: "epoch", a: IdempotencyKey{Session: "s", Epoch: 1, CallID: "c"}, b: IdempotencyKey{Session: "s", Epoch: 256, CallID: "c"}},
	}
	for _, tc := range pairs {
		t.Run(tc.name, func(t *testing.T) {
			if tc.a.Digest() == tc.b.Digest() {
				t.Errorf("%+v and %+v share digest %s", tc.a, tc.b, tc.a)
			}
		})
	}
}

const zeros8 = "\x00\x00\x00\x00\x00\x00\x00\x00"

// encodeKey is the documented byte encoding of Digest, written apart from it.
func encodeKey(k IdempotencyKey) []byte {
	var b []byte
	b = binary.BigEndian.AppendUint64(b, uint64(len(k.Session)))
	b = append(b, k.Session...)
	b = binary.BigEndian.AppendUint64(b, uint64(k.Epoch))
	b = binary.BigEndian.AppendUint64(b, uint64(len(k.CallID)))
	b = append(b, k.CallID...)
	return b
}

func fnvOf(b []byte) uint64 {
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
}

func TestIdempotencyConfig(t *testing.T) {
	cases := []struct {
		name    string
		cfg     IdempotencyConfig
		wantErr bool
		want    IdempotencyConfig
	}{
		{name: "zero takes the defaults", cfg: IdempotencyConfig{}, want: IdempotencyConfig{Capacity: 256, MaxBytes: 4 << 20}},
		{name: "explicit kept", cfg: IdempotencyConfig{Capacity: 1, MaxBytes: 10}, want: IdempotencyConfig{Capacity: 1, MaxBytes: 10}},
		{name: "negative capacity", cfg: IdempotencyConfig{Capacity: -1}, wantErr: true},
		{name: "negative bytes", cfg: IdempotencyConfig{MaxBytes: -1}, wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewIdempotencyStore(tc.cfg)
			if tc.wantErr {
				if !errors.Is(err, ErrInvalidIdempotencyConfig) {
					t.Fatalf("err = %v, want ErrInvalidIdempotencyConfig", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.cfg != tc.want {
				t.Errorf("config = %+v, want %+v", s.cfg, tc.want)
			}
		})
	}
}

// sk is the i-th key of a test session.
func storeKey(i int) IdempotencyKey {
	return IdempotencyKey{Session: "s", Epoch: 1, CallID: "t1." + strconv.Itoa(i)}
}

func storeResult(i int, content string) messages.ToolResult {
	return messages.ToolResult{CallID: storeKey(i).CallID, Name: "book", Content: content}
}

// storeOps drives a store in tests, failing on any unexpected error.
type storeOps struct {
	t *testing.T
	s *IdempotencyStore
}

func (o storeOps) begin(i int) {
	o.t.Helper()
	if e, found, err := o.s.Begin(storeKey(i)); err != nil || found {
		o.t.Fatalf("Begin(%d) = %+v, %v, %v; want a new key", i, e, found, err)
	}
}

func (o storeOps) done(i int, content string) {
	o.t.Helper()
	o.begin(i)
	if err := o.s.Settle(storeKey(i), storeResult(i, content)); err != nil {
		o.t.Fatalf("Settle(%d): %v", i, err)
	}
}

func (o storeOps) lost(i int) {
	o.t.Helper()
	o.begin(i)
	if err := o.s.Lose(storeKey(i)); err != nil {
		o.t.Fatalf("Lose(%d): %v", i, err)
	}
}

func (o storeOps) has(i int, want KeyState) {
	o.t.Helper()
	e, ok := o.s.Get(storeKey(i))
	if !ok || e.State != want {
		o.t.Errorf("key %d: %v (held %v), want %v", i, e.State, ok, want)
	}
}

func (o storeOps) gone(i int) {
	o.t.Helper()
	if e, ok := o.s.Get(storeKey(i)); ok {
		o.t.Errorf("key %d still held as %v, want evicted", i, e.State)
	}
}

func (o storeOps) usage(entries, bytes int) {
	o.t.Helper()
	if got := o.s.Usage(); got != (IdempotencyUsage{Entries: entries, Bytes: bytes}) {
		o.t.Errorf("usage = %+v, want %d entries, %d bytes", got, entries, bytes)
	}
}

func TestIdempotencyStore(t *testing.T) {
	const mib = 1 << 20
	cases := []struct {
		name string
		cfg  IdempotencyConfig
		run  func(o storeOps)
	}{
		{
			// Catches a Begin that runs a key again (no look-up first).
			name: "replay of a done key answers the record",
			run: func(o storeOps) {
				o.done(1, "BK-1001")
				e, found, err := o.s.Begin(storeKey(1))
				if err != nil || !found || e.State != KeyDone || e.Result.Content != "BK-1001" {
					o.t.Fatalf("Begin = %+v, %v, %v; want the recorded result", e, found, err)
				}
				got := e.Answer(messages.ToolCall{ID: "t1.1", Name: "book"})
				if got.Content != "BK-1001" || got.CallID != "t1.1" || got.IsError {
					o.t.Errorf("answer = %+v", got)
				}
			},
		},
		{
			// Catches an in-flight key answered as new (a second run
			// while the first still runs).
			name: "same key while in flight is duplicate_call",
			run: func(o storeOps) {
				o.begin(1)
				e, found, err := o.s.Begin(storeKey(1))
				if err != nil || !found || e.State != KeyInFlight {
					o.t.Fatalf("Begin = %+v, %v, %v; want in flight", e, found, err)
				}
				if got := e.Answer(tc("t1.1", "book", "{}")); !got.IsError || !strings.Contains(got.Content, `"duplicate_call"`) {
					o.t.Errorf("answer = %+v", got)
				}
			},
		},
		{
			// Catches a lost key run again or answered as duplicate.
			name: "lost key is unknown_outcome and not run",
			run: func(o storeOps) {
				o.lost(1)
				e, found, _ := o.s.Begin(storeKey(1))
				if !found || e.State != KeyLost {
					o.t.Fatalf("Begin = %+v, %v; want lost", e, found)
				}
				if got := e.Answer(tc("t1.1", "book", "{}")); !got.IsError || !strings.Contains(got.Content, `"unknown_outcome"`) {
					o.t.Errorf("answer = %+v", got)
				}
				o.usage(1, 0)
			},
		},
		{
			// Catches a failure left unrecorded (Settle skipping IsError
			// results), which would let a replay run a failed booking
			// again.
			name: "failed call is recorded as done and not retried",
			run: func(o storeOps) {
				o.begin(1)
				failed := ErrorResult(tc("t1.1", "book", "{}"), KindToolFailed, "upstream 502")
				if err := o.s.Settle(storeKey(1), failed); err != nil {
					o.t.Fatal(err)
				}
				e, found, _ := o.s.Begin(storeKey(1))
				if !found || e.State != KeyDone || !e.Result.IsError || e.Result.Content != failed.Content {
					o.t.Errorf("Begin = %+v, %v; want the recorded failure", e, found)
				}
			},
		},
		{
			// Catches settling twice (a second result overwriting the
			// first, and the key queued twice for eviction).
			name: "settle needs a key in flight",
			run: func(o storeOps) {
				if err := o.s.Settle(storeKey(1), storeResult(1, "x")); !errors.Is(err, ErrNotInFlight) {
					o.t.Errorf("Settle of an unknown key: %v", err)
				}
				o.done(2, "x")
				if err := o.s.Settle(storeKey(2), storeResult(2, "y")); !errors.Is(err, ErrNotInFlight) {
					o.t.Errorf("second Settle: %v", err)
				}
				if err := o.s.Lose(storeKey(2)); !errors.Is(err, ErrNotInFlight) {
					o.t.Errorf("Lose after Settle: %v", err)
				}
				o.usage(1, 1)
			},
		},
		{
			// Catches an off-by-one in the capacity check (evicting at
			// 256, or holding 257).
			name: "capacity exactly at 256 evicts nothing, the 257th evicts the oldest settled",
			run: func(o storeOps) {
				for i := range 256 {
					o.done(i, "r")
				}
				o.usage(256, 256)
				o.has(0, KeyDone)
				o.begin(256)
				o.gone(0)
				o.has(1, KeyDone)
				o.has(256, KeyInFlight)
				o.usage(256, 255)
			},
		},
		{
			// Catches evicting by begin order instead of settle order:
			// key 1 began first but settled last, so key 2 goes first.
			name: "eviction takes the entry settled first",
			cfg:  IdempotencyConfig{Capacity: 3},
			run: func(o storeOps) {
				o.begin(1)
				o.done(2, "a")
				o.lost(3)
				if err := o.s.Settle(storeKey(1), storeResult(1, "b")); err != nil {
					o.t.Fatal(err)
				}
				o.begin(4)
				o.gone(2)
				o.begin(5)
				o.gone(3)
				o.begin(6)
				o.gone(1)
				o.usage(3, 0)
			},
		},
		{
			// Catches evicting an in-flight entry (the oldest overall),
			// which would let its redelivery run a second time.
			name: "in-flight entries are never evicted",
			cfg:  IdempotencyConfig{Capacity: 3},
			run: func(o storeOps) {
				o.begin(1)
				o.begin(2)
				o.done(3, "a")
				o.begin(4)
				o.gone(3)
				o.has(1, KeyInFlight)
				o.has(2, KeyInFlight)
			},
		},
		{
			// Catches a full store that records or runs anyway.
			name: "all in flight is store_full and records nothing",
			cfg:  IdempotencyConfig{Capacity: 2},
			run: func(o storeOps) {
				o.begin(1)
				o.begin(2)
				_, found, err := o.s.Begin(storeKey(3))
				if !errors.Is(err, ErrStoreFull) || found {
					o.t.Fatalf("Begin = %v, %v; want ErrStoreFull", found, err)
				}
				o.gone(3)
				o.usage(2, 0)
				if got := StoreFullResult(tc("t1.3", "book", "{}")); !got.IsError || !strings.Contains(got.Content, `"store_full"`) {
					o.t.Errorf("answer = %+v", got)
				}
				// Once one settles, the next call gets its place.
				if err := o.s.Settle(storeKey(1), storeResult(1, "a")); err != nil {
					o.t.Fatal(err)
				}
				o.begin(3)
				o.gone(1)
			},
		},
		{
			// Catches an off-by-one in the byte bound (> vs >=).
			name: "bytes exactly at 4 MiB evict nothing, one more byte evicts the oldest settled",
			run: func(o storeOps) {
				o.done(1, strings.Repeat("a", 2*mib))
				o.done(2, strings.Repeat("b", 2*mib))
				o.usage(2, 4*mib)
				o.done(3, "c")
				o.gone(1)
				o.has(2, KeyDone)
				o.usage(2, 2*mib+1)
			},
		},
		{
			// Catches a byte eviction that removes in-flight entries or
			// stops after one eviction.
			name: "byte eviction skips in-flight entries and evicts until under",
			cfg:  IdempotencyConfig{MaxBytes: 10},
			run: func(o storeOps) {
				o.begin(1)
				o.done(2, "aaaa")
				o.done(3, "bbbb")
				o.done(4, "cccccccc")
				o.gone(2)
				o.gone(3)
				o.has(1, KeyInFlight)
				o.usage(2, 8)
			},
		},
		{
			// Catches a result evicted by its own recording.
			name: "a result over the budget is kept alone",
			cfg:  IdempotencyConfig{MaxBytes: 4},
			run: func(o storeOps) {
				o.done(1, "ab")
				o.done(2, "too long")
				o.gone(1)
				o.has(2, KeyDone)
				o.usage(1, 8)
				o.done(3, "c")
				o.gone(2)
				o.usage(1, 1)
			},
		},
		{
			// Catches a stale eviction queue: an evicted key begun again
			// must be evictable again, and its bytes counted once.
			name: "an evicted key runs again and is tracked afresh",
			cfg:  IdempotencyConfig{Capacity: 1},
			run: func(o storeOps) {
				o.done(1, "a")
				o.done(2, "bb")
				o.gone(1)
				o.done(1, "ccc")
				o.gone(2)
				o.usage(1, 3)
			},
		},
		{
			name: "capacity one holds one in flight",
			cfg:  IdempotencyConfig{Capacity: 1},
			run: func(o storeOps) {
				o.begin(1)
				if _, _, err := o.s.Begin(storeKey(2)); !errors.Is(err, ErrStoreFull) {
					o.t.Errorf("Begin = %v, want ErrStoreFull", err)
				}
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := NewIdempotencyStore(c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			c.run(storeOps{t: t, s: s})
			checkStoreInvariants(t, s)
		})
	}
}

// checkStoreInvariants: the byte count matches the done entries, and the
// eviction queue holds each settled key exactly once.
func checkStoreInvariants(t *testing.T, s *IdempotencyStore) {
	t.Helper()
	bytes, settled := 0, 0
	for _, e := range s.entries {
		if e.State != KeyInFlight {
			settled++
		}
		bytes += len(e.Result.Content)
	}
	if bytes != s.bytes {
		t.Errorf("byte count %d, entries hold %d", s.bytes, bytes)
	}
	seen := make(map[IdempotencyKey]bool)
	for _, k := range s.settled {
		if seen[k] {
			t.Errorf("key %+v queued twice", k)
		}
		seen[k] = true
		if e, ok := s.entries[k]; !ok || e.State == KeyInFlight {
			t.Errorf("queued key %+v is %v (held %v)", k, e.State, ok)
		}
	}
	if len(s.settled) != settled {
		t.Errorf("%d keys queued, %d settled", len(s.settled), settled)
	}
}
