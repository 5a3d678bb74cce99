package records

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// memStore is a TEST DOUBLE of Store (a map behind a mutex), for the
// service's tests before and beside the real backends (sqlstore): it can
// be taken down (every call fails with ErrUnavailable) and counts Puts.
type memStore struct {
	mu       sync.Mutex
	recs     map[string]*Record
	down     bool
	puts     int
	inserted int
	audit    []AuditEntry
}

var _ Store = (*memStore)(nil)

func newMemStore() *memStore { return &memStore{recs: map[string]*Record{}} }

func (m *memStore) setDown(d bool) {
	m.mu.Lock()
	m.down = d
	m.mu.Unlock()
}

func clone(r *Record) *Record {
	b, err := json.Marshal(r)
	if err != nil {
		panic(err)
	}
	out := new(Record)
	if err := json.Unmarshal(b, out); err != nil {
		panic(err)
	}
	return out
}

func (m *memStore) Put(ctx context.Context, r *Record) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return false, fmt.Errorf("%w: the test double is down", ErrUnavailable)
	}
	m.puts++
	if _, ok := m.recs[r.CallID]; ok {
		return false, nil
	}
	m.recs[r.CallID] = clone(r)
	m.inserted++
	return true, nil
}

func (m *memStore) Get(ctx context.Context, id string) (*Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return nil, ErrUnavailable
	}
	r, ok := m.recs[id]
	if !ok {
		return nil, ErrNotFound
	}
	return clone(r), nil
}

func (m *memStore) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.recs)
}

func (m *memStore) counts() (puts, inserted int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.puts, m.inserted
}

func (m *memStore) List(ctx context.Context, q Query) ([]Summary, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Summary
	for _, r := range m.recs {
		out = append(out, Summary{CallID: r.CallID, Started: r.Started, Ended: r.Ended, EndReason: r.EndReason, Agent: r.Agent})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CallID < out[j].CallID })
	return out, nil
}

func (m *memStore) Erase(ctx context.Context, e Erasure) (ErasureResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return ErasureResult{}, ErrUnavailable
	}
	var res ErasureResult
	for id, r := range m.recs {
		if (e.CallID != "" && id == e.CallID) || (e.CallerHash != "" && r.Caller.Hash == e.CallerHash) {
			if r.Recording != nil && !r.Recording.Removed {
				res.Recordings = append(res.Recordings, *r.Recording)
			}
			delete(m.recs, id)
			res.Erased++
		}
	}
	m.audit = append(m.audit, AuditEntry{At: e.At, By: e.By, Reason: e.Reason, CallID: e.CallID, CallerHash: e.CallerHash, Erased: res.Erased})
	return res, nil
}

// Sweep keeps the retention rule the backends keep: a part goes once
// now - Ended >= its retention (zero: kept).
func (m *memStore) Sweep(ctx context.Context, ret Retention, now time.Time) (SweepResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var res SweepResult
	past := func(d time.Duration, r *Record) bool { return d > 0 && now.Sub(r.Ended) >= d }
	for id, r := range m.recs {
		if past(ret.Records, r) {
			if r.Recording != nil && !r.Recording.Removed {
				res.Recordings = append(res.Recordings, *r.Recording)
			}
			delete(m.recs, id)
			res.Records++
			continue
		}
		if past(ret.Transcripts, r) && !r.TranscriptRemoved {
			r.Transcript, r.TranscriptRemoved = nil, true
			res.Transcripts++
		}
		if past(ret.ToolData, r) && !r.ToolDataRemoved {
			for i := range r.Tools {
				r.Tools[i].Args, r.Tools[i].Result = nil, ""
			}
			r.ToolDataRemoved = true
			res.ToolData++
		}
		if past(ret.Numbers, r) && (r.Caller != Party{} || r.Callee != Party{}) {
			r.Caller, r.Callee = Party{}, Party{}
			res.Numbers++
		}
		if past(ret.Recordings, r) && r.Recording != nil && !r.Recording.Removed {
			res.Recordings = append(res.Recordings, *r.Recording)
			r.Recording.Removed = true
		}
	}
	return res, nil
}

func (m *memStore) Audit(ctx context.Context) ([]AuditEntry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]AuditEntry(nil), m.audit...), nil
}

func (m *memStore) Close() error { return nil }

// memJournal is a TEST DOUBLE of Journal: entries in memory, kept across a
// "restart" (a new Service over the same value), with every byte ever
// appended kept for the privacy checks.
type memJournal struct {
	mu      sync.Mutex
	seq     uint64
	entries []memEntry
	all     bytes.Buffer
	fail    error
}

type memEntry struct {
	seq     uint64
	kind    byte
	payload []byte
	acked   bool
}

func (j *memJournal) Append(kind byte, payload []byte) (uint64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.fail != nil {
		return 0, j.fail
	}
	j.seq++
	j.entries = append(j.entries, memEntry{seq: j.seq, kind: kind, payload: bytes.Clone(payload)})
	j.all.WriteByte(kind)
	j.all.Write(payload)
	j.all.WriteByte('\n')
	return j.seq, nil
}

func (j *memJournal) Ack(seq uint64) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	for i := range j.entries {
		if j.entries[i].seq == seq {
			if j.entries[i].acked {
				return fmt.Errorf("journal double: entry %d acked twice", seq)
			}
			j.entries[i].acked = true
			return nil
		}
	}
	return errors.New("journal double: no such entry")
}

func (j *memJournal) Replay(fn func(seq uint64, kind byte, payload []byte) error) error {
	j.mu.Lock()
	var todo []memEntry
	for _, e := range j.entries {
		if !e.acked {
			todo = append(todo, e)
		}
	}
	j.mu.Unlock()
	for _, e := range todo {
		if err := fn(e.seq, e.kind, e.payload); err != nil {
			return err
		}
	}
	return nil
}

// pending counts the unacked entries of a kind (0: any).
func (j *memJournal) pending(kind byte) int {
	j.mu.Lock()
	defer j.mu.Unlock()
	n := 0
	for _, e := range j.entries {
		if !e.acked && (kind == 0 || e.kind == kind) {
			n++
		}
	}
	return n
}

func (j *memJournal) appended(kind byte) int {
	j.mu.Lock()
	defer j.mu.Unlock()
	n := 0
	for _, e := range j.entries {
		if e.kind == kind {
			n++
		}
	}
	return n
}

func (j *memJournal) bytes() []byte {
	j.mu.Lock()
	defer j.mu.Unlock()
	return bytes.Clone(j.all.Bytes())
}

// markRedactor is a TEST DOUBLE of Redactor: it replaces digit runs that
// look like phone numbers with [phone], and remembers every text it saw,
// so a test can tell what went through it.
type markRedactor struct {
	mu   sync.Mutex
	seen []string
}

var phoneRE = regexp.MustCompile(`\+?\d[\d ]{8,}\d`)

func (m *markRedactor) String(s string) (string, map[string]int) {
	m.mu.Lock()
	m.seen = append(m.seen, s)
	m.mu.Unlock()
	n := len(phoneRE.FindAllStringIndex(s, -1))
	if n == 0 {
		return s, nil
	}
	return phoneRE.ReplaceAllString(s, "[phone]"), map[string]int{"phone": n}
}

func (m *markRedactor) JSON(raw []byte) ([]byte, map[string]int, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, nil, err
	}
	counts := map[string]int{}
	var walk func(any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case string:
			s, c := m.String(x)
			for k, n := range c {
				counts[k] += n
			}
			return s
		case map[string]any:
			for k, e := range x {
				x[k] = walk(e)
			}
		case []any:
			for i, e := range x {
				x[i] = walk(e)
			}
		}
		return v
	}
	out, err := json.Marshal(walk(v))
	return out, counts, err
}

func (m *markRedactor) saw(sub string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range m.seen {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// syncBuffer is a log sink tests read while the service writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// removerDouble is a TEST DOUBLE of RecordingRemover: it lists what it
// was asked to delete.
type removerDouble struct {
	mu      sync.Mutex
	removed []string
}

func (r *removerDouble) Remove(rec Recording) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.removed = append(r.removed, rec.Key)
	return nil
}

func (r *removerDouble) keys() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.removed...)
}
