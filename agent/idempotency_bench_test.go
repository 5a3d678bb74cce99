package agent

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/brisvox/brisvox/messages"
)

var idemBenchSink uint64

func BenchmarkIdempotencyKeyDigest(b *testing.B) {
	k := IdempotencyKey{Session: "call-7f3a9c1e-0b7d-4d52", Epoch: 42, CallID: "t42.3"}
	b.ReportAllocs()
	for b.Loop() {
		idemBenchSink += k.Digest()
	}
}

func BenchmarkIdempotencyKeyString(b *testing.B) {
	k := IdempotencyKey{Session: "call-7f3a9c1e-0b7d-4d52", Epoch: 42, CallID: "t42.3"}
	b.ReportAllocs()
	for b.Loop() {
		idemBenchSink += uint64(len(k.String()))
	}
}

// BenchmarkIdempotencyStoreInsert is the steady state of a full store: each
// call begins (evicting the oldest settled entry) and settles.
func BenchmarkIdempotencyStoreInsert(b *testing.B) {
	s, err := NewIdempotencyStore(IdempotencyConfig{})
	if err != nil {
		b.Fatal(err)
	}
	const n = 4096
	keys := make([]IdempotencyKey, n)
	for i := range keys {
		keys[i] = IdempotencyKey{Session: "s", Epoch: messages.Epoch(i / 8), CallID: "t." + strconv.Itoa(i)}
	}
	result := messages.ToolResult{Name: "book_table", Content: `{"booking":"BK-1001","status":"confirmed"}`}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		k := keys[i%n]
		i++
		if _, found, err := s.Begin(k); err != nil || found {
			b.Fatalf("Begin: %v %v", found, err)
		}
		if err := s.Settle(k, result); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkArgumentsDigest(b *testing.B) {
	args := json.RawMessage(`{"name":"Kaya","party":2,"at":{"date":"2026-10-08","time":"19:30"},"notes":"window seat, high chair"}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(args)))
	for b.Loop() {
		idemBenchSink += ArgumentsDigest("book_table", args)
	}
}

// BenchmarkOrphanTableCheck scans a full table with no match, the common
// case.
func BenchmarkOrphanTableCheck(b *testing.B) {
	tab, err := NewOrphanTable(OrphanConfig{})
	if err != nil {
		b.Fatal(err)
	}
	now := time.Date(2026, 10, 8, 12, 0, 0, 0, time.UTC)
	for i := range DefaultOrphanCapacity {
		c := orphanCall(1, 0, i, `{"n":`+strconv.Itoa(i)+`}`)
		tab.Start(c, now)
		tab.Settle(c.Key, messages.ToolResult{Content: "ok"}, now)
	}
	p := Probe{TrackedCall: orphanCall(1, 1, 99, kayaArgs)}
	b.ReportAllocs()
	for b.Loop() {
		if m := tab.Check(p, now); m.Verdict != VerdictRun {
			b.Fatal(m.Verdict)
		}
	}
}
