package rtp

import (
	"context"
	"encoding/binary"
	"net/netip"
	"testing"
	"time"

	"github.com/brisvox/brisvox/media/g722"
	"github.com/brisvox/brisvox/media/opus"
	"github.com/brisvox/brisvox/messages"
)

// nullConn is a socket that sends nowhere: the benchmarks measure our
// code, not the syscall.
type nullConn struct{}

func (nullConn) ReadFromUDPAddrPort([]byte) (int, netip.AddrPort, error) {
	select {}
}
func (nullConn) WriteToUDPAddrPort(b []byte, _ netip.AddrPort) (int, error) { return len(b), nil }
func (nullConn) Close() error                                               { return nil }

// benchSession is a session whose paths are driven by hand (no Start, no
// goroutines): apply sets the parameters as Start would.
func benchSession(tb testing.TB, p Params, inRate, outRate int) *Session {
	tb.Helper()
	cfg := Config{Ports: &Ports{addr: ourRTP.Addr()}, InputRate: inRate, OutputRate: outRate, RTCPMux: true}
	s, err := newSession(cfg.withDefaults(), nullConn{}, nil, ourRTP, func() {}, WithRand(newSeeded(9)))
	if err != nil {
		tb.Fatal(err)
	}
	p.RTCPMux = true
	if err := p.Validate(); err != nil {
		tb.Fatal(err)
	}
	if err := s.apply(p.withDefaults(), time.Unix(0, 0)); err != nil {
		tb.Fatal(err)
	}
	return s
}

// benchCodecs are the variants of the benchmarks: the line codec and the
// rates the stages want.
var benchCodecs = []struct {
	name    string
	p       Params
	rate    int
	payload func(n int) [][]byte // n packets of 20 ms
}{
	{"PCMU-8k", Params{Codec: CodecPCMU, RemoteRTP: peerRTP}, 8000, pcmuPayloads},
	{"PCMU-16k", Params{Codec: CodecPCMU, RemoteRTP: peerRTP}, 16000, pcmuPayloads},
	{"G722-16k", Params{Codec: CodecG722, PayloadType: 9, RemoteRTP: peerRTP}, 16000, g722Payloads},
	{"Opus-16k", Params{Codec: CodecOpus, PayloadType: 111, RemoteRTP: peerRTP}, 16000, opusPayloads},
}

func pcmuPayloads(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = tonePCMU(1000, i*160, 160)
	}
	return out
}

func g722Payloads(n int) [][]byte {
	enc := g722.NewEncoder()
	out := make([][]byte, n)
	for i := range out {
		out[i] = make([]byte, 160)
		enc.Encode(out[i], tone(1000, 16000, i*320, 320, 8000))
	}
	return out
}

func opusPayloads(n int) [][]byte {
	enc, err := opus.NewEncoder(opus.EncoderConfig{SampleRate: 16000})
	if err != nil {
		panic(err)
	}
	out := make([][]byte, n)
	for i := range out {
		buf := make([]byte, opus.MaxPacketBytes)
		k, err := enc.Encode(tone(1000, 16000, i*320, 320, 8000), buf)
		if err != nil {
			panic(err)
		}
		out[i] = buf[:k]
	}
	return out
}

// inStep returns one packet of the input path: receive (parse, latch,
// demux, jitter push), the playout tick (pop, decode, resample, frame)
// and ReadFrame, at the packet's own time.
func inStep(tb testing.TB, s *Session, p Params, payloads [][]byte) func() {
	clock := codecRates[p.Codec][0]
	step := uint32(clock / 50)
	pkts := make([][]byte, len(payloads))
	for i := range pkts {
		pkts[i] = rtpPacket(p.PayloadType, 0, 0, 0x55, false, payloads[i])
	}
	t0 := time.Unix(1000, 0)
	f := &messages.AudioFrame{PCM: make([]int16, s.cfg.InputRate/50)}
	ctx := context.Background()
	i := 0
	return func() {
		now := t0.Add(time.Duration(i) * messages.FrameDuration)
		b := pkts[i%len(pkts)]
		binary.BigEndian.PutUint16(b[2:], uint16(i))
		binary.BigEndian.PutUint32(b[4:], uint32(i)*step)
		s.in.receive(b, peerRTP, now, false)
		s.in.tick(now)
		if err := s.ReadFrame(ctx, f); err != nil {
			tb.Fatal(err)
		}
		i++
	}
}

// outStep returns one packet of the output path: WriteFrame and a mark,
// then the send tick (resample, encode, packetise, the echo; the socket is
// nullConn).
func outStep(tb testing.TB, s *Session) func() {
	out := &messages.OutputAudio{Rate: s.cfg.OutputRate, PCM: tone(1000, s.cfg.OutputRate, 0, s.cfg.OutputRate/50, 8000)}
	echoes := 0
	s.OnMarkEcho(func(string) { echoes++ })
	// One frame ahead: the talk spurt starts at the first tick and each
	// tick then sends the frame written before it.
	if err := s.WriteFrame(out); err != nil {
		tb.Fatal(err)
	}
	return func() {
		if err := s.WriteFrame(out); err != nil {
			tb.Fatal(err)
		}
		if err := s.Mark("m"); err != nil {
			tb.Fatal(err)
		}
		s.outputTick(time.Now())
	}
}

// checkSent fails unless every tick sent audio (no drop, no silence).
func checkSent(tb testing.TB, s *Session) {
	tb.Helper()
	if st := s.Stats(); st.EncodeErrors != 0 || st.OutputDropped != 0 || st.SilencePackets != 0 || st.PacketsOut == 0 {
		tb.Fatalf("the output path did not send audio: %+v", st)
	}
}

func BenchmarkRTPIn(b *testing.B) {
	for _, c := range benchCodecs {
		b.Run(c.name, func(b *testing.B) {
			s := benchSession(b, c.p, c.rate, c.rate)
			step := inStep(b, s, c.p, c.payload(50))
			for range 20 {
				step()
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				step()
			}
			b.StopTimer()
			if st := s.Stats(); st.DecodeErrors != 0 || st.Jitter.Played == 0 {
				b.Fatalf("stats %+v", st)
			}
		})
	}
}

func BenchmarkRTPOut(b *testing.B) {
	for _, c := range benchCodecs {
		b.Run(c.name, func(b *testing.B) {
			s := benchSession(b, c.p, c.rate, c.rate)
			step := outStep(b, s)
			for range 20 {
				step()
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				step()
			}
			b.StopTimer()
			checkSent(b, s)
		})
	}
}

// TestAllocsPerPacket pins both paths of every codec at zero allocations
// per packet, the output with a mark echoed per packet. Mutation caught:
// a buffer made per packet (the decoder's last-packet copy made afresh,
// the sender's free list of frame buffers not used).
func TestAllocsPerPacket(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	for _, c := range benchCodecs {
		t.Run(c.name, func(t *testing.T) {
			s := benchSession(t, c.p, c.rate, c.rate)
			in := inStep(t, s, c.p, c.payload(50))
			for range 20 {
				in()
			}
			if n := testing.AllocsPerRun(200, in); n != 0 {
				t.Fatalf("input path: %v allocations per packet", n)
			}
			out := outStep(t, s)
			for range 20 {
				out()
			}
			if n := testing.AllocsPerRun(200, out); n != 0 {
				t.Fatalf("output path: %v allocations per packet", n)
			}
			if st := s.Stats(); st.Jitter.Played < 200 || st.DecodeErrors != 0 {
				t.Fatalf("the input path did not play: %+v", st)
			}
			checkSent(t, s)
		})
	}
}
