package pcmws

import (
	"context"
	"testing"

	"github.com/brisvox/brisvox/media/carrier/internal/carriertest"
	"github.com/brisvox/brisvox/media/carrier/internal/wscall"
	"github.com/brisvox/brisvox/messages"
)

// benchCall is a call whose goroutines do not run.
func benchCall(tb testing.TB, rate int) *Call {
	tb.Helper()
	h, err := New(Config{OnCall: func(*Call) {}})
	if err != nil {
		tb.Fatal(err)
	}
	cfg := h.cfg
	core := wscall.NewCore(carriertest.IdleConn(tb), wscall.Config{ID: "pw-bench", Rate: rate, Limits: noPings(cfg.Limits)}, h.stats, cfg.Logger)
	return &Call{core: core, h: h, rate: rate}
}

// encodeStep is WriteFrame and the writer taking the message.
func encodeStep(tb testing.TB, c *Call, out *messages.OutputAudio, spare *[]byte) {
	if err := c.WriteFrame(out); err != nil {
		tb.Fatal(err)
	}
	it, ok := c.core.Out.Pop(*spare)
	if !ok {
		tb.Fatal("nothing queued")
	}
	*spare = it.Buf
}

// BenchmarkAudioEncode: one 20 ms frame at 16 kHz to a binary message.
func BenchmarkAudioEncode(b *testing.B) {
	c := benchCall(b, 16000)
	out := &messages.OutputAudio{Epoch: 1, Rate: 16000, PCM: tone(16000, 0, 320)}
	var spare []byte
	b.SetBytes(640)
	b.ReportAllocs()
	for b.Loop() {
		encodeStep(b, c, out, &spare)
	}
}

// TestAudioEncodeAllocs: WriteFrame reuses the queue's buffers. Mutation
// caught (seen failing): WriteFrame building the message in a fresh
// slice.
func TestAudioEncodeAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	c := benchCall(t, 16000)
	out := &messages.OutputAudio{Epoch: 1, Rate: 16000, PCM: tone(16000, 0, 320)}
	var spare []byte
	// Every slot of the queue gets its buffer once; then nothing grows.
	for range 2 * c.h.cfg.OutQueue {
		encodeStep(t, c, out, &spare)
	}
	if a := testing.AllocsPerRun(200, func() { encodeStep(t, c, out, &spare) }); a != 0 {
		t.Fatalf("%v allocs per frame, want 0", a)
	}
}

// BenchmarkAudioDecode: one 20 ms binary message at 16 kHz into the
// inbox, and ReadFrame taking the frame out.
func BenchmarkAudioDecode(b *testing.B) {
	c := benchCall(b, 16000)
	data := s16le(tone(16000, 0, 320))
	f := messages.NewPooledFrame(16000, nil)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		decodeStep(b, c, data, f)
	}
}

func decodeStep(tb testing.TB, c *Call, data []byte, f *messages.AudioFrame) {
	c.audio(data)
	if err := c.ReadFrame(context.Background(), f); err != nil {
		tb.Fatal(err)
	}
}

// TestAudioDecodeAllocs: the inbound path allocates nothing. Mutation
// caught (seen failing): decoding through a fresh []int16 per message.
func TestAudioDecodeAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	c := benchCall(t, 16000)
	data := s16le(tone(16000, 0, 320))
	f := messages.NewPooledFrame(16000, nil)
	decodeStep(t, c, data, f)
	if a := testing.AllocsPerRun(200, func() { decodeStep(t, c, data, f) }); a != 0 {
		t.Fatalf("%v allocs per message, want 0", a)
	}
}

// noPings is the limits with the pinger off: the bench drives the
// goroutines' steps itself.
func noPings(l Limits) Limits {
	l.PingInterval, l.PongTimeout = 0, 0
	return l
}
