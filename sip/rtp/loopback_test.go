package rtp

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brisvox/brisvox/messages"
	"go.uber.org/goleak"
)

// These tests run real sockets on 127.0.0.1 with a Go UDP relay between
// the session and a test phone; they are skipped under -short and assert
// counts and invariants, never timings.

// fault decides what the relay forwards of the phone's i-th packet: nil
// drops it, two copies duplicate it, hold keeps it to go after the next.
type fault func(i int) (copies int, hold bool)

// relay stands between the phone and the session: the session sees its
// front socket as the signalled peer.
type relay struct {
	t       *testing.T
	front   atomic.Pointer[net.UDPConn]
	back    *net.UDPConn // the phone sends here
	session netip.AddrPort
	phone   netip.AddrPort
	fault   fault

	mu          sync.Mutex
	dropped     int
	duplicated  int
	reordered   int
	rtpToPhone  atomic.Int64
	rtcpToPhone atomic.Int64
	stopped     chan struct{}
	wg          sync.WaitGroup
	oldFronts   []*net.UDPConn
}

func listenLo(t *testing.T) *net.UDPConn {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func addrOf(c *net.UDPConn) netip.AddrPort { return c.LocalAddr().(*net.UDPAddr).AddrPort() }

func newRelay(t *testing.T, session, phone netip.AddrPort, f fault) *relay {
	r := &relay{t: t, back: listenLo(t), session: session, phone: phone, fault: f, stopped: make(chan struct{})}
	r.front.Store(listenLo(t))
	r.wg.Add(1)
	go r.phoneToSession()
	r.startFront(r.front.Load())
	return r
}

func (r *relay) startFront(c *net.UDPConn) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		buf := make([]byte, 2000)
		for {
			n, err := c.Read(buf)
			if err != nil {
				return
			}
			if n >= 2 && isRTCPType(buf[1]) {
				r.rtcpToPhone.Add(1)
			} else {
				r.rtpToPhone.Add(1)
			}
			_, _ = r.back.WriteToUDPAddrPort(buf[:n], r.phone)
		}
	}()
}

// move makes the relay forward from a new socket (a new address) from now
// on, as a NAT rebinding or a hijack would look.
func (r *relay) move() netip.AddrPort {
	c := listenLo(r.t)
	old := r.front.Swap(c)
	r.mu.Lock()
	r.oldFronts = append(r.oldFronts, old)
	r.mu.Unlock()
	r.startFront(c)
	return addrOf(c)
}

func (r *relay) phoneToSession() {
	defer r.wg.Done()
	buf := make([]byte, 2000)
	var held []byte
	for i := 0; ; i++ {
		n, _, err := r.back.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		b := append([]byte(nil), buf[:n]...)
		copies, hold := 1, false
		if r.fault != nil {
			copies, hold = r.fault(i)
		}
		front := r.front.Load()
		r.mu.Lock()
		switch {
		case copies == 0:
			r.dropped++
		case hold && held == nil:
			held = b
			r.reordered++
			r.mu.Unlock()
			continue
		case copies == 2:
			r.duplicated++
		}
		r.mu.Unlock()
		for range copies {
			_, _ = front.WriteToUDPAddrPort(b, r.session)
		}
		if held != nil {
			_, _ = front.WriteToUDPAddrPort(held, r.session)
			held = nil
		}
	}
}

func (r *relay) close() {
	r.back.Close()
	r.front.Load().Close()
	r.mu.Lock()
	for _, c := range r.oldFronts {
		c.Close()
	}
	r.mu.Unlock()
	r.wg.Wait()
}

// phone sends a mu-law stream through the relay.
type phone struct {
	c    *net.UDPConn
	seq  uint16
	ts   uint32
	ssrc uint32
}

func (p *phone) send(t *testing.T, to netip.AddrPort, n int, hz float64, pt uint8) {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for i := range n {
		payload := tonePCMU(hz, int(p.ts), 160)
		if pt != 0 {
			payload = []byte{0x40}
		}
		if _, err := p.c.WriteToUDPAddrPort(rtpPacket(pt, p.seq, p.ts, p.ssrc, i == 0, payload), to); err != nil {
			t.Fatal(err)
		}
		p.seq++
		p.ts += 160
		<-tick.C
	}
}

func countFDs(t *testing.T) int {
	t.Helper()
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(es)
}

// loopRig is a session on real sockets, a relay, a phone, and a reader of
// the session's frames.
type loopRig struct {
	t      *testing.T
	s      *Session
	relay  *relay
	phone  *phone
	params Params
	frames chan messages.AudioFrame
	rd     sync.WaitGroup
}

func newLoopRig(t *testing.T, cfg Config, f fault) *loopRig {
	t.Helper()
	lo, hi := testRange(t, 10, 4)
	ports, err := NewPorts(PortsConfig{Addr: netip.MustParseAddr("127.0.0.1"), Min: lo, Max: hi})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Ports = ports
	cfg.InputRate = 8000
	s, err := New(cfg, WithRand(newSeeded(3)))
	if err != nil {
		t.Fatal(err)
	}
	ph := &phone{c: listenLo(t), seq: 500, ts: 9000, ssrc: 0xfeed}
	rl := newRelay(t, s.LocalRTP(), addrOf(ph.c), f)
	r := &loopRig{t: t, s: s, relay: rl, phone: ph, frames: make(chan messages.AudioFrame, 1000)}
	r.params = Params{Codec: CodecPCMU, RemoteRTP: addrOf(rl.front.Load())}
	if err := s.Start(r.params); err != nil {
		t.Fatal(err)
	}
	r.rd.Add(1)
	go func() {
		defer r.rd.Done()
		for {
			var f messages.AudioFrame
			if err := s.ReadFrame(context.Background(), &f); err != nil {
				close(r.frames)
				return
			}
			select {
			case r.frames <- f:
			default:
			}
		}
	}()
	return r
}

// send streams n packets of a tone through the relay.
func (r *loopRig) send(n int, hz float64) { r.phone.send(r.t, addrOf(r.relay.back), n, hz, 0) }

func (r *loopRig) close() {
	_ = r.s.Close()
	r.rd.Wait()
	r.relay.close()
	r.phone.c.Close()
}

// waitFor polls cond (a deadline, never an assertion of timing).
func waitFor(cond func() bool) bool {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

func TestLoopback(t *testing.T) {
	if testing.Short() {
		t.Skip("loopback sockets in real time")
	}
	ignore := goleak.IgnoreCurrent()
	fds := countFDs(t)

	t.Run("loss, reordering, duplication", func(t *testing.T) {
		f := func(i int) (int, bool) {
			switch {
			case i < 8:
				return 1, false // let it latch
			case i%10 == 0:
				return 0, false
			case i%10 == 3:
				return 2, false
			case i%10 == 6:
				return 1, true
			}
			return 1, false
		}
		r := newLoopRig(t, Config{}, f)
		defer r.close()
		r.send(150, 1000)
		if !waitFor(func() bool { return r.s.Stats().Jitter.Received >= 150-3-14 }) {
			t.Fatalf("only %d packets reached the jitter buffer", r.s.Stats().Jitter.Received)
		}
		time.Sleep(200 * time.Millisecond) // let playout pass the last one
		st := r.s.Stats()
		r.relay.mu.Lock()
		dropped, dups, reord := r.relay.dropped, r.relay.duplicated, r.relay.reordered
		r.relay.mu.Unlock()
		j := st.Jitter
		// Every dropped packet is lost; a duplicate is a duplicate
		// (played once); a held-back packet is reordered, or late when
		// the scheduler delayed it past its slot (then lost as well).
		if j.Duplicates != uint64(dups) || j.Lost < uint64(dropped) || j.Reordered+j.Late < uint64(reord) || j.Reordered == 0 {
			t.Fatalf("relay dropped %d, duplicated %d, reordered %d; jitter %+v", dropped, dups, reord, j)
		}
		if j.Concealed < uint64(dropped) {
			t.Fatalf("concealed %d for %d lost", j.Concealed, dropped)
		}
		if st.RTCP.CumulativeLost < int64(dropped)-int64(dups) {
			t.Fatalf("rtcp cumulative lost %d", st.RTCP.CumulativeLost)
		}
	})

	// The RTPBleed regression. Mutation caught: the lock not checking the
	// source address (the injected packets pass: no foreign_address drop).
	t.Run("rtpbleed injection after the latch", func(t *testing.T) {
		r := newLoopRig(t, Config{}, nil)
		defer r.close()
		r.send(20, 1000)
		if !r.s.Stats().Latched {
			t.Fatal("not latched")
		}
		// The attacker knows the port and even the SSRC and the next
		// sequence numbers, and sends a louder tone of another pitch.
		atk := &phone{c: listenLo(t), seq: r.phone.seq, ts: r.phone.ts, ssrc: r.phone.ssrc}
		defer atk.c.Close()
		for len(r.frames) > 0 {
			<-r.frames
		}
		var wg sync.WaitGroup
		wg.Go(func() { atk.send(t, r.s.LocalRTP(), 100, 3000, 0) })
		r.send(100, 1000)
		wg.Wait()
		// The frames played during the attack (the jitter delay shifts
		// them by a few frames: skip the edges).
		caller, other := 0, 0
		for len(r.frames) > 0 {
			f := <-r.frames
			if rms(f.PCM) < 1000 {
				continue // the jitter delay's edges, a concealed gap
			}
			if hz := zeroCrossingHz(f.PCM, 8000); hz > 900 && hz < 1100 {
				caller++
			} else {
				other++
			}
		}
		if !waitFor(func() bool { return r.s.Stats().Drops["foreign_address"] == 100 }) {
			t.Fatalf("drops %v, want the 100 injected", r.s.Stats().Drops)
		}
		// The call's audio is the caller's 1 kHz, never the attacker's
		// 3 kHz nor a mix.
		if other != 0 || caller < 50 {
			t.Fatalf("%d frames of the caller's tone, %d of something else", caller, other)
		}
		if st := r.s.Stats(); st.Source != r.params.RemoteRTP || st.Jitter.Resyncs != 0 {
			t.Fatalf("source %v, resyncs %d", st.Source, st.Jitter.Resyncs)
		}
	})

	// Mutation caught: learning again by itself once the old source went
	// quiet (the moved source's packets would pass before the Update).
	t.Run("address change without a new offer", func(t *testing.T) {
		r := newLoopRig(t, Config{}, nil)
		defer r.close()
		r.send(20, 1000)
		moved := r.relay.move()
		r.send(50, 1000)
		if !waitFor(func() bool { return r.s.Stats().Drops["foreign_address"] == 50 }) {
			t.Fatalf("drops %v, want the 50 from the new address", r.s.Stats().Drops)
		}
		// The re-INVITE names the new address: it latches again.
		p := r.params
		p.RemoteRTP = moved
		if err := r.s.Update(p); err != nil {
			t.Fatal(err)
		}
		in := r.s.Stats().PacketsIn
		r.send(20, 1000)
		if !waitFor(func() bool { st := r.s.Stats(); return st.Latched && st.PacketsIn >= in+17 }) {
			t.Fatalf("after Update: %+v", r.s.Stats())
		}
		if st := r.s.Stats(); st.Source != moved {
			t.Fatalf("latched %v, want %v", st.Source, moved)
		}
	})

	t.Run("comfort noise", func(t *testing.T) {
		r := newLoopRig(t, Config{}, nil)
		defer r.close()
		r.send(20, 1000)
		r.phone.send(t, addrOf(r.relay.back), 30, 0, 13)
		r.send(20, 1000)
		if !waitFor(func() bool { return r.s.Stats().CN == 30 }) {
			t.Fatalf("cn %d", r.s.Stats().CN)
		}
		if st := r.s.Stats(); st.DecodeErrors != 0 || st.Drops["payload_type"] != 0 {
			t.Fatalf("%+v", st)
		}
	})

	t.Run("hold: no sending, no timeout; silence: timeout", func(t *testing.T) {
		r := newLoopRig(t, Config{MediaTimeout: 400 * time.Millisecond}, nil)
		defer r.close()
		r.send(10, 1000)
		p := r.params
		p.Direction = Inactive
		if err := r.s.Update(p); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond) // what was in flight arrives
		before := r.relay.rtpToPhone.Load()
		for range 50 {
			_ = r.s.WriteFrame(&messages.OutputAudio{Rate: 16000, PCM: make([]int16, 320)})
		}
		time.Sleep(time.Second)
		if n := r.relay.rtpToPhone.Load() - before; n != 0 {
			t.Fatalf("%d rtp packets went out on hold", n)
		}
		if err := r.s.Err(); err != nil {
			t.Fatalf("timed out on hold: %v", err)
		}
		p.Direction = SendRecv
		if err := r.s.Update(p); err != nil {
			t.Fatal(err)
		}
		select {
		case <-r.s.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("no media timeout")
		}
		if !errors.Is(r.s.Err(), ErrMediaTimeout) || r.relay.rtpToPhone.Load() == before {
			t.Fatalf("Err %v, sent after resume %d", r.s.Err(), r.relay.rtpToPhone.Load()-before)
		}
	})

	goleak.VerifyNone(t, ignore)
	if n := countFDs(t); n != fds {
		t.Fatalf("%d file descriptors before, %d after", fds, n)
	}
}

// TestLoopbackIPv6: a call over ::1, no relay: the phone's stream latches
// and our packets come back to it, RTCP on the next port.
func TestLoopbackIPv6(t *testing.T) {
	if testing.Short() {
		t.Skip("loopback sockets in real time")
	}
	ph, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv6loopback})
	if err != nil {
		t.Skipf("no ::1 here: %v", err)
	}
	defer ph.Close()
	ignore := goleak.IgnoreCurrent()
	defer goleak.VerifyNone(t, ignore)
	lo, hi := testRange(t, 14, 2)
	ports, err := NewPorts(PortsConfig{Addr: netip.IPv6Loopback(), Min: lo, Max: hi})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Ports: ports, CallID: "v6"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(Params{Codec: CodecPCMU, RemoteRTP: addrOf(ph)}); err != nil {
		t.Fatal(err)
	}
	p := &phone{c: ph, ssrc: 1}
	got := make(chan int, 1)
	go func() {
		buf := make([]byte, 1500)
		n := 0
		for {
			k, err := ph.Read(buf)
			if err != nil {
				got <- n
				return
			}
			if k >= 2 && !isRTCPType(buf[1]) {
				n++
			}
		}
	}()
	p.send(t, s.LocalRTP(), 20, 1000, 0)
	ok := waitFor(func() bool { return s.Stats().PacketsIn == 17 })
	_ = s.Close()
	_ = ph.SetReadDeadline(time.Now())
	if n := <-got; !ok || n < 10 || !s.Stats().Latched || s.Stats().Source != addrOf(ph) {
		t.Fatalf("%d packets to the phone, latched %v on %v", n, s.Stats().Latched, s.Stats().Source)
	}
	if ports.InUse() != 0 {
		t.Fatal("ports still held")
	}
}
