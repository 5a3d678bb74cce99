package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/brisvox/brisvox/cmd/internal/records"
)

// Run runs the store suite: each subtest opens a fresh, empty store with
// open and closes it when it ends (Close may be called twice).
func Run(t *testing.T, open func(t *testing.T) records.Store) {
	fresh := func(t *testing.T) records.Store {
		t.Helper()
		s := open(t)
		t.Cleanup(func() { s.Close() })
		return s
	}
	for _, c := range []struct {
		name string
		fn   func(t *testing.T, s records.Store)
	}{
		{"RoundTrip", testRoundTrip},
		{"Idempotent", testIdempotent},
		{"NotFound", testNotFound},
		{"ListFilters", testListFilters},
		{"ListPaging", testListPaging},
		{"ListLimits", testListLimits},
		{"EraseByCall", testEraseByCall},
		{"EraseByCaller", testEraseByCaller},
		{"EraseInvalid", testEraseInvalid},
		{"EraseThenReplay", testEraseThenReplay},
		{"Sweep", testSweep},
		{"SweepRecords", testSweepRecords},
		{"ConcurrentPuts", testConcurrentPuts},
		{"Close", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.fn == nil {
				testClose(t, open(t))
				return
			}
			c.fn(t, fresh(t))
		})
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

func put(t *testing.T, s records.Store, rs ...*records.Record) {
	t.Helper()
	for _, r := range rs {
		ins, err := s.Put(ctx(t), r)
		if err != nil || !ins {
			t.Fatalf("Put %s: inserted %v, %v", r.CallID, ins, err)
		}
	}
}

// same fails t unless got and want encode to the same JSON (every field,
// times to the nanosecond with their offset) and are deeply equal (nil
// and empty slices told apart).
func same(t *testing.T, what string, got, want *records.Record) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Fatalf("%s:\n got %s\nwant %s", what, g, w)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: same JSON but not deeply equal (nil and empty told apart?):\n got %#v\nwant %#v", what, got, want)
	}
}

// testRoundTrip: a record with every field comes back as it went in;
// so do one with its parts removed and a bare one. Catches a column or
// part not written or not read back (seen: the tool data dropped).
func testRoundTrip(t *testing.T, s records.Store) {
	full := FullRecord("call-full", T0)
	allowed := map[string]bool{".TranscriptRemoved": true, ".ToolDataRemoved": true, ".Recording.Removed": true}
	if zero := zeroFields(reflect.ValueOf(full), "", allowed); len(zero) > 0 {
		sort.Strings(zero)
		t.Fatalf("FullRecord leaves fields zero (fill them in the fixture): %v", zero)
	}
	removed := RemovedRecord("call-removed", T0.Add(time.Minute))
	bare := &records.Record{Version: 1, CallID: "call-bare", Started: T0.Add(2 * time.Minute), Ended: T0.Add(3 * time.Minute), EndReason: "hangup"}
	empty := &records.Record{Version: 1, CallID: "call-empty", Started: T0.Add(4 * time.Minute), Ended: T0.Add(5 * time.Minute),
		Turns: []records.Turn{}, Transcript: []records.Line{}, Tools: []records.ToolCall{}, Usage: []records.Usage{}, Failures: []records.Failure{}}
	for _, r := range []*records.Record{full, removed, bare, empty} {
		want := clone(t, r)
		put(t, s, r)
		same(t, "the record put", r, want) // Put leaves its argument alone
		got, err := s.Get(ctx(t), r.CallID)
		if err != nil {
			t.Fatalf("Get %s: %v", r.CallID, err)
		}
		same(t, "Get "+r.CallID, got, want)
	}
	// The list's summary of the full record.
	list, err := s.List(ctx(t), records.Query{Agent: "dentist"})
	if err != nil {
		t.Fatal(err)
	}
	want := []records.Summary{
		{CallID: "call-removed", Node: "node-a", Transport: "sip", Direction: "inbound", Agent: "dentist",
			Started: removed.Started, Ended: removed.Ended, EndReason: "hangup", Turns: 12, Tools: 2},
		{CallID: "call-full", Node: "node-a", Transport: "sip", Direction: "inbound", Agent: "dentist",
			Started: full.Started, Ended: full.Ended, EndReason: "hangup", Turns: 12, Tools: 2,
			CallerHash: full.Caller.Hash, Recording: true},
	}
	if !reflect.DeepEqual(list, want) {
		t.Fatalf("summaries:\n got %+v\nwant %+v", list, want)
	}
}

func clone(t *testing.T, r *records.Record) *records.Record {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var c records.Record
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	// JSON loses nil against empty: take those from r.
	if r.Transcript == nil {
		c.Transcript = nil
	}
	return &c
}

// testIdempotent: a second Put of a call changes nothing and says so
// (a journal replayed after a crash between the write and its ack).
func testIdempotent(t *testing.T, s records.Store) {
	r := FullRecord("call-1", T0)
	put(t, s, r)
	again := FullRecord("call-1", T0)
	again.EndReason, again.Transcript = "operator", nil
	ins, err := s.Put(ctx(t), again)
	if err != nil || ins {
		t.Fatalf("second Put: inserted %v, %v; want false, nil", ins, err)
	}
	got, err := s.Get(ctx(t), "call-1")
	if err != nil {
		t.Fatal(err)
	}
	same(t, "after the second Put", got, FullRecord("call-1", T0))
}

func testNotFound(t *testing.T, s records.Store) {
	put(t, s, FullRecord("call-1", T0))
	if _, err := s.Get(ctx(t), "call-2"); !errors.Is(err, records.ErrNotFound) {
		t.Fatalf("Get of an unknown call: %v, want ErrNotFound", err)
	}
}

// listFixture is a set of records that differ in every filtered column,
// some started at the same instant (the order falls to the call id).
func listFixture(t *testing.T, s records.Store) []*records.Record {
	var rs []*records.Record
	agents := []string{"dentist", "garage", "taxi"}
	reasons := []string{"hangup", "no_input", records.ReasonNodeCrashed}
	nodes := []string{"node-a", "node-b"}
	transports := []string{"sip", "webrtc", "twilio", "pcm"}
	for i := range 24 {
		r := FullRecord(fmt.Sprintf("call-%02d", (i*7)%24), T0.Add(time.Duration(i/2)*time.Minute)) // two per minute
		r.Agent = agents[i%3]
		r.EndReason = reasons[(i/3)%3]
		r.Node = nodes[i%2]
		r.Transport = transports[i%4]
		r.Caller.Hash = fmt.Sprintf("caller-%d", i%5)
		if i%6 == 0 {
			r.Caller = records.Party{}
		}
		if i%4 == 0 {
			r.Recording = nil
		}
		rs = append(rs, r)
	}
	put(t, s, rs...)
	return rs
}

// expected is what a list of q must answer: the records q selects, by
// the store's documented order, as summaries.
func expected(rs []*records.Record, q records.Query) []records.Summary {
	var out []records.Summary
	for _, r := range rs {
		if !q.From.IsZero() && r.Started.Before(q.From) || !q.To.IsZero() && !r.Started.Before(q.To) ||
			q.Agent != "" && r.Agent != q.Agent || q.EndReason != "" && r.EndReason != q.EndReason ||
			q.CallerHash != "" && r.Caller.Hash != q.CallerHash || q.Node != "" && r.Node != q.Node ||
			q.Transport != "" && r.Transport != q.Transport {
			continue
		}
		if b := q.Before; b != nil && !(r.Started.Before(b.Started) || r.Started.Equal(b.Started) && r.CallID < b.CallID) {
			continue
		}
		out = append(out, records.Summary{CallID: r.CallID, Node: r.Node, Transport: r.Transport, Direction: r.Direction,
			Agent: r.Agent, Started: r.Started, Ended: r.Ended, EndReason: r.EndReason, Turns: len(r.Turns), Tools: len(r.Tools),
			CallerHash: r.Caller.Hash, Recording: r.Recording != nil && !r.Recording.Removed})
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Started.Equal(out[j].Started) {
			return out[i].Started.After(out[j].Started)
		}
		return out[i].CallID > out[j].CallID
	})
	limit := q.Limit
	if limit == 0 {
		limit = 100
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

// testListFilters: each filter alone and some together select what they
// say, newest first. Catches a filter ignored or on the wrong column,
// and To taken as inclusive.
func testListFilters(t *testing.T, s records.Store) {
	rs := listFixture(t, s)
	for _, c := range []struct {
		name string
		q    records.Query
		n    int // the answer's length, so a fixture change cannot leave a case empty
	}{
		{"all", records.Query{}, 24},
		{"from", records.Query{From: T0.Add(5 * time.Minute)}, 14},
		{"to exclusive", records.Query{To: T0.Add(5 * time.Minute)}, 10},
		{"from to", records.Query{From: T0.Add(2 * time.Minute), To: T0.Add(4 * time.Minute)}, 4},
		{"agent", records.Query{Agent: "garage"}, 8},
		{"end reason", records.Query{EndReason: records.ReasonNodeCrashed}, 6},
		{"caller hash", records.Query{CallerHash: "caller-2"}, 4},
		{"node", records.Query{Node: "node-b"}, 12},
		{"transport", records.Query{Transport: "webrtc"}, 6},
		{"agent and node", records.Query{Agent: "dentist", Node: "node-a"}, 4},
		{"no match", records.Query{Agent: "nobody"}, 0},
		{"limit", records.Query{Limit: 5}, 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := s.List(ctx(t), c.q)
			if err != nil {
				t.Fatal(err)
			}
			want := expected(rs, c.q)
			if len(want) != c.n {
				t.Fatalf("the fixture gives %d for this case, the case says %d", len(want), c.n)
			}
			if want == nil {
				want = []records.Summary{}
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("List(%+v):\n got %v\nwant %v", c.q, ids(got), ids(want))
			}
		})
	}
}

func ids(ss []records.Summary) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.CallID + "@" + s.Started.Format("15:04:05")
	}
	return out
}

// testListPaging: pages by Before cursor, filtered and not, add up to the
// whole list with nothing twice. Catches a cursor comparing the start
// only (calls started at one instant lost or repeated).
func testListPaging(t *testing.T, s records.Store) {
	rs := listFixture(t, s)
	for _, base := range []records.Query{{}, {Node: "node-a"}} {
		all := expected(rs, base)
		var got []records.Summary
		q := base
		q.Limit = 5
		for page := 0; ; page++ {
			if page > 10 {
				t.Fatal("paging does not end")
			}
			ss, err := s.List(ctx(t), q)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, ss...)
			if len(ss) < q.Limit {
				break
			}
			last := ss[len(ss)-1]
			q.Before = &records.Cursor{Started: last.Started, CallID: last.CallID}
		}
		if !reflect.DeepEqual(got, all) {
			t.Fatalf("pages of %+v:\n got %v\nwant %v", base, ids(got), ids(all))
		}
	}
}

// testListLimits: Limit 0 is 100, at most 10 000; a negative or larger
// one and a From not before To are ErrInvalidQuery.
func testListLimits(t *testing.T, s records.Store) {
	var rs []*records.Record
	for i := range 101 {
		r := FullRecord(fmt.Sprintf("call-%03d", i), T0.Add(time.Duration(i)*time.Second))
		r.Transcript, r.Turns = nil, nil
		rs = append(rs, r)
	}
	put(t, s, rs...)
	for _, c := range []struct {
		name string
		q    records.Query
		n    int
		err  error
	}{
		{"default", records.Query{}, 100, nil},
		{"most", records.Query{Limit: 10_000}, 101, nil},
		{"one", records.Query{Limit: 1}, 1, nil},
		{"above", records.Query{Limit: 10_001}, 0, records.ErrInvalidQuery},
		{"negative", records.Query{Limit: -1}, 0, records.ErrInvalidQuery},
		{"from after to", records.Query{From: T0.Add(time.Minute), To: T0}, 0, records.ErrInvalidQuery},
		{"from is to", records.Query{From: T0, To: T0}, 0, records.ErrInvalidQuery},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := s.List(ctx(t), c.q)
			if !errors.Is(err, c.err) || len(got) != c.n {
				t.Fatalf("List(%+v): %d, %v; want %d, %v", c.q, len(got), err, c.n, c.err)
			}
		})
	}
}

func audit(t *testing.T, s records.Store) []records.AuditEntry {
	t.Helper()
	a, err := s.Audit(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// testEraseByCall: the call's record goes, the others stay, its
// recording comes back for deletion, the audit says who, why, which and
// how many; an unknown call is audited with 0.
func testEraseByCall(t *testing.T, s records.Store) {
	a, b := FullRecord("call-a", T0), FullRecord("call-b", T0.Add(time.Minute))
	put(t, s, a, b)
	at := T0.Add(time.Hour)
	res, err := s.Erase(ctx(t), records.Erasure{CallID: "call-a", By: "ops", Reason: "caller asked", At: at})
	if err != nil {
		t.Fatal(err)
	}
	if res.Erased != 1 || !reflect.DeepEqual(res.Recordings, []records.Recording{*a.Recording}) {
		t.Fatalf("Erase: %+v; want 1 and call-a's recording", res)
	}
	if _, err := s.Get(ctx(t), "call-a"); !errors.Is(err, records.ErrNotFound) {
		t.Fatalf("Get of the erased call: %v, want ErrNotFound", err)
	}
	if _, err := s.Get(ctx(t), "call-b"); err != nil {
		t.Fatalf("the other call: %v", err)
	}
	res, err = s.Erase(ctx(t), records.Erasure{CallID: "call-x", By: "ops", At: at.Add(time.Second)})
	if err != nil || res.Erased != 0 || len(res.Recordings) != 0 {
		t.Fatalf("Erase of an unknown call: %+v, %v", res, err)
	}
	want := []records.AuditEntry{
		{At: at, By: "ops", Reason: "caller asked", CallID: "call-a", Erased: 1},
		{At: at.Add(time.Second), By: "ops", CallID: "call-x", Erased: 0},
	}
	if got := audit(t, s); !reflect.DeepEqual(got, want) {
		t.Fatalf("audit:\n got %+v\nwant %+v", got, want)
	}
}

// testEraseByCaller: every call the hash is a party to goes (as caller,
// or as the callee of an outbound call), others stay; the audit keeps
// the hash, never a number.
func testEraseByCaller(t *testing.T, s records.Store) {
	in1, in2 := FullRecord("call-in-1", T0), FullRecord("call-in-2", T0.Add(time.Minute))
	in1.Caller.Hash, in2.Caller.Hash = "person", "person"
	in2.Recording = nil
	out := FullRecord("call-out", T0.Add(2*time.Minute))
	out.Direction, out.Callee.Hash = "outbound", "person"
	other := FullRecord("call-other", T0.Add(3*time.Minute))
	put(t, s, in1, in2, out, other)
	at := T0.Add(time.Hour)
	res, err := s.Erase(ctx(t), records.Erasure{CallerHash: "person", By: "ops", Reason: "erasure request", At: at})
	if err != nil {
		t.Fatal(err)
	}
	if res.Erased != 3 || !reflect.DeepEqual(res.Recordings, []records.Recording{*in1.Recording, *out.Recording}) {
		t.Fatalf("Erase: %+v; want 3 and two recordings", res)
	}
	list, err := s.List(ctx(t), records.Query{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].CallID != "call-other" {
		t.Fatalf("left: %v, want call-other", ids(list))
	}
	want := []records.AuditEntry{{At: at, By: "ops", Reason: "erasure request", CallerHash: "person", Erased: 3}}
	if got := audit(t, s); !reflect.DeepEqual(got, want) {
		t.Fatalf("audit:\n got %+v\nwant %+v", got, want)
	}
}

func testEraseInvalid(t *testing.T, s records.Store) {
	put(t, s, FullRecord("call-a", T0))
	for _, e := range []records.Erasure{{}, {CallID: "call-a", CallerHash: "h", By: "ops"}} {
		if _, err := s.Erase(ctx(t), e); !errors.Is(err, records.ErrInvalidQuery) {
			t.Fatalf("Erase(%+v): %v, want ErrInvalidQuery", e, err)
		}
	}
	if a := audit(t, s); len(a) != 0 {
		t.Fatalf("refused erasures audited: %+v", a)
	}
	if _, err := s.Get(ctx(t), "call-a"); err != nil {
		t.Fatal(err)
	}
}

// testEraseThenReplay: a record put again after its erasure (the
// journal replayed after a crash before its ack) stays erased; a call of
// the same caller that ended after the erasure is kept.
func testEraseThenReplay(t *testing.T, s records.Store) {
	a, b := FullRecord("call-a", T0), FullRecord("call-b", T0)
	b.Caller.Hash = "person"
	put(t, s, a, b)
	at := T0.Add(time.Hour)
	for _, e := range []records.Erasure{{CallID: "call-a", By: "ops", At: at}, {CallerHash: "person", By: "ops", At: at}} {
		if _, err := s.Erase(ctx(t), e); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range []*records.Record{FullRecord("call-a", T0), b} {
		ins, err := s.Put(ctx(t), r)
		if err != nil || ins {
			t.Fatalf("Put of erased %s: inserted %v, %v", r.CallID, ins, err)
		}
		if _, err := s.Get(ctx(t), r.CallID); !errors.Is(err, records.ErrNotFound) {
			t.Fatalf("erased %s back: %v", r.CallID, err)
		}
	}
	later := FullRecord("call-later", at.Add(time.Minute))
	later.Caller.Hash = "person"
	put(t, s, later)
}

// testSweep: each part goes at its age and not a nanosecond before, is
// marked, counted once, and the other parts stay. Catches a retention
// counted from the start, a strict < at the boundary, a part removed
// without its mark, and counts of parts already gone.
func testSweep(t *testing.T, s records.Store) {
	const day = 24 * time.Hour
	now := T0.Add(100 * day)
	ret := records.Retention{Transcripts: 30 * day, ToolData: 7 * day, Numbers: 60 * day, Recordings: 14 * day}
	// endedAgo gives a record that ended d before now (started a long
	// call's length before that, so a sweep counting from the start
	// would take it too early).
	endedAgo := func(id string, d time.Duration) *records.Record {
		r := FullRecord(id, now.Add(-d-2*time.Hour))
		r.Ended = now.Add(-d)
		return r
	}
	rs := []*records.Record{
		endedAgo("age-1d", day),
		endedAgo("age-7d", 7*day),                                    // tool data at its age exactly
		endedAgo("age-7d-less", 7*day-1),                             // a nanosecond short
		endedAgo("age-14d", 14*day),                                  // + recording
		endedAgo("age-30d", 30*day),                                  // + transcript
		endedAgo("age-60d", 60*day),                                  // + numbers
		endedAgo("age-60d-less", 60*day-1),                           // all but numbers
		RemovedRecord("age-90d-removed", now.Add(-90*day-time.Hour)), // parts gone at write time
	}
	rs[len(rs)-1].Ended = now.Add(-90 * day)
	put(t, s, rs...)
	res, err := s.Sweep(ctx(t), ret, now)
	if err != nil {
		t.Fatal(err)
	}
	wantRecs := []records.Recording{*rs[3].Recording, *rs[4].Recording, *rs[5].Recording, *rs[6].Recording}
	if res.Records != 0 || res.ToolData != 5 || res.Transcripts != 3 || res.Numbers != 1 || !reflect.DeepEqual(res.Recordings, wantRecs) {
		t.Fatalf("Sweep: records %d tool data %d transcripts %d numbers %d recordings %d; want 0 5 3 1 4",
			res.Records, res.ToolData, res.Transcripts, res.Numbers, len(res.Recordings))
	}
	for _, r := range rs {
		want := clone(t, r)
		age := now.Sub(r.Ended)
		if age >= ret.ToolData && !want.ToolDataRemoved {
			for i := range want.Tools {
				want.Tools[i].Args, want.Tools[i].Result = nil, ""
			}
			want.ToolDataRemoved = true
		}
		if age >= ret.Recordings && want.Recording != nil {
			want.Recording.Removed = true
		}
		if age >= ret.Transcripts && !want.TranscriptRemoved {
			want.Transcript, want.TranscriptRemoved = nil, true
		}
		if age >= ret.Numbers {
			want.Caller, want.Callee = records.Party{}, records.Party{}
		}
		got, err := s.Get(ctx(t), r.CallID)
		if err != nil {
			t.Fatal(err)
		}
		same(t, "after the sweep, "+r.CallID, got, want)
	}
	// Swept by number: the caller's hash is gone from the list too.
	if ss, err := s.List(ctx(t), records.Query{CallerHash: rs[5].Caller.Hash}); err != nil || len(ss) != 0 {
		t.Fatalf("a swept caller hash still lists: %v, %v", ids(ss), err)
	}
	res, err = s.Sweep(ctx(t), ret, now)
	if err != nil || !reflect.DeepEqual(res, records.SweepResult{}) {
		t.Fatalf("second sweep: %+v, %v; want nothing", res, err)
	}
}

// testSweepRecords: whole records go at their age, their recordings come
// back for deletion (not the ones already removed); zero keeps forever.
func testSweepRecords(t *testing.T, s records.Store) {
	const day = 24 * time.Hour
	now := T0.Add(400 * day)
	old, young, gone := FullRecord("old", now.Add(-366*day)), FullRecord("young", now.Add(-300*day)), RemovedRecord("gone", now.Add(-366*day))
	put(t, s, old, young, gone)
	if res, err := s.Sweep(ctx(t), records.Retention{}, now); err != nil || !reflect.DeepEqual(res, records.SweepResult{}) {
		t.Fatalf("a sweep keeping all: %+v, %v", res, err)
	}
	res, err := s.Sweep(ctx(t), records.Retention{Records: 365 * day}, now)
	if err != nil {
		t.Fatal(err)
	}
	if res.Records != 2 || !reflect.DeepEqual(res.Recordings, []records.Recording{*old.Recording}) {
		t.Fatalf("Sweep: %+v; want 2 records and old's recording", res)
	}
	list, err := s.List(ctx(t), records.Query{})
	if err != nil || len(list) != 1 || list[0].CallID != "young" {
		t.Fatalf("left: %v, %v; want young", ids(list), err)
	}
}

// testConcurrentPuts: puts from many goroutines all land, each call
// inserted exactly once even when two goroutines put it at once.
func testConcurrentPuts(t *testing.T, s records.Store) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const workers, each = 8, 25
	var wg sync.WaitGroup
	var mu sync.Mutex
	inserted := map[string]int{}
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				// Workers 2k and 2k+1 put the same calls.
				id := fmt.Sprintf("call-%d-%03d", w/2, i)
				ins, err := s.Put(context.Background(), FullRecord(id, T0.Add(time.Duration(i)*time.Second)))
				if err != nil {
					errs <- err
					return
				}
				if ins {
					mu.Lock()
					inserted[id]++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(inserted) != workers/2*each {
		t.Fatalf("%d calls inserted, want %d", len(inserted), workers/2*each)
	}
	for id, n := range inserted {
		if n != 1 {
			t.Fatalf("%s inserted %d times", id, n)
		}
	}
	list, err := s.List(ctx(t), records.Query{Limit: 10_000})
	if err != nil || len(list) != workers/2*each {
		t.Fatalf("listed %d, %v; want %d", len(list), err, workers/2*each)
	}
}

// testClose: after Close every call is ErrClosed; a second Close is no
// error.
func testClose(t *testing.T, s records.Store) {
	put(t, s, FullRecord("call-a", T0))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	c := ctx(t)
	calls := map[string]error{}
	_, calls["Put"] = s.Put(c, FullRecord("call-b", T0))
	_, calls["Get"] = s.Get(c, "call-a")
	_, calls["List"] = s.List(c, records.Query{})
	_, calls["Erase"] = s.Erase(c, records.Erasure{CallID: "call-a"})
	_, calls["Sweep"] = s.Sweep(c, records.Retention{Records: time.Hour}, T0)
	_, calls["Audit"] = s.Audit(c)
	for _, name := range slices.Sorted(maps.Keys(calls)) {
		if !errors.Is(calls[name], records.ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", name, calls[name])
		}
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
