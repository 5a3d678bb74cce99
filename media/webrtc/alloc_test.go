package webrtc

import (
	"testing"
	"time"

	"github.com/brisvox/brisvox/messages"
)

// TestAllocsPerFrame pins the per-frame paths of our own code at zero
// allocations: WriteFrame + send (queue, resample, encode; the unbound
// track does not packetize), and the input tick (jitter buffer, decode,
// resample, queue) + ReadFrame.
// Mutation caught: a buffer made per frame in sendFrame, inputTick or
// WriteFrame (the free list not reused).
func TestAllocsPerFrame(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	c := bareCall(t, Config{})
	out := &messages.OutputAudio{Rate: 16000, PCM: tone(1000, 16000, 320, 8000)}
	// Warm the free list.
	if err := c.WriteFrame(out); err != nil {
		t.Fatal(err)
	}
	c.out.mu.Lock()
	c.out.free = append(c.out.free, c.out.takeLocked())
	c.out.mu.Unlock()
	if n := testing.AllocsPerRun(100, func() {
		if err := c.WriteFrame(out); err != nil {
			t.Fatal(err)
		}
		c.out.mu.Lock()
		pcm := c.out.takeLocked()
		c.out.mu.Unlock()
		c.sendFrame(pcm)
		c.out.mu.Lock()
		c.out.free = append(c.out.free, pcm)
		c.out.mu.Unlock()
	}); n != 0 {
		t.Fatalf("output path: %v allocations per frame, want 0", n)
	}

	pkts := opusRTP(t, 300)
	t0 := time.Unix(0, 0)
	i := 0
	f := &messages.AudioFrame{PCM: make([]int16, 320)}
	step := func() {
		now := t0.Add(time.Duration(i) * 20 * time.Millisecond)
		c.in.mu.Lock()
		_ = c.in.jb.Push(pkts[i], now)
		c.in.mu.Unlock()
		c.inputTick(now)
		if err := c.ReadFrame(t.Context(), f); err != nil {
			t.Fatal(err)
		}
		i++
	}
	for range 10 {
		step()
	}
	if n := testing.AllocsPerRun(100, step); n != 0 {
		t.Fatalf("input path: %v allocations per frame, want 0", n)
	}
	if c.stats.snapshot()["rtp_errors"] != 0 {
		t.Fatalf("decode errors: %v", c.stats.snapshot())
	}
}
