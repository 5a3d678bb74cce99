package rtp

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/brisvox/brisvox/media"
	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/messages"
	"github.com/pion/rtcp"
)

// stream sends n packets from from to our RTP port, one per ptime, in a
// goroutine of the bubble; payload gives each packet's payload type and
// payload. The returned channel closes when it is done.
func (r *memRig) stream(from netip.AddrPort, ssrc uint32, seq0 uint16, n int, ptime time.Duration, payload func(i int) (uint8, []byte)) <-chan struct{} {
	done := make(chan struct{})
	units := uint32(ptime / time.Millisecond * 8)
	go func() {
		defer close(done)
		// Off the session's tick grid, as a real network is.
		time.Sleep(3 * time.Millisecond)
		for i := range n {
			pt, b := payload(i)
			r.net.sendFrom(from, ourRTP, rtpPacket(pt, seq0+uint16(i), 1000+uint32(i)*units, ssrc, i == 0, b))
			time.Sleep(ptime)
		}
	}()
	return done
}

// toneAt is the payload function of a 1 kHz mu-law tone in packets of ms.
func toneAt(ms int) func(int) (uint8, []byte) {
	n := ms * 8
	return func(i int) (uint8, []byte) { return 0, tonePCMU(1000, i*n, n) }
}

// read takes n frames from the session (copies).
func (r *memRig) read(n int) []messages.AudioFrame {
	r.t.Helper()
	var out []messages.AudioFrame
	for range n {
		var f messages.AudioFrame
		if err := r.s.ReadFrame(context.Background(), &f); err != nil {
			r.t.Fatalf("ReadFrame: %v", err)
		}
		out = append(out, f)
	}
	return out
}

func (r *memRig) close() {
	r.t.Helper()
	if err := r.s.Close(); err != nil {
		r.t.Fatal(err)
	}
	if err := r.s.Close(); err != nil {
		r.t.Fatal(err)
	}
	if n := r.released.Load(); n != 1 {
		r.t.Fatalf("ports released %d times, want 1", n)
	}
}

// TestSessionPlayout: a mu-law call at 20 ms is latched after the run,
// decoded, upsampled to 16 kHz and framed at 20 ms with contiguous starts.
func TestSessionPlayout(t *testing.T) {
	for _, ms := range []int{20, 30, 10, 60} {
		t.Run(time.Duration(ms*int(time.Millisecond)).String(), func(t *testing.T) {
			inBubble(t, func(t *testing.T) {
				r := newMemSession(t, Config{InputRate: 16000})
				if err := r.s.Start(pcmuParams()); err != nil {
					t.Fatal(err)
				}
				const dur = 3 * time.Second
				n := int(dur / (time.Duration(ms) * time.Millisecond))
				done := r.stream(peerRTP, 0xabc, 100, n, time.Duration(ms)*time.Millisecond, toneAt(ms))
				frames := r.read(int(dur / messages.FrameDuration))
				<-done
				voiced := 0
				for i, f := range frames {
					if f.Rate != 16000 || len(f.PCM) != 320 {
						t.Fatalf("frame %d: %d samples at %d Hz", i, len(f.PCM), f.Rate)
					}
					if i > 0 && f.Start.Sub(frames[i-1].Start) != messages.FrameDuration {
						t.Fatalf("frame %d starts %v after the previous", i, f.Start.Sub(frames[i-1].Start))
					}
					if rms(f.PCM) > 2000 {
						voiced++
					}
				}
				// The learning run, the jitter delay and the resampler's
				// ramp cost a few frames at the start; every other frame
				// holds the tone (no gap: the packet time was detected).
				if voiced < len(frames)-int(300*time.Millisecond/messages.FrameDuration) {
					t.Fatalf("%d of %d frames hold the tone", voiced, len(frames))
				}
				st := r.s.Stats()
				if !st.Latched || st.Source != peerRTP || st.RemoteSSRC != 0xabc {
					t.Fatalf("latch: %v %v %x", st.Latched, st.Source, st.RemoteSSRC)
				}
				if st.Drops["learning"] != 3 || st.PacketsIn != uint64(n-3) {
					t.Fatalf("learning drops %d, packets in %d of %d", st.Drops["learning"], st.PacketsIn, n)
				}
				if st.PtimeIn != time.Duration(ms)*time.Millisecond {
					t.Fatalf("ptime in %v", st.PtimeIn)
				}
				if st.Jitter.Lost != 0 || st.Jitter.Late != 0 || st.DecodeErrors != 0 {
					t.Fatalf("jitter %+v, decode errors %d", st.Jitter, st.DecodeErrors)
				}
				r.close()
			})
		})
	}
}

// isSilencePCMU: every byte is the mu-law code of 0.
func isSilencePCMU(b []byte) bool {
	for _, c := range b {
		if c != 0xff {
			return false
		}
	}
	return len(b) > 0
}

// TestSessionSends: idle silence, then a talk spurt with the marker,
// consecutive sequence numbers and timestamps, our SSRC; the mark after the
// spurt echoes once its last packet went out.
func TestSessionSends(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newMemSession(t, Config{OutputRate: 16000})
		echoes := make(chan string, 4)
		r.s.OnMarkEcho(func(name string) { echoes <- name })
		if err := r.s.Start(pcmuParams()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
		idle := r.peer.drain()
		if len(idle) < 5 {
			t.Fatalf("%d packets while idle, want a silence packet per 20 ms", len(idle))
		}
		for _, d := range idle {
			if p := parsed(t, d.b); !isSilencePCMU(p.Payload) || p.SSRC != r.s.SSRC() || d.from != ourRTP {
				t.Fatalf("idle packet: %+v from %v", p, d.from)
			}
		}
		for i := range 10 {
			if err := r.s.WriteFrame(&messages.OutputAudio{Rate: 16000, PCM: tone(1000, 16000, i*320, 320, 8000)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := r.s.Mark("end"); err != nil {
			t.Fatal(err)
		}
		var name string
		select {
		case name = <-echoes:
		case <-time.After(time.Second):
			t.Fatal("no echo")
		}
		got := r.peer.drain()
		var audio []media.RTPPacket
		for _, d := range got {
			p := parsed(t, d.b)
			if !isSilencePCMU(p.Payload) {
				audio = append(audio, p)
			}
		}
		if name != "end" || len(audio) != 10 {
			t.Fatalf("echo %q with %d audio packets sent, want end after 10", name, len(audio))
		}
		last := parsed(t, idle[len(idle)-1].b)
		for i, p := range audio {
			if p.Marker != (i == 0) {
				t.Fatalf("packet %d marker %v", i, p.Marker)
			}
			if len(p.Payload) != 160 || p.PayloadType != 0 {
				t.Fatalf("packet %d: pt %d, %d bytes", i, p.PayloadType, len(p.Payload))
			}
			if i > 0 && (p.SequenceNumber != audio[i-1].SequenceNumber+1 || p.Timestamp != audio[i-1].Timestamp+160) {
				t.Fatalf("packet %d: seq %d ts %d after %d/%d", i, p.SequenceNumber, p.Timestamp, audio[i-1].SequenceNumber, audio[i-1].Timestamp)
			}
			pcm := make([]int16, 160)
			media.MulawDecode(pcm, p.Payload)
			if i > 0 && rms(pcm) < 3000 {
				t.Fatalf("packet %d: rms %.0f, the tone is lost", i, rms(pcm))
			}
		}
		if audio[0].SequenceNumber != last.SequenceNumber+1+uint16(countBefore(got, audio[0])) {
			t.Fatalf("the spurt does not continue the idle stream's sequence numbers")
		}
		r.close()
	})
}

// countBefore counts the packets of got before the one with p's sequence
// number.
func countBefore(got []dgram, p media.RTPPacket) int {
	for i, d := range got {
		var q media.RTPPacket
		if media.ParseRTP(d.b, &q) == nil && q.SequenceNumber == p.SequenceNumber {
			return i
		}
	}
	return -1
}

// TestSessionMarksAndClear: with 30 ms packets, a mark between frames
// echoes only once the packet holding the end of the frame before it went
// out; Clear drops older epochs, and a mark behind nothing echoes at once.
func TestSessionMarksAndClear(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newMemSession(t, Config{OutputRate: 8000})
		var echoed []string
		echoes := make(chan string, 16)
		r.s.OnMarkEcho(func(name string) { echoes <- name })
		p := pcmuParams()
		p.PtimeOut = 30 * time.Millisecond
		if err := r.s.Start(p); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
		r.peer.drain()
		if err := r.s.Mark("now"); err != nil {
			t.Fatal(err)
		}
		if got := <-echoes; got != "now" {
			t.Fatalf("echo %q", got)
		}
		frame := func(epoch messages.Epoch) {
			if err := r.s.WriteFrame(&messages.OutputAudio{Epoch: epoch, Rate: 8000, PCM: tone(500, 8000, 0, 160, 8000)}); err != nil {
				t.Fatal(err)
			}
		}
		frame(1)
		frame(1)
		_ = r.s.Mark("after-2") // 40 ms in: due after the second 30 ms packet
		frame(1)
		_ = r.s.Mark("after-3") // 60 ms: due after the second packet too
		for range 10 {
			frame(1)
		}
		_ = r.s.Mark("after-13")
		frame(2)
		_ = r.s.Mark("after-14")
		// Let two packets out: 60 ms of the 13 frames.
		deadline := time.Now().Add(60 * time.Millisecond)
		for time.Now().Before(deadline) {
			select {
			case n := <-echoes:
				echoed = append(echoed, n)
			case <-time.After(time.Millisecond):
			}
		}
		sent := countAudio(t, r.peer.drain())
		if sent != 2 || !slices.Equal(echoed, []string{"after-2", "after-3"}) {
			t.Fatalf("after %d packets the echoes are %v, want after-2 and after-3 after 2", sent, echoed)
		}
		// Mutation caught: Clear dropping the new epoch's frames (or
		// the marks): after-13 and after-14 must echo once frame 14 went.
		if err := r.s.Clear(2); err != nil {
			t.Fatal(err)
		}
		echoed = echoed[:0]
		for range 2 {
			echoed = append(echoed, <-echoes)
		}
		if !slices.Equal(echoed, []string{"after-13", "after-14"}) {
			t.Fatalf("echoes after Clear: %v", echoed)
		}
		// Frame 14 (epoch 2) went out, the 10 of epoch 1 did not.
		if n := countAudio(t, r.peer.drain()); n < 1 || n > 2 {
			t.Fatalf("%d packets after Clear, want the staged rest and frame 14", n)
		}
		r.close()
	})
}

// countAudio counts the non-silent packets.
func countAudio(t *testing.T, ds []dgram) int {
	n := 0
	for _, d := range ds {
		if p := parsed(t, d.b); !isSilencePCMU(p.Payload) {
			n++
		}
	}
	return n
}

// TestSessionHold: on the remote's hold (we may not send) nothing goes
// out; while the remote may not send there is no media timeout; after
// resume, silence from the remote times the session out.
func TestSessionHold(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newMemSession(t, Config{MediaTimeout: 10 * time.Second})
		p := pcmuParams()
		if err := r.s.Start(p); err != nil {
			t.Fatal(err)
		}
		p.Direction = Inactive
		if err := r.s.Update(p); err != nil {
			t.Fatal(err)
		}
		r.peer.drain()
		for range 10 {
			_ = r.s.WriteFrame(&messages.OutputAudio{Rate: 16000, PCM: make([]int16, 320)})
		}
		time.Sleep(time.Minute)
		// Mutation caught: sending on hold (the direction ignored by the
		// sender): RTP packets would reach the peer.
		for _, d := range r.peer.drain() {
			if len(d.b) >= 2 && !isRTCPType(d.b[1]) {
				t.Fatal("an RTP packet went out on hold")
			}
		}
		// Mutation caught: the media timeout not suspended on hold.
		if err := r.s.Err(); err != nil {
			t.Fatalf("ended on hold: %v", err)
		}
		if st := r.s.Stats(); st.HoldPackets == 0 || st.OutputDropped != 0 {
			t.Fatalf("hold packets %d, dropped %d", st.HoldPackets, st.OutputDropped)
		}
		p.Direction = SendRecv
		if err := r.s.Update(p); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		<-r.s.Done()
		if took := time.Since(start); took < 10*time.Second || took > 10*time.Second+100*time.Millisecond {
			t.Fatalf("timed out after %v, want 10 s", took)
		}
		if !errors.Is(r.s.Err(), ErrMediaTimeout) {
			t.Fatalf("Err = %v", r.s.Err())
		}
		var f messages.AudioFrame
		if err := r.s.ReadFrame(context.Background(), &f); !errors.Is(err, conn.ErrClosed) || !errors.Is(err, ErrMediaTimeout) {
			t.Fatalf("ReadFrame = %v, want ErrClosed wrapping ErrMediaTimeout", err)
		}
		if !countsSent(r.peer.drain()) {
			t.Fatal("nothing went out after resume")
		}
		r.close()
	})
}

func countsSent(ds []dgram) bool {
	for _, d := range ds {
		if len(d.b) >= 2 && !isRTCPType(d.b[1]) {
			return true
		}
	}
	return false
}

// TestSessionMediaTimeoutKeptByTraffic: a stream keeps the session up; the
// timeout counts from its last packet; packets of an injector do not keep
// it up. Mutation caught: lastRTP updated before the latch check.
func TestSessionMediaTimeoutKeptByTraffic(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newMemSession(t, Config{MediaTimeout: 5 * time.Second})
		if err := r.s.Start(pcmuParams()); err != nil {
			t.Fatal(err)
		}
		done := r.stream(peerRTP, 1, 1, 500, 20*time.Millisecond, toneAt(20))  // 10 s
		inj := r.stream(attacker, 2, 1, 1000, 20*time.Millisecond, toneAt(20)) // 20 s
		stop := time.Now().Add(10 * time.Second)
		<-done
		<-r.s.Done()
		if took := time.Since(stop); took < 4900*time.Millisecond || took > 5100*time.Millisecond {
			t.Fatalf("timed out %v after the stream stopped, want 5 s", took)
		}
		<-inj
		r.close()
	})
}

// TestSessionRTCP: sender reports with a block about the peer's stream,
// the remote's receiver report shows in Stats, a BYE goes out on Close.
func TestSessionRTCP(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newMemSession(t, Config{})
		if err := r.s.Start(pcmuParams()); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		// 20 packets of 100 lost (every fifth), after the learning run.
		payload := toneAt(20)
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := range 104 {
				if i < 4 || i%5 != 0 {
					_, b := payload(i)
					r.net.sendFrom(peerRTP, ourRTP, rtpPacket(0, uint16(i), uint32(i)*160, 0x77, false, b))
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
		d, ok := r.peerRTCP.recv(t, 8*time.Second)
		if !ok {
			t.Fatal("no rtcp report within 7.5 s")
		}
		if at := time.Since(start); at < 2500*time.Millisecond || at > 7500*time.Millisecond {
			t.Fatalf("first report after %v, want 2.5-7.5 s", at)
		}
		pkts, err := rtcp.Unmarshal(d.b)
		if err != nil {
			t.Fatal(err)
		}
		sr, ok := pkts[0].(*rtcp.SenderReport)
		if !ok || sr.SSRC != r.s.SSRC() || sr.PacketCount == 0 || len(sr.Reports) != 1 || sr.Reports[0].SSRC != 0x77 {
			t.Fatalf("first packet %#v", pkts[0])
		}
		if _, ok := pkts[1].(*rtcp.SourceDescription); !ok {
			t.Fatalf("no sdes: %#v", pkts[1])
		}
		<-done
		st := r.s.Stats()
		// 100 expected after the run's first packet, 20 missing (the
		// learning run's 3 drops are counted before the stats start).
		if st.RTCP.CumulativeLost != 20 || st.Jitter.Lost != 20 {
			t.Fatalf("cumulative lost %d, jitter buffer lost %d, want 20", st.RTCP.CumulativeLost, st.Jitter.Lost)
		}
		rr := &rtcp.ReceiverReport{SSRC: 0x77, Reports: []rtcp.ReceptionReport{{SSRC: r.s.SSRC(), FractionLost: 64, TotalLost: 9, Jitter: 80}}}
		b, _ := rr.Marshal()
		r.net.sendFrom(peerRTCP, ourRTCP, b)
		r.net.sendFrom(attacker, ourRTCP, b) // dropped
		time.Sleep(10 * time.Millisecond)
		st = r.s.Stats()
		if !st.RTCP.RemoteReported || st.RTCP.RemoteFractionLost != 0.25 || st.RTCP.RemoteCumulativeLost != 9 || st.RTCP.RemoteJitter != 10*time.Millisecond {
			t.Fatalf("remote view %+v", st.RTCP)
		}
		if st.Drops["rtcp_foreign"] != 1 {
			t.Fatalf("rtcp drops %v", st.Drops)
		}
		r.peerRTCP.drain()
		r.close()
		d, ok = r.peerRTCP.recv(t, time.Second)
		if !ok {
			t.Fatal("no bye")
		}
		pkts, err = rtcp.Unmarshal(d.b)
		if err != nil {
			t.Fatal(err)
		}
		if bye, ok := pkts[len(pkts)-1].(*rtcp.Goodbye); !ok || bye.Sources[0] != r.s.SSRC() {
			t.Fatalf("last packet %#v, want our BYE", pkts[len(pkts)-1])
		}
	})
}

// TestSessionOversizeDatagram: a datagram beyond 1500 bytes is refused
// whole, not parsed truncated. Mutation caught: a read buffer of exactly
// 1500 bytes (the kernel truncates silently and the prefix would pass).
func TestSessionOversizeDatagram(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newMemSession(t, Config{})
		if err := r.s.Start(pcmuParams()); err != nil {
			t.Fatal(err)
		}
		<-r.stream(peerRTP, 3, 1, 5, 20*time.Millisecond, toneAt(20))
		r.net.sendFrom(peerRTP, ourRTP, rtpPacket(0, 6, 6*160, 3, false, make([]byte, 1600)))
		time.Sleep(10 * time.Millisecond)
		if st := r.s.Stats(); st.Drops["malformed"] != 1 || st.PacketsIn != 2 {
			t.Fatalf("malformed %d, packets in %d", st.Drops["malformed"], st.PacketsIn)
		}
		r.close()
	})
}
