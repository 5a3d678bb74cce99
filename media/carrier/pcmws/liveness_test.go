package pcmws

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/brisvox/brisvox/media/carrier/internal/carriertest"
	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/messages"
)

// livenessCase is a client that does not take part, and how the call
// must end.
type livenessCase struct {
	name string
	cfg  Config
	// client drives the raw client; it returns a stop for what it
	// started (nil: nothing).
	client  func(c *carriertest.RawClient) func()
	bot     bool // the bot speaks: WriteFrame every 20 ms
	cause   error
	counter string
	within  time.Duration // the end comes at most this long after the upgrade
	exactly bool          // and exactly then (virtual time)
}

// livenessCases are run in a synctest bubble over pipes (defaults and
// virtual time) and, scaled down, over loopback sockets.
func livenessCases(scale time.Duration) []livenessCase {
	ping, pong, idle := 10*scale, 10*scale, 10*scale
	audio := make([]byte, 320) // 20 ms at 8 kHz
	return []livenessCase{
		{name: "stops answering pings", cfg: Config{Limits: Limits{IdleTimeout: -1, PingInterval: ping, PongTimeout: pong}},
			client: func(c *carriertest.RawClient) func() { c.Discard(); return nil },
			cause:  conn.ErrVanished, counter: "no_pong", within: ping + pong, exactly: true},
		{name: "stops reading, keeps sending", cfg: Config{Limits: Limits{IdleTimeout: idle, PingInterval: ping, PongTimeout: pong}},
			client: func(c *carriertest.RawClient) func() {
				return c.SendEvery(carriertest.OpBinary, audio, 20*time.Millisecond)
			},
			cause: conn.ErrStoppedReading, counter: "no_pong", within: ping + pong},
		{name: "sends nothing", cfg: Config{Limits: Limits{IdleTimeout: idle, PingInterval: 3 * scale, PongTimeout: pong}},
			client: func(c *carriertest.RawClient) func() { c.Answer(); return nil },
			cause:  conn.ErrSilentInput, counter: "silent_input", within: idle, exactly: true},
		{name: "bot speaks to a client that stops reading", cfg: Config{Limits: Limits{IdleTimeout: idle, PingInterval: -1}},
			client: func(c *carriertest.RawClient) func() {
				return c.SendEvery(carriertest.OpBinary, audio, 20*time.Millisecond)
			},
			bot: true, cause: conn.ErrStoppedReading, counter: "stopped_reading", within: DefaultWriteTimeout},
	}
}

// runLiveness dials a raw client, lets it misbehave and checks the end:
// the cause ReadFrame's error wraps, the counter, and the time.
// virtual: the test runs in a bubble, where the detection time is exact.
func runLiveness(t *testing.T, r *rig, tc livenessCase, virtual bool) {
	t.Helper()
	c, _, _, err := carriertest.DialRaw(context.Background(), r.srv, "/pcm?rate=8000", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	began := time.Now()
	call := <-r.calls
	stop := tc.client(c)
	botDone := make(chan struct{})
	if tc.bot {
		go func() { // ends at the first refused frame: the call ended
			defer close(botDone)
			pcm := make([]int16, 160)
			for call.WriteFrame(&messages.OutputAudio{Epoch: 1, Rate: 8000, PCM: pcm}) == nil {
				time.Sleep(20 * time.Millisecond)
			}
		}()
	} else {
		close(botDone)
	}
	fr := messages.NewPooledFrame(8000, nil)
	for {
		if err = call.ReadFrame(context.Background(), fr); err != nil {
			break
		}
	}
	took := time.Since(began)
	t.Logf("%s after %v", conn.ReasonOf(err), took)
	<-call.Done()
	<-botDone
	if stop != nil {
		stop()
	}
	if !errors.Is(err, conn.ErrClosed) || !errors.Is(err, tc.cause) || !errors.Is(call.Err(), tc.cause) {
		t.Fatalf("ended with %v, want %v", err, tc.cause)
	}
	if got := conn.ReasonOf(err); got == conn.ReasonHangup {
		t.Fatalf("reason %q", got)
	}
	if r.h.Stats()[tc.counter] != 1 {
		t.Fatalf("%s = %d, want 1 (%v)", tc.counter, r.h.Stats()[tc.counter], r.h.Stats())
	}
	if took > tc.within || (tc.exactly && virtual && took != tc.within) {
		t.Fatalf("detected after %v, want %v", took, tc.within)
	}
}

// TestLiveness: a client that stops answering pings is taken for
// vanished after PingInterval + PongTimeout (20 s by default); one that
// stops reading but keeps sending ends as "stopped reading" (the defect:
// such a client held its call for 45 s, as nothing was written while the
// bot was silent); one that sends nothing but answers pings ends as "no
// input" at IdleTimeout; a bot speaking to a client that reads nothing
// ends as "stopped reading" once the backlog or the write timeout passes
// its bound. Mutations caught (each seen failing): no pinger (the first
// two never end), a missing pong classified without looking at the
// inbound messages (stopped reading reported as vanished), the write
// timeout closing the socket without a cause (vanished).
func TestLiveness(t *testing.T) {
	for _, tc := range livenessCases(time.Second) {
		t.Run(tc.name, func(t *testing.T) {
			inBubble(t, tc.cfg, func(r *rig) {
				runLiveness(t, r, tc, true)
			})
		})
	}
}

// TestLivenessLoopback: the same clients over real sockets (timings
// scaled down and not asserted): the cause, and nothing left behind.
func TestLivenessLoopback(t *testing.T) {
	if testing.Short() {
		t.Skip("loopback-socket test (skipped under -short)")
	}
	for _, tc := range livenessCases(50 * time.Millisecond) {
		if tc.bot {
			continue // the sockets' buffers hold minutes of audio: the pipes' case
		}
		t.Run(tc.name, func(t *testing.T) {
			before := goleak.IgnoreCurrent()
			r := &rig{t: t, calls: make(chan *Call, 1)}
			cfg := tc.cfg
			cfg.OnCall = func(c *Call) { r.calls <- c }
			tc.within = time.Minute // timings are not asserted on sockets
			h, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			r.h = h
			r.srv = carriertest.NewLoopbackServer(h)
			runLiveness(t, r, tc, false)
			// The handler unregisters the call when its ServeHTTP returns,
			// just after Done.
			if !carriertest.WaitFor(5*time.Second, func() bool { return h.Live() == 0 }) {
				t.Fatalf("%d calls live after the end", h.Live())
			}
			h.Close()
			r.srv.Close()
			goleak.VerifyNone(t, before)
		})
	}
}
