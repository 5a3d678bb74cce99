package signal

import (
	"net"
	"net/netip"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/emiago/sipgo/sip"
	"github.com/rs/zerolog"
)

// BenchmarkInviteTo200UDP times one INVITE to its 200 over loopback UDP
// against the test Application (it answers at once with a fixed SDP);
// each call is then ACKed and hung up, outside the timing. It reports
// the p50 and p99 of the INVITE-to-200 time.
func BenchmarkInviteTo200UDP(b *testing.B) {
	s, err := New(Config{
		Listen:         []Listen{{Network: "udp", Addr: "127.0.0.1:0"}},
		SessionExpires: -1,
		Log:            zerolog.Nop(),
	}, &testApp{})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Start(); err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	c, err := net.Dial("udp", s.Addrs()[0].Addr.String())
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	buf := make([]byte, 65536)
	readUntil := func(want int, method sip.RequestMethod) *sip.Response {
		for {
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
			n, err := c.Read(buf)
			if err != nil {
				b.Fatalf("read: %v", err)
			}
			m, err := sip.ParseMessage(buf[:n])
			if err != nil {
				b.Fatal(err)
			}
			if res, ok := m.(*sip.Response); ok && res.StatusCode == want && res.CSeq().MethodName == method {
				return res
			}
		}
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		callID := "bench-" + strconv.Itoa(i)
		t0 := time.Now()
		if _, err := c.Write([]byte(request("INVITE", "UDP", callID, 1, "", testSDP))); err != nil {
			b.Fatal(err)
		}
		res := readUntil(200, sip.INVITE)
		lat = append(lat, time.Since(t0))
		b.StopTimer()
		tag, _ := res.To().Params.Get("tag")
		_, _ = c.Write([]byte(request("ACK", "UDP", callID, 1, tag, "")))
		_, _ = c.Write([]byte(request("BYE", "UDP", callID, 2, tag, "")))
		readUntil(200, sip.BYE)
		b.StartTimer()
	}
	b.StopTimer()
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	}
}

// BenchmarkReadFilter is the per-datagram cost before parsing.
func BenchmarkReadFilter(b *testing.B) {
	s := filterServer(b)
	data := []byte(request("OPTIONS", "UDP", "f", 1, "", ""))
	info := sip.TransportReadProps{Transport: "UDP", RemoteAddr: &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5070}}
	b.ReportAllocs()
	for b.Loop() {
		_, _ = s.readFilter(info, data)
	}
}

func filterServer(tb testing.TB) *Server {
	tb.Helper()
	s, err := New(Config{Listen: []Listen{{Network: "udp", Addr: "127.0.0.1:0"}}, Log: zerolog.Nop()},
		&testApp{}, WithReadFilter(func(src netip.AddrPort, _ bool, data []byte) bool { return src.IsValid() }))
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// TestReadFilterAllocs pins the read filter at 0 allocations a datagram
// (it runs for every packet, hostile floods included). Mutation caught:
// building the source as a string (netip.ParseAddrPort(a.String())).
func TestReadFilterAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	s := filterServer(t)
	data := []byte(request("OPTIONS", "UDP", "f", 1, "", ""))
	info := sip.TransportReadProps{Transport: "UDP", RemoteAddr: &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5070}}
	if n := testing.AllocsPerRun(1000, func() { _, _ = s.readFilter(info, data) }); n != 0 {
		t.Fatalf("%v allocations a datagram, want 0", n)
	}
}
