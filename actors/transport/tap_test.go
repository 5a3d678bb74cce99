package transport_test

import (
	"context"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/actors/kit"
	"github.com/brisvox/brisvox/actors/transport"
	"github.com/brisvox/brisvox/messages"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"
)

// creditConn reads one caller frame per credit and signals each write.
type creditConn struct {
	credit chan struct{}
	wrote  chan struct{}
	seq    uint64
}

func (c *creditConn) InputRate() int  { return 16000 }
func (c *creditConn) OutputRate() int { return 16000 }
func (c *creditConn) ReadFrame(ctx context.Context, f *messages.AudioFrame) error {
	select {
	case <-c.credit:
	case <-ctx.Done():
		return ctx.Err()
	}
	f.Seq, f.Rate, f.Start = c.seq, 16000, time.Unix(0, int64(c.seq)*int64(messages.FrameDuration))
	c.seq++
	return nil
}
func (c *creditConn) WriteFrame(*messages.OutputAudio) error { return nil }
func (c *creditConn) Clear(messages.Epoch) error             { return nil }
func (c *creditConn) Mark(string) error                      { return nil }
func (c *creditConn) OnMarkEcho(func(string))                {}
func (c *creditConn) Close() error                           { return nil }

// copyTap keeps a copy of the newest frame of each way, as a recorder
// would, and counts them.
type copyTap struct {
	in, out   [320]int16
	ins, outs int
}

func (t *copyTap) Input(f *messages.AudioFrame)   { copy(t.in[:], f.PCM); t.ins++ }
func (t *copyTap) Output(f *messages.OutputAudio) { copy(t.out[:], f.PCM); t.outs++ }

// sink releases the frames it gets and signals each.
type sink struct{ got chan struct{} }

func (s *sink) Receive(ctx actor.Context) {
	if f, ok := ctx.Message().(*messages.AudioFrame); ok {
		f.Release()
		s.got <- struct{}{}
	}
}

// tapRig is a transport actor between a credit conn, a vad sink and a
// session that drops what it gets.
type tapRig struct {
	sys   *kit.System
	pid   *actor.PID
	conn  *creditConn
	vad   chan struct{}
	out   *messages.OutputAudio
	freed chan struct{}
}

func newTapRig(tb testing.TB, tap *copyTap) *tapRig {
	tb.Helper()
	sys := kit.NewSystem(zerolog.Nop())
	mb := actor.WithMailbox(kit.NewMailboxProducer())
	r := &tapRig{sys: sys, conn: &creditConn{credit: make(chan struct{}), wrote: make(chan struct{}, 1)},
		vad: make(chan struct{}, 1), freed: make(chan struct{}, 1)}
	sess, err := sys.Root.SpawnNamed(actor.PropsFromFunc(func(actor.Context) {}, mb), "tap-call")
	if err != nil {
		tb.Fatal(err)
	}
	peers := kit.NewPeers("tap-call", sess)
	vad, err := sys.Root.SpawnNamed(actor.PropsFromProducer(func() actor.Actor { return &sink{got: r.vad} }, mb), peers.VAD.Id)
	if err != nil {
		tb.Fatal(err)
	}
	props := transport.Props(r.conn, nil, peers, zerolog.Nop(), mb)
	if tap != nil { // a nil *copyTap is not a nil conn.Tap
		props = transport.Props(r.conn, tap, peers, zerolog.Nop(), mb)
	}
	if r.pid, err = sys.Root.SpawnNamed(props, peers.Transport.Id); err != nil {
		tb.Fatal(err)
	}
	r.out = messages.NewPooledOutput(16000, func(*messages.OutputAudio) { r.freed <- struct{}{} })
	r.out.Epoch = 1
	tb.Cleanup(func() {
		for _, p := range []*actor.PID{r.pid, vad, sess} {
			if err := sys.Root.StopFuture(p).Wait(); err != nil {
				tb.Errorf("stop: %v", err)
			}
		}
		sys.Shutdown()
	})
	return r
}

// frame moves one caller frame through the actor to the vad and one bot
// frame through it to the conn.
func (r *tapRig) frame() {
	r.conn.credit <- struct{}{}
	<-r.vad
	r.sys.Root.Send(r.pid, r.out)
	<-r.freed
}

// TestTapAllocs: with a tap, a frame each way through the transport actor
// allocates nothing, and the tap saw every frame once. Mutations caught
// (each seen failing): the tap not called on the write (outs 0); the tap
// called on a frame copied for it (an allocation a frame).
func TestTapAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the rig's cleanup
	tap := &copyTap{}
	r := newTapRig(t, tap)
	for range 50 { // warm the pools
		r.frame()
	}
	if n := testing.AllocsPerRun(1000, r.frame); n != 0 {
		t.Fatalf("%v allocations a frame each way with a tap, want 0", n)
	}
	if tap.ins != 1051 || tap.outs != 1051 {
		t.Fatalf("tap saw %d frames in and %d out, want 1051 each", tap.ins, tap.outs)
	}
}

// BenchmarkTap is a frame each way through the transport actor, with and
// without a copying tap: the tap's cost is the difference.
func BenchmarkTap(b *testing.B) {
	for _, bc := range []struct {
		name string
		tap  *copyTap
	}{{"none", nil}, {"copy", &copyTap{}}} {
		b.Run(bc.name, func(b *testing.B) {
			r := newTapRig(b, bc.tap)
			b.ReportAllocs()
			for b.Loop() {
				r.frame()
			}
		})
	}
}
