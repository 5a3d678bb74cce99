package rtp

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

// testRange is a port range for one test: high, and spread by the process
// id so that parallel test binaries rarely meet (a busy port is skipped
// anyway, which is what the allocator must do).
func testRange(t *testing.T, idx, pairs int) (int, int) {
	t.Helper()
	base := 40000 + (os.Getpid()%500)*40 + idx*(2*pairs+2)
	base &^= 1
	return base, base + 2*pairs - 1
}

func TestPortsConfigValidate(t *testing.T) {
	lo := netip.MustParseAddr("127.0.0.1")
	tests := []struct {
		name string
		cfg  PortsConfig
		ok   bool
	}{
		{"defaults", PortsConfig{Addr: lo}, true},
		{"no address", PortsConfig{}, false},
		{"privileged", PortsConfig{Addr: lo, Min: 80, Max: 2000}, false},
		{"reversed", PortsConfig{Addr: lo, Min: 30000, Max: 20000}, false},
		{"one even port", PortsConfig{Addr: lo, Min: 30000, Max: 30000}, false},
		{"odd-even holds no pair", PortsConfig{Addr: lo, Min: 30001, Max: 30002}, false},
		{"one pair", PortsConfig{Addr: lo, Min: 30000, Max: 30001}, true},
		{"above 65535", PortsConfig{Addr: lo, Min: 65000, Max: 70000}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrInvalidConfig)) {
				t.Fatalf("Validate = %v, want ok %v", err, tc.ok)
			}
		})
	}
}

func TestPortsPairs(t *testing.T) {
	if testing.Short() {
		t.Skip("binds loopback sockets")
	}
	tests := []struct {
		name string
		addr string
		mux  bool
	}{
		{"ipv4", "127.0.0.1", false},
		{"ipv4 rtcp-mux", "127.0.0.1", true},
		{"ipv6", "::1", false},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			addr := netip.MustParseAddr(tc.addr)
			if l, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(addr, 0))); err != nil {
				t.Skipf("no %s here: %v", tc.addr, err)
			} else {
				l.Close()
			}
			lo, hi := testRange(t, i, 3)
			// An odd minimum starts at the next even port.
			p, err := NewPorts(PortsConfig{Addr: addr, Min: lo - 1, Max: hi})
			if err != nil {
				t.Fatal(err)
			}
			var bs []binding
			for range 3 {
				b, err := p.bind(tc.mux)
				if err != nil {
					t.Fatal(err)
				}
				if b.port%2 != 0 || b.port < lo || b.port+1 > hi {
					t.Fatalf("rtp port %d outside the even ports of %d-%d", b.port, lo, hi)
				}
				if got := b.rtp.LocalAddr().(*net.UDPAddr).AddrPort(); got.Port() != uint16(b.port) || got.Addr().Unmap() != addr {
					t.Fatalf("rtp bound %v", got)
				}
				if tc.mux != (b.rtcp == nil) {
					t.Fatalf("mux %v, rtcp socket %v", tc.mux, b.rtcp)
				}
				if b.rtcp != nil && b.rtcp.LocalAddr().(*net.UDPAddr).Port != b.port+1 {
					t.Fatalf("rtcp on %v, want %d", b.rtcp.LocalAddr(), b.port+1)
				}
				bs = append(bs, b)
			}
			if p.InUse() != 3 {
				t.Fatalf("in use %d", p.InUse())
			}
			if _, err := p.bind(tc.mux); !errors.Is(err, ErrNoPorts) {
				t.Fatalf("fourth bind: %v, want ErrNoPorts", err)
			}
			// Released twice, freed once.
			closeBinding(bs[1])
			bs[1].release()
			if p.InUse() != 2 {
				t.Fatalf("in use %d after a double release, want 2", p.InUse())
			}
			b, err := p.bind(tc.mux)
			if err != nil || b.port != bs[1].port {
				t.Fatalf("rebind: port %d, %v; want %d", b.port, err, bs[1].port)
			}
			bs[1] = b
			for _, b := range bs {
				closeBinding(b)
			}
			if p.InUse() != 0 {
				t.Fatalf("in use %d after all released", p.InUse())
			}
		})
	}
}

func closeBinding(b binding) {
	_ = b.rtp.Close()
	if b.rtcp != nil {
		_ = b.rtcp.Close()
	}
	b.release()
}

// TestPortsBusySkipped: a port bound by someone else (RTP or RTCP of a
// pair) is skipped, not an error. Mutation caught: a busy port returned as
// ErrBind instead of trying the next pair.
func TestPortsBusySkipped(t *testing.T) {
	if testing.Short() {
		t.Skip("binds loopback sockets")
	}
	lo, hi := testRange(t, 5, 3)
	addr := netip.MustParseAddr("127.0.0.1")
	var held []*net.UDPConn
	for _, port := range []int{lo, lo + 3} { // pair 0's RTP, pair 1's RTCP
		c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(addr, uint16(port))))
		if err != nil {
			t.Skipf("port %d taken already: %v", port, err)
		}
		held = append(held, c)
	}
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	p, err := NewPorts(PortsConfig{Addr: addr, Min: lo, Max: hi})
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.bind(false)
	if err != nil {
		t.Fatal(err)
	}
	defer closeBinding(b)
	if b.port != lo+4 {
		t.Fatalf("bound %d, want %d (the two pairs with a busy port skipped)", b.port, lo+4)
	}
	if _, err := p.bind(false); !errors.Is(err, ErrNoPorts) {
		t.Fatalf("second bind %v, want ErrNoPorts", err)
	}
}

// TestPortsConcurrent: sessions made and closed from many goroutines never
// share a pair, and every pair comes back.
func TestPortsConcurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("binds loopback sockets")
	}
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	lo, hi := testRange(t, 7, 8)
	p, err := NewPorts(PortsConfig{Addr: netip.MustParseAddr("127.0.0.1"), Min: lo, Max: hi})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	owned := map[int]bool{}
	var wg sync.WaitGroup
	var exhausted int
	for g := range 16 {
		wg.Go(func() {
			for range 30 {
				s, err := New(Config{Ports: p, CallID: "c"}, WithRand(newSeeded(uint64(g))))
				if errors.Is(err, ErrNoPorts) {
					mu.Lock()
					exhausted++
					mu.Unlock()
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				port := int(s.LocalRTP().Port())
				mu.Lock()
				if owned[port] {
					t.Errorf("port %d handed out twice", port)
				}
				owned[port] = true
				mu.Unlock()
				mu.Lock()
				delete(owned, port)
				mu.Unlock()
				_ = s.Close()
			}
		})
	}
	wg.Wait()
	if p.InUse() != 0 {
		t.Fatalf("%d pairs still held", p.InUse())
	}
	t.Logf("%d binds found the range exhausted", exhausted)
}
