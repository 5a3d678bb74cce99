package webrtc

import (
	"testing"
	"time"

	"github.com/brisvox/brisvox/messages"
)

// TestOutputPrebuffer: a talk spurt starts once two frames are queued, or
// when a lone frame has waited prebufferWait; then one frame goes per
// tick; a missing frame mid-spurt is an underrun (counted); a Clear ends
// the spurt without one. Mutations: starting on the first frame (no
// prebuffer) -> the lone frame goes at once; not counting underruns ->
// send_underruns stays 0; Clear leaving talking set -> an underrun counted
// after the clear.
func TestOutputPrebuffer(t *testing.T) {
	c := bareCall(t, Config{})
	frame := func(e messages.Epoch) *messages.OutputAudio {
		return &messages.OutputAudio{Epoch: e, Rate: 16000, PCM: make([]int16, 320)}
	}
	queued := func() int {
		c.out.mu.Lock()
		defer c.out.mu.Unlock()
		return c.out.frames
	}
	if err := c.WriteFrame(frame(1)); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	c.outputTick(now)
	if queued() != 1 {
		t.Fatalf("a lone fresh frame went at once (%d queued)", queued())
	}
	c.outputTick(now.Add(prebufferWait))
	if queued() != 0 {
		t.Fatalf("a lone frame still waits after %v", prebufferWait)
	}
	// The spurt goes on: the next tick finds nothing -> underrun.
	c.outputTick(now.Add(prebufferWait + messages.FrameDuration))
	if got := c.stats[cSendGaps].Load(); got != 1 {
		t.Errorf("underruns %d, want 1", got)
	}
	// A new spurt: two frames queued start it at once, then one per tick.
	_ = c.WriteFrame(frame(2))
	_ = c.WriteFrame(frame(2))
	later := now.Add(time.Second)
	c.outputTick(later)
	if queued() != 1 {
		t.Fatalf("two queued frames: %d left after a tick, want 1", queued())
	}
	_ = c.WriteFrame(frame(2))
	if err := c.Clear(3); err != nil {
		t.Fatal(err)
	}
	c.outputTick(later.Add(messages.FrameDuration))
	if got := c.stats[cSendGaps].Load(); got != 1 {
		t.Errorf("a cleared spurt counted as an underrun (%d)", got)
	}
}

// TestCachedSilence: after speech, silenceTail frames of silence go
// through the call's encoder, then the cached packet; speech again goes
// through the encoder, and so does the next silence's tail. Mutation:
// caching from the first silent frame -> 10 cached of 10; never caching ->
// 0.
func TestCachedSilence(t *testing.T) {
	c := bareCall(t, Config{})
	cached := func() uint64 { return c.stats[cSilenceCached].Load() }
	speech := make([]int16, 320)
	for i := range speech {
		speech[i] = int16(3000 * (i % 7))
	}
	c.sendFrame(speech)
	for range 10 {
		c.sendFrame(nil)
	}
	if got := cached(); got != 10-silenceTail {
		t.Fatalf("cached silence %d of 10 silent frames, want %d", got, 10-silenceTail)
	}
	c.sendFrame(speech)
	c.sendFrame(nil)
	if got := cached(); got != 10-silenceTail {
		t.Errorf("the silence right after speech was the cached packet (%d)", got)
	}
	if len(c.out.silencePkt) == 0 || len(c.out.silencePkt) > 100 {
		t.Errorf("cached silence packet of %d bytes", len(c.out.silencePkt))
	}
}
