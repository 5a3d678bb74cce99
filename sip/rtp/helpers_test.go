package rtp

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/internal/leaktest"
	"github.com/brisvox/brisvox/media"
)

// seeded is a deterministic io.Reader for WithRand.
type seeded struct{ r *rand.ChaCha8 }

func newSeeded(seed uint64) *seeded {
	var s [32]byte
	binary.LittleEndian.PutUint64(s[:], seed)
	return &seeded{r: rand.NewChaCha8(s)}
}

func (s *seeded) Read(b []byte) (int, error) { return s.r.Read(b) }

// dgram is one datagram on the in-memory network.
type dgram struct {
	b    []byte
	from netip.AddrPort
}

// memNet is an in-memory UDP network: conns by address, datagrams
// delivered to a bounded channel (dropped when full, as a socket buffer
// would). Reads block on channels, so a session on it runs in a synctest
// bubble.
type memNet struct {
	mu    sync.Mutex
	conns map[netip.AddrPort]*memConn
}

func newMemNet() *memNet { return &memNet{conns: map[netip.AddrPort]*memConn{}} }

type memConn struct {
	net    *memNet
	addr   netip.AddrPort
	in     chan dgram
	closed chan struct{}
	once   sync.Once
	sent   atomic.Uint64
}

func (n *memNet) listen(addr string) *memConn {
	c := &memConn{net: n, addr: netip.MustParseAddrPort(addr), in: make(chan dgram, 4096), closed: make(chan struct{})}
	n.mu.Lock()
	n.conns[c.addr] = c
	n.mu.Unlock()
	return c
}

func (c *memConn) ReadFromUDPAddrPort(b []byte) (int, netip.AddrPort, error) {
	select {
	case d := <-c.in:
		return copy(b, d.b), d.from, nil
	case <-c.closed:
		return 0, netip.AddrPort{}, net.ErrClosed
	}
}

// sendFrom delivers b to addr as if sent from from (a spoofer picks any).
func (n *memNet) sendFrom(from, addr netip.AddrPort, b []byte) {
	n.mu.Lock()
	dst := n.conns[addr]
	n.mu.Unlock()
	if dst == nil {
		return
	}
	select {
	case dst.in <- dgram{b: append([]byte(nil), b...), from: from}:
	default:
	}
}

func (c *memConn) WriteToUDPAddrPort(b []byte, addr netip.AddrPort) (int, error) {
	select {
	case <-c.closed:
		return 0, net.ErrClosed
	default:
	}
	c.sent.Add(1)
	c.net.sendFrom(c.addr, addr, b)
	return len(b), nil
}

func (c *memConn) Close() error {
	c.once.Do(func() {
		close(c.closed)
		c.net.mu.Lock()
		delete(c.net.conns, c.addr)
		c.net.mu.Unlock()
	})
	return nil
}

// recv takes the next datagram that reached c, or fails after wait of
// (bubble) time.
func (c *memConn) recv(t *testing.T, wait time.Duration) (dgram, bool) {
	t.Helper()
	select {
	case d := <-c.in:
		return d, true
	case <-time.After(wait):
		return dgram{}, false
	}
}

// drain takes every datagram waiting at c.
func (c *memConn) drain() []dgram {
	var out []dgram
	for {
		select {
		case d := <-c.in:
			out = append(out, d)
		default:
			return out
		}
	}
}

// Addresses of the in-memory tests.
var (
	ourRTP    = netip.MustParseAddrPort("10.0.0.1:20000")
	ourRTCP   = netip.MustParseAddrPort("10.0.0.1:20001")
	peerRTP   = netip.MustParseAddrPort("10.0.0.2:30000")
	peerRTCP  = netip.MustParseAddrPort("10.0.0.2:30001")
	attacker  = netip.MustParseAddrPort("10.0.0.66:30000")
	peerOther = netip.MustParseAddrPort("10.0.0.2:30002")
)

// memRig is a session on the in-memory network with the peer's sockets.
type memRig struct {
	t        *testing.T
	net      *memNet
	s        *Session
	peer     *memConn
	peerRTCP *memConn
	released atomic.Int32
}

// newMemSession makes a session on in-memory sockets (no Start).
func newMemSession(t *testing.T, cfg Config) *memRig {
	t.Helper()
	r := &memRig{t: t, net: newMemNet()}
	if cfg.Ports == nil {
		cfg.Ports = &Ports{addr: ourRTP.Addr()}
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	cfg = cfg.withDefaults()
	rtpC := r.net.listen(ourRTP.String())
	var rtcpC packetConn
	if !cfg.RTCPMux {
		rtcpC = r.net.listen(ourRTCP.String())
	}
	r.peer = r.net.listen(peerRTP.String())
	r.peerRTCP = r.net.listen(peerRTCP.String())
	s, err := newSession(cfg, rtpC, rtcpC, ourRTP, func() { r.released.Add(1) }, WithRand(newSeeded(1)))
	if err != nil {
		t.Fatal(err)
	}
	r.s = s
	t.Cleanup(func() { _ = s.Close() })
	return r
}

// pcmuParams are the parameters of a plain G.711 mu-law call from peer.
func pcmuParams() Params {
	return Params{Codec: CodecPCMU, PayloadType: 0, Events: true, EventPayloadType: 101, RemoteRTP: peerRTP}
}

// inBubble runs fn in a synctest bubble and checks that it left no
// goroutine behind.
func inBubble(t *testing.T, fn func(t *testing.T)) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		base := leaktest.Snapshot()
		fn(t)
		synctest.Wait()
		if n := leaktest.Snapshot().NewSince(base); n != 0 {
			t.Fatalf("%d goroutines left behind", n)
		}
	})
}

// rtpPacket builds an RTP packet.
func rtpPacket(pt uint8, seq uint16, ts, ssrc uint32, marker bool, payload []byte) []byte {
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

// tonePCMU is n samples of a sine of hz at 8 kHz in mu-law, from sample
// offset off.
func tonePCMU(hz float64, off, n int) []byte {
	pcm := tone(hz, 8000, off, n, 8000)
	out := make([]byte, n)
	media.MulawEncode(out, pcm)
	return out
}

func tone(hz float64, rate, off, n int, amp float64) []int16 {
	pcm := make([]int16, n)
	for i := range pcm {
		pcm[i] = int16(amp * math.Sin(2*math.Pi*hz*float64(off+i)/float64(rate)))
	}
	return pcm
}

// rms of pcm.
func rms(pcm []int16) float64 {
	var s float64
	for _, v := range pcm {
		s += float64(v) * float64(v)
	}
	if len(pcm) == 0 {
		return 0
	}
	return math.Sqrt(s / float64(len(pcm)))
}

// parsed parses an RTP packet the test received, failing on an error.
func parsed(t *testing.T, b []byte) media.RTPPacket {
	t.Helper()
	var p media.RTPPacket
	if err := media.ParseRTP(b, &p); err != nil {
		t.Fatalf("our packet does not parse: %v", err)
	}
	return p
}
