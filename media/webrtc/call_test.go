package webrtc

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/media/webrtc/webrtctest"
	"github.com/brisvox/brisvox/messages"
)

// readFrames reads n frames from c, checking their shape.
func readFrames(t *testing.T, ctx context.Context, c *Call, n int) []int16 {
	t.Helper()
	var pcm []int16
	f := &messages.AudioFrame{PCM: make([]int16, c.InputRate()/50)}
	var lastSeq uint64
	for i := range n {
		if err := c.ReadFrame(ctx, f); err != nil {
			t.Fatalf("ReadFrame %d: %v", i, err)
		}
		if f.Rate != c.InputRate() || len(f.PCM) != c.InputRate()/50 {
			t.Fatalf("frame %d: rate %d, %d samples; want %d, %d", i, f.Rate, len(f.PCM), c.InputRate(), c.InputRate()/50)
		}
		if i > 0 && f.Seq <= lastSeq {
			t.Fatalf("frame %d: seq %d after %d", i, f.Seq, lastSeq)
		}
		lastSeq = f.Seq
		pcm = append(pcm, f.PCM...)
	}
	return pcm
}

// waitFor waits until cond holds, woken by the caller's notifications.
func waitFor(t *testing.T, ctx context.Context, cl *webrtctest.Caller, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-cl.Notify():
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// writeTone queues frames of a tone at the call's output rate.
func writeTone(t *testing.T, c *Call, epoch messages.Epoch, hz float64, frames int) {
	t.Helper()
	rate := c.OutputRate()
	pcm := tone(hz, rate, frames*rate/50, 8000)
	for i := range frames {
		f := &messages.OutputAudio{Epoch: epoch, Rate: rate, PCM: pcm[i*rate/50 : (i+1)*rate/50]}
		if err := c.WriteFrame(f); err != nil {
			t.Fatalf("WriteFrame %d: %v", i, err)
		}
	}
}

// TestLoopbackCall places a call over 127.0.0.1 with the test caller and
// checks both directions by frequency, marks and clear.
// Mutations caught: the input path not decoding (no 440 Hz), the output
// resampler skipped (1 kHz lands at 3 kHz at 16 kHz output), a mark
// echoed at once (fewer than 50 packets sent before it), Clear not
// dropping (two seconds of tone after it).
func TestLoopbackCall(t *testing.T) {
	if testing.Short() {
		t.Skip("real sockets and real time: several seconds")
	}
	ts := startServer(t, testConfig())
	ctx := testCtx(t, 30*time.Second)
	cl, c := dialCall(t, ctx, ts, webrtctest.Options{})
	echoes := make(chan string, 8)
	c.OnMarkEcho(func(name string) { echoes <- name })

	// Caller -> server: 1.5 s of 440 Hz.
	hearTone(t, ctx, cl, c, 1500*time.Millisecond)

	// Server -> caller: 1 s of 1 kHz, then a mark.
	sentBefore := c.Stats()["rtp_sent"]
	startLen := len(cl.Received())
	writeTone(t, c, 1, 1000, 50)
	if err := c.Mark("tone-end"); err != nil {
		t.Fatal(err)
	}
	select {
	case name := <-echoes:
		if name != "tone-end" {
			t.Fatalf("echo %q, want tone-end", name)
		}
	case <-ctx.Done():
		t.Fatal("no mark echo")
	}
	if sent := c.Stats()["rtp_sent"] - sentBefore; sent < 50 {
		t.Fatalf("mark echoed after %d packets, want the 50 frames before it sent", sent)
	}
	waitFor(t, ctx, cl, "the tone at the caller", func() bool {
		return len(loud(cl.Received()[startLen:], webrtctest.Rate, 1000)) >= 45*webrtctest.Rate/50
	})
	out := loud(cl.Received()[startLen:], webrtctest.Rate, 1000)
	if hz := dominantHz(out, webrtctest.Rate); math.Abs(hz-1000) > 10 {
		t.Fatalf("output dominant frequency %v Hz, want 1000", hz)
	}

	// Clear: 2 s of tone queued in epoch 2, cleared at once by epoch 3.
	startLen = len(cl.Received())
	writeTone(t, c, 2, 1000, 100)
	if err := c.Clear(3); err != nil {
		t.Fatal(err)
	}
	if err := c.Mark("after-clear"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-echoes:
	case <-ctx.Done():
		t.Fatal("no echo after clear")
	}
	// Half a second of packets after the clear: silence but for at most a
	// few frames sent before it.
	waitFor(t, ctx, cl, "packets after the clear", func() bool {
		return len(cl.Received())-startLen >= 25*webrtctest.Rate/50
	})
	if n := len(loud(cl.Received()[startLen:], webrtctest.Rate, 1000)) / (webrtctest.Rate / 50); n > 5 {
		t.Fatalf("%d loud frames after Clear, want at most 5", n)
	}
	j := cl.JitterStats()
	t.Logf("server->caller packets %d, |arrival gap - 20 ms| p50 %v p99 %v max %v; server stats %v",
		j.Packets, j.P50, j.P99, j.Max, c.Stats())

	cl.Close()
	f := &messages.AudioFrame{PCM: make([]int16, c.InputRate()/50)}
	for {
		err := c.ReadFrame(ctx, f)
		if err == nil {
			continue
		}
		if !errors.Is(err, conn.ErrClosed) || !errors.Is(err, ErrPeerClosed) {
			t.Fatalf("ReadFrame after the caller hung up: %v, want ErrClosed wrapping ErrPeerClosed", err)
		}
		break
	}
}
