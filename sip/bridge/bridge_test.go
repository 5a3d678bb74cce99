package bridge

import (
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/brisvox/brisvox/internal/leaktest"
	"github.com/brisvox/brisvox/media"
	"github.com/brisvox/brisvox/sip/rtp"
)

// peer is a far end's RTP socket on loopback.
type peer struct {
	c    *net.UDPConn
	ssrc uint32
	fill byte
}

func listenPeer(t *testing.T, ssrc uint32, fill byte) *peer {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &peer{c: c, ssrc: ssrc, fill: fill}
}

func (p *peer) addr() netip.AddrPort { return p.c.LocalAddr().(*net.UDPAddr).AddrPort() }

func packet(pt uint8, seq uint16, ts, ssrc uint32, marker bool, payload []byte) []byte {
	b := make([]byte, 12+len(payload))
	b[0] = 0x80
	b[1] = pt
	if marker {
		b[1] |= 0x80
	}
	binary.BigEndian.PutUint16(b[2:], seq)
	binary.BigEndian.PutUint32(b[4:], ts)
	binary.BigEndian.PutUint32(b[8:], ssrc)
	copy(b[12:], payload)
	return b
}

// session starts an rtp session whose far end is p.
func session(t *testing.T, ports *rtp.Ports, p *peer) *rtp.Session {
	t.Helper()
	s, err := rtp.New(rtp.Config{Ports: ports, InputRate: 8000, OutputRate: 8000})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(rtp.Params{Codec: rtp.CodecPCMU, Events: true, EventPayloadType: 101, RemoteRTP: p.addr()}); err != nil {
		t.Fatal(err)
	}
	return s
}

// received is what a peer read from its session.
type received struct {
	pkts []media.RTPPacket
}

func (p *peer) collect(t *testing.T, until time.Time) received {
	var r received
	buf := make([]byte, 1500)
	for {
		_ = p.c.SetReadDeadline(until)
		n, err := p.c.Read(buf)
		if err != nil {
			return r
		}
		var q media.RTPPacket
		if media.ParseRTP(buf[:n], &q) != nil {
			t.Errorf("a packet that does not parse")
			continue
		}
		q.Payload = append([]byte(nil), q.Payload...)
		r.pkts = append(r.pkts, q)
	}
}

// TestBridgeLoopback: two sessions on loopback sockets, each with a far
// end; bridged, what B's far end sends arrives at A's far end and the
// other way, the payload unchanged (the fill byte), telephone-events at
// the event payload type; each far end sees one SSRC (its session's) and
// a sequence without a gap through the bridge's start and stop. Mutation
// caught: Relay writing the source's sequence number (or SSRC) instead of
// ours breaks the continuity check.
func TestBridgeLoopback(t *testing.T) {
	if testing.Short() {
		t.Skip("loopback sockets in real time")
	}
	base := leaktest.Snapshot()
	ports, err := rtp.NewPorts(rtp.PortsConfig{Addr: netip.MustParseAddr("127.0.0.1"), Min: 42000, Max: 42999})
	if err != nil {
		t.Fatal(err)
	}
	pa, pb := listenPeer(t, 0xaaaa, 0x2a), listenPeer(t, 0xbbbb, 0x3b)
	sa, sb := session(t, ports, pa), session(t, ports, pb)
	br, err := New(sa, sb, Config{})
	if err != nil {
		t.Fatal(err)
	}
	const n = 40
	until := time.Now().Add(n*20*time.Millisecond + 700*time.Millisecond)
	ra, rb := make(chan received, 1), make(chan received, 1)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); ra <- pa.collect(t, until) }()
	go func() { defer wg.Done(); rb <- pb.collect(t, until) }()
	// The sessions' own silence first: the relayed packets must continue
	// its sequence.
	time.Sleep(100 * time.Millisecond)
	if err := br.Start(); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		for _, p := range []struct {
			p *peer
			s *rtp.Session
		}{{pa, sa}, {pb, sb}} {
			payload := make([]byte, 160)
			for j := range payload {
				payload[j] = p.p.fill
			}
			pt := uint8(0)
			if i == n-5 {
				pt, payload = 101, []byte{5, 0x80 | 10, 0, 160}
			}
			if _, err := p.p.c.WriteToUDPAddrPort(packet(pt, uint16(100+i), uint32(1000+160*i), p.p.ssrc, i == 0, payload), p.s.LocalRTP()); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	br.Stop()
	<-br.Done()
	gotA, gotB := <-ra, <-rb
	wg.Wait()
	stA, stB := sa.Stats(), sb.Stats()
	_ = sa.Close()
	_ = sb.Close()
	for _, c := range []struct {
		name     string
		got      received
		s        rtp.Stats
		fromFill byte
	}{{"A", gotA, stA, 0x3b}, {"B", gotB, stB, 0x2a}} {
		relayed, events := 0, 0
		for i, q := range c.got.pkts {
			if q.SSRC != c.s.LocalSSRC {
				t.Fatalf("%s: packet %d has SSRC %#x, want its session's %#x", c.name, i, q.SSRC, c.s.LocalSSRC)
			}
			if i > 0 && q.SequenceNumber != c.got.pkts[i-1].SequenceNumber+1 {
				t.Fatalf("%s: sequence %d after %d", c.name, q.SequenceNumber, c.got.pkts[i-1].SequenceNumber)
			}
			switch {
			case q.PayloadType == 101:
				events++
			case q.PayloadType == 0 && len(q.Payload) == 160 && q.Payload[0] == c.fromFill && q.Payload[159] == c.fromFill:
				relayed++
			}
		}
		// The first LatchRun-1 (3) packets teach the latch and are
		// dropped; the fourth latches and goes through.
		if relayed != n-3-1 || events != 1 {
			t.Errorf("%s: %d relayed audio packets and %d events of the other leg, want %d and 1 (of %d packets)", c.name, relayed, events, n-4, len(c.got.pkts))
		}
	}
	if st := br.Stats(); st["a_to_b"] != n-3 || st["b_to_a"] != n-3 || st["dropped"] != 0 {
		t.Errorf("bridge stats %v", st)
	}
	if k, stacks := leaktest.Settle(base, 5*time.Second); k != 0 {
		t.Log(stacks)
		t.Errorf("%d goroutines left", k)
	}
}

func TestNewRefuses(t *testing.T) {
	ports, err := rtp.NewPorts(rtp.PortsConfig{Addr: netip.MustParseAddr("127.0.0.1"), Min: 43000, Max: 43999})
	if err != nil {
		t.Fatal(err)
	}
	pa := listenPeer(t, 1, 0)
	sa := session(t, ports, pa)
	defer sa.Close()
	sb, err := rtp.New(rtp.Config{Ports: ports})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	if _, err := New(sa, sa, Config{}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("same session: %v", err)
	}
	if _, err := New(sa, sb, Config{}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("not started: %v", err)
	}
	if err := sb.Start(rtp.Params{Codec: rtp.CodecPCMA, PayloadType: 8, RemoteRTP: pa.addr()}); err != nil {
		t.Fatal(err)
	}
	if _, err := New(sa, sb, Config{}); !errors.Is(err, ErrCodecMismatch) {
		t.Errorf("PCMU and PCMA: %v", err)
	}
}
