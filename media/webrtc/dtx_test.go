package webrtc

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brisvox/brisvox/media/webrtc/webrtctest"
)

// TestDTXCall: the answer asks for DTX, the test caller (a browser's
// sending rule) then sends about one packet in ten while silent, and the
// server plays its pauses as silence without decoding or concealing them;
// speech after a pause comes through whole.
// Mutations caught: usedtx=1 dropped from the answer (the caller sends
// every frame: no DTX frames counted), the pause after a DTX packet
// concealed (the decoder's concealments grow with it), the jitter buffer
// counting the pauses' ticks concealed (jitter_concealed about
// input_dtx_frames), the tone after the pause lost (no 440 Hz).
func TestDTXCall(t *testing.T) {
	if testing.Short() {
		t.Skip("real sockets and real time: several seconds")
	}
	ts := startServer(t, testConfig())
	ctx := testCtx(t, 30*time.Second)
	cl, c := dialCall(t, ctx, ts, webrtctest.Options{})
	if !strings.Contains(cl.Answer(), "usedtx=1") {
		t.Fatalf("the answer does not ask for DTX:\n%s", cl.Answer())
	}
	// Two seconds of the caller's silence: 100 frames played. A browser's
	// DTX sends 10 frames, then 2 packets in every 20 frames: the ticks
	// in DTX pauses outnumber the packets played several times (counts
	// of the same ticks, so a slow machine that skips ticks moves both).
	readFrames(t, ctx, c, 100)
	st := c.Stats()
	t.Logf("after 2 s of silence: %v", st)
	if st["input_dtx_frames"] <= 2*st["jitter_played"] {
		t.Fatalf("%d frames played as DTX silence against %d packets played, want DTX's pauses", st["input_dtx_frames"], st["jitter_played"])
	}
	// The jitter buffer reports a pause's ticks PopLost (it cannot tell
	// a pause from a loss before the next packet); the decoder must
	// neither conceal them nor decode more than what came, and once the
	// next packet came the buffer counts them paused, not concealed (a
	// late packet on a loaded machine is concealed, rightly: a quarter of
	// the DTX frames is far above that and far below the pauses).
	if ds := c.in.dec.Stats(); ds.Concealed > st["input_dtx_frames"]/4 || ds.Decoded > st["rtp_packets"] {
		t.Fatalf("decoder %+v for %d packets and %d DTX frames: the caller's pauses were concealed or decoded", ds, st["rtp_packets"], st["input_dtx_frames"])
	}
	if st["jitter_concealed"] > st["input_dtx_frames"]/4 || st["jitter_paused"] < st["input_dtx_frames"]/2 {
		t.Fatalf("jitter buffer: %d concealed, %d paused for %d DTX frames: the caller's pauses counted as losses", st["jitter_concealed"], st["jitter_paused"], st["input_dtx_frames"])
	}
	hearTone(t, ctx, cl, c, time.Second)
	t.Logf("after the tone: %v", c.Stats())
}

// TestDTXPauseNotConcealed drives the input tick without sockets: speech
// packets decode, a DTX packet (the TOC byte alone) and the ticks after
// it play silence with no decoder run, and a loss after speech is still
// concealed.
// Mutations caught: a DTX packet handed to the decoder (libopus conceals
// it: Concealed grows), the pause's ticks concealed, dtx not cleared by
// the next speech packet (the loss after it not concealed), the jitter
// buffer counting the pause's ticks concealed (jitter_concealed 1 plus
// the pause).
func TestDTXPauseNotConcealed(t *testing.T) {
	c := bareCall(t, Config{})
	pkts := opusRTP(t, 40)
	t0 := time.Unix(0, 0)
	tick := 0
	at := func() time.Time { return t0.Add(time.Duration(tick) * 20 * time.Millisecond) }
	push := func(pkt []byte) {
		c.in.mu.Lock()
		err := c.in.jb.Push(pkt, at())
		c.in.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
	}
	step := func() {
		c.inputTick(at())
		c.in.rmu.Lock()
		c.in.head, c.in.count = 0, 0
		c.in.rmu.Unlock()
		tick++
	}
	// 10 frames of tone, a packet each tick.
	for i := range 10 {
		push(pkts[i])
		step()
	}
	// seq 10: a DTX packet; seq 11 comes 20 frames later (the pause).
	dtx := slices.Clone(pkts[10][:12])
	dtx = append(dtx, pkts[10][12]&^3)
	push(dtx)
	step()
	// The jitter buffer's delay still holds tone frames: play them out.
	for c.in.dtx == false && tick < 20 {
		step()
	}
	before := c.in.dec.Stats()
	for tick < 30 {
		step()
	}
	mid := c.in.dec.Stats()
	if mid.Concealed != before.Concealed || mid.Decoded != before.Decoded || mid.DTX != before.DTX {
		t.Fatalf("decoder ran in the pause: %+v then %+v", before, mid)
	}
	if n := c.stats.snapshot()["input_dtx_frames"]; n < 10 {
		t.Fatalf("%d DTX frames counted in a 19-tick pause", n)
	}
	// In the pause, the jitter buffer cannot tell it from a loss yet.
	inPause := c.Stats()
	if inPause["jitter_concealed"] != 0 || inPause["jitter_undecided"] < 10 {
		t.Fatalf("in the pause: %d concealed, %d undecided", inPause["jitter_concealed"], inPause["jitter_undecided"])
	}
	// Speech again, a packet per tick: seq 11 with the timestamp 20
	// frames after seq 10's, seq 12 lost.
	rtpAt := func(i int, seq uint16, ts uint32) []byte {
		p := slices.Clone(pkts[i])
		p[2], p[3] = byte(seq>>8), byte(seq)
		p[4], p[5], p[6], p[7] = byte(ts>>24), byte(ts>>16), byte(ts>>8), byte(ts)
		return p
	}
	for seq := 11; seq < 24; seq++ {
		if seq != 12 { // seq 12 is lost
			push(rtpAt(seq, uint16(seq), uint32(seq+19)*960))
		}
		step()
	}
	for range 5 {
		step()
	}
	after := c.in.dec.Stats()
	if after.Decoded < mid.Decoded+10 {
		t.Fatalf("speech after the pause not decoded: %+v then %+v", mid, after)
	}
	if after.Concealed == mid.Concealed {
		t.Fatalf("the loss after the pause was not concealed: %+v then %+v", mid, after)
	}
	// Once seq 11 came, the pause's ticks are paused; seq 12 alone is
	// concealed (the ticks after seq 23, the stream's end, undecided).
	st := c.Stats()
	t.Logf("jitter after the pause: played %d, lost %d, concealed %d, paused %d, undecided %d",
		st["jitter_played"], st["jitter_lost"], st["jitter_concealed"], st["jitter_paused"], st["jitter_undecided"])
	if st["jitter_concealed"] != 1 || st["jitter_lost"] != 1 || st["jitter_paused"] < inPause["jitter_undecided"] {
		t.Fatalf("jitter buffer after the pause and one loss: %v", st)
	}
}
