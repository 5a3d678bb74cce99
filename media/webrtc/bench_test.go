package webrtc

import (
	"testing"
	"time"

	"github.com/brisvox/brisvox/media"
	"github.com/brisvox/brisvox/media/opus"
	"github.com/pion/rtp"
	pion "github.com/pion/webrtc/v4"
)

// bareCall is a call without a peer connection: its media paths, queues
// and an unbound local track (WriteSample on it packetizes nothing), for
// unit tests and benchmarks of the per-frame work.
func bareCall(tb testing.TB, cfg Config) *Call {
	tb.Helper()
	cfg.OnCall = func(*Call) {}
	if err := cfg.Validate(); err != nil {
		tb.Fatal(err)
	}
	cfg = cfg.withDefaults()
	c := &Call{id: "bare", srv: &Server{cfg: cfg}, cfg: cfg,
		done: make(chan struct{}), connected: make(chan struct{}), finished: make(chan struct{}),
		sig: newSignalQueue(cfg.EventBuffer)}
	if err := c.in.init(cfg); err != nil {
		tb.Fatal(err)
	}
	if err := c.out.init(cfg); err != nil {
		tb.Fatal(err)
	}
	track, err := pion.NewTrackLocalStaticSample(opusCodec, "audio", "bare")
	if err != nil {
		tb.Fatal(err)
	}
	c.track = track
	jc := cfg.Jitter
	jc.ClockRate, jc.SamplesPerFrame, jc.PayloadTypes = 48000, 960, []uint8{opusPT}
	if c.in.jb, err = media.NewJitterBuffer(jc); err != nil {
		tb.Fatal(err)
	}
	return c
}

// opusRTP makes n RTP packets of a 440 Hz tone, 20 ms each.
func opusRTP(tb testing.TB, n int) [][]byte {
	tb.Helper()
	enc, err := opus.NewEncoder(opus.EncoderConfig{})
	if err != nil {
		tb.Fatal(err)
	}
	pcm := tone(440, 48000, n*960, 8000)
	out := make([][]byte, n)
	buf := make([]byte, 1500)
	for i := range n {
		k, err := enc.Encode(pcm[i*960:(i+1)*960], buf)
		if err != nil {
			tb.Fatal(err)
		}
		p := rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: opusPT, SequenceNumber: uint16(i), Timestamp: uint32(i * 960), SSRC: 7}, Payload: buf[:k]}
		if out[i], err = p.Marshal(); err != nil {
			tb.Fatal(err)
		}
	}
	return out
}

// BenchmarkOutputFrame is the per-frame output path: encode 16 kHz audio
// into the 48 kHz Opus stream, write to the (unbound) track.
func BenchmarkOutputFrame(b *testing.B) {
	c := bareCall(b, Config{})
	pcm := tone(1000, 16000, 320, 8000)
	b.ReportAllocs()
	for b.Loop() {
		c.sendFrame(pcm)
	}
}

// BenchmarkInputFrame is the per-frame input path: jitter buffer push and
// pop, decode at 16 kHz, queue for ReadFrame (drained).
func BenchmarkInputFrame(b *testing.B) {
	c := bareCall(b, Config{})
	pkts := opusRTP(b, 500)
	t0 := time.Unix(0, 0)
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		pkt := pkts[i%len(pkts)]
		// Keep the sequence running past the slice: rewrite seq and ts.
		seq, ts := uint16(i), uint32(i*960)
		pkt[2], pkt[3] = byte(seq>>8), byte(seq)
		pkt[4], pkt[5], pkt[6], pkt[7] = byte(ts>>24), byte(ts>>16), byte(ts>>8), byte(ts)
		now := t0.Add(time.Duration(i) * 20 * time.Millisecond)
		c.in.mu.Lock()
		_ = c.in.jb.Push(pkt, now)
		c.in.mu.Unlock()
		c.inputTick(now)
		c.in.rmu.Lock()
		c.in.head, c.in.count = 0, 0
		c.in.rmu.Unlock()
		i++
	}
}

// BenchmarkOutputSilence is the output path of an idle call: the cached
// silence packet written to the (unbound) track, no encoder run.
func BenchmarkOutputSilence(b *testing.B) {
	c := bareCall(b, Config{})
	for range silenceTail {
		c.sendFrame(nil)
	}
	b.ReportAllocs()
	for b.Loop() {
		c.sendFrame(nil)
	}
}

// BenchmarkInputSilence is the input tick of a silent caller: "packets",
// a silence packet every 20 ms decoded (a caller without DTX); "dtx", the
// pause after a DTX packet, played as silence with no decoder run.
func BenchmarkInputSilence(b *testing.B) {
	enc, err := opus.NewEncoder(opus.EncoderConfig{})
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 1500)
	k, err := enc.Encode(make([]int16, 960), buf)
	if err != nil {
		b.Fatal(err)
	}
	silence := buf[:k]
	for _, mode := range []string{"packets", "dtx"} {
		b.Run(mode, func(b *testing.B) {
			c := bareCall(b, Config{})
			t0 := time.Unix(0, 0)
			i := 0
			pkt := make([]byte, 0, 12+len(silence))
			push := func(payload []byte) {
				seq, ts := uint16(i), uint32(i*960)
				pkt = append(append(pkt[:0], 0x80, opusPT, byte(seq>>8), byte(seq),
					byte(ts>>24), byte(ts>>16), byte(ts>>8), byte(ts), 0, 0, 0, 7), payload...)
				c.in.mu.Lock()
				_ = c.in.jb.Push(pkt, t0.Add(time.Duration(i)*20*time.Millisecond))
				c.in.mu.Unlock()
			}
			tick := func() {
				c.inputTick(t0.Add(time.Duration(i) * 20 * time.Millisecond))
				c.in.rmu.Lock()
				c.in.head, c.in.count = 0, 0
				c.in.rmu.Unlock()
				i++
			}
			if mode == "dtx" {
				for range 5 {
					push(silence)
					tick()
				}
				push(silence[:1])
				for !c.in.dtx {
					tick()
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				if mode == "packets" {
					push(silence)
				}
				tick()
			}
		})
	}
}
