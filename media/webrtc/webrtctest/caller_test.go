package webrtctest

import (
	"net"
	"testing"
	"time"
)

// TestJitterOf: deviations of the arrival gaps from 20 ms, by name.
// Mutation caught: the absolute value dropped (early packets give
// negative deviations, which sort first and shift p50).
func TestJitterOf(t *testing.T) {
	t0 := time.Unix(0, 0)
	at := func(ms ...int) []time.Time {
		out := make([]time.Time, len(ms))
		for i, m := range ms {
			out[i] = t0.Add(time.Duration(m) * time.Millisecond)
		}
		return out
	}
	cases := []struct {
		name          string
		arrivals      []time.Time
		p50, p99, max time.Duration
	}{
		{"none", nil, 0, 0, 0},
		{"one", at(0), 0, 0, 0},
		{"steady", at(0, 20, 40, 60), 0, 0, 0},
		{"one late", at(0, 20, 45, 60), 5 * time.Millisecond, 5 * time.Millisecond, 5 * time.Millisecond},
		{"early burst", at(0, 40, 41, 42), 19 * time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := JitterOf(tc.arrivals)
			if j.Packets != len(tc.arrivals) || j.P50 != tc.p50 || j.P99 != tc.p99 || j.Max != tc.max {
				t.Fatalf("got %+v, want p50 %v p99 %v max %v", j, tc.p50, tc.p99, tc.max)
			}
		})
	}
}

// TestGate: a shut gate drops what is written and what arrives.
// Mutations caught: WriteTo or ReadFrom ignoring the gate.
func TestGate(t *testing.T) {
	a, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &gateConn{PacketConn: b}
	defer g.Close()
	buf := make([]byte, 16)
	if _, err := g.WriteTo([]byte("open"), a.LocalAddr()); err != nil {
		t.Fatal(err)
	}
	if n, _, err := a.ReadFrom(buf); err != nil || string(buf[:n]) != "open" {
		t.Fatalf("open gate: %q %v", buf[:n], err)
	}
	g.shut.Store(true)
	if _, err := g.WriteTo([]byte("shut"), a.LocalAddr()); err != nil {
		t.Fatal(err)
	}
	// A marker sent from b's own socket, bypassing the gate, arrives; the
	// shut write before it must not.
	if _, err := b.WriteTo([]byte("mark"), a.LocalAddr()); err != nil {
		t.Fatal(err)
	}
	if n, _, err := a.ReadFrom(buf); err != nil || string(buf[:n]) != "mark" {
		t.Fatalf("shut gate let %q through (%v)", buf[:n], err)
	}
	// Inbound: a datagram read while the gate is shut is dropped (the
	// read runs into its deadline); after reopening, the next one is read.
	if _, err := a.WriteTo([]byte("lost"), b.LocalAddr()); err != nil {
		t.Fatal(err)
	}
	if err := b.SetReadDeadline(time.Now().Add(200 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if n, _, err := g.ReadFrom(buf); err == nil {
		t.Fatalf("shut gate read %q", buf[:n])
	}
	g.shut.Store(false)
	if err := b.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.WriteTo([]byte("kept"), b.LocalAddr()); err != nil {
		t.Fatal(err)
	}
	if n, _, err := g.ReadFrom(buf); err != nil || string(buf[:n]) != "kept" {
		t.Fatalf("read %q %v, want kept", buf[:n], err)
	}
}
