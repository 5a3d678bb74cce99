package twilio

import (
	"context"
	"testing"

	"github.com/brisvox/brisvox/media/carrier/internal/carriertest"
	"github.com/brisvox/brisvox/media/carrier/internal/wscall"
	"github.com/brisvox/brisvox/messages"
)

// benchCall is a started call whose goroutines do not run: the test
// drives its reader's and writer's steps itself.
func benchCall(tb testing.TB) *Call {
	tb.Helper()
	h, err := New(Config{OnCall: func(*Call) {}})
	if err != nil {
		tb.Fatal(err)
	}
	cfg := h.cfg
	core := wscall.NewCore(carriertest.IdleConn(tb), wscall.Config{ID: "tw-bench", Rate: Rate, Limits: noPings(cfg.Limits)}, h.stats, cfg.Logger)
	c := &Call{core: core, h: h, started: true, streamSID: testStreamSID, quotedSID: QuoteSID(testStreamSID)}
	return c
}

// decodeStep is the reader's work for one inbound media message: JSON,
// base64, mu-law, into the inbox, and ReadFrame taking the frame out.
func decodeStep(tb testing.TB, c *Call, m *Message, data []byte, f *messages.AudioFrame) {
	if err := m.Parse(data); err != nil {
		tb.Fatal(err)
	}
	mu, err := m.DecodePayload(c.payload)
	if err != nil {
		tb.Fatal(err)
	}
	c.payload = mu[:0]
	c.media(m, mu)
	if err := c.ReadFrame(context.Background(), f); err != nil {
		tb.Fatal(err)
	}
}

// encodeStep is WriteFrame (mu-law, base64, JSON into a queue slot) and
// the writer taking the message.
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

// BenchmarkMediaDecode: one 20 ms inbound media message, end to end.
func BenchmarkMediaDecode(b *testing.B) {
	c := benchCall(b)
	data := []byte(mediaMessage(mulawOf(tone(0, 160)), 1, 0))
	m := &Message{}
	f := messages.NewPooledFrame(Rate, nil)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		decodeStep(b, c, m, data, f)
	}
}

// BenchmarkMediaEncode: one 20 ms outbound media message, end to end
// (the websocket write itself excluded).
func BenchmarkMediaEncode(b *testing.B) {
	c := benchCall(b)
	out := &messages.OutputAudio{Epoch: 1, Rate: Rate, PCM: tone(0, 160)}
	var spare []byte
	b.ReportAllocs()
	for b.Loop() {
		encodeStep(b, c, out, &spare)
	}
}

// TestMediaAllocs pins the per-frame paths at zero allocations once warm.
// Mutations caught (each seen failing): the mu-law scratch made per
// frame, the payload buffer not reused.
func TestMediaAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	c := benchCall(t)
	data := []byte(mediaMessage(mulawOf(tone(0, 160)), 1, 0))
	m := &Message{}
	f := messages.NewPooledFrame(Rate, nil)
	out := &messages.OutputAudio{Epoch: 1, Rate: Rate, PCM: tone(0, 160)}
	var spare []byte
	// Every slot of the queue gets its buffer once; then nothing grows.
	for range 2 * c.h.cfg.OutQueue {
		decodeStep(t, c, m, data, f)
		encodeStep(t, c, out, &spare)
	}
	if a := testing.AllocsPerRun(200, func() { decodeStep(t, c, m, data, f) }); a != 0 {
		t.Errorf("decode: %v allocs per message, want 0", a)
	}
	if a := testing.AllocsPerRun(200, func() { encodeStep(t, c, out, &spare) }); a != 0 {
		t.Errorf("encode: %v allocs per frame, want 0", a)
	}
}

// noPings is the limits with the pinger off: the bench drives the
// goroutines' steps itself.
func noPings(l Limits) Limits {
	l.PingInterval, l.PongTimeout = 0, 0
	return l
}
