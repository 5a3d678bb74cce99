package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/brisvox/brisvox/media/silero"
	"github.com/brisvox/brisvox/messages"
)

// serverFrame is a server's (unmasked) frame of op with payload.
func serverFrame(fin bool, op byte, payload []byte) []byte {
	b := []byte{op}
	if fin {
		b[0] |= 0x80
	}
	switch n := len(payload); {
	case n < 126:
		b = append(b, byte(n))
	case n <= 0xFFFF:
		b = append(b, 126)
		b = binary.BigEndian.AppendUint16(b, uint16(n))
	default:
		b = append(b, 127)
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	return append(b, payload...)
}

// wsMsg is a parsed message and the time it was stamped with.
type wsMsg struct {
	op      byte
	payload string
	at      time.Time
}

func collect(p *wsParser, chunks [][]byte, times []time.Time) ([]wsMsg, error) {
	var got []wsMsg
	for i, c := range chunks {
		err := p.feed(c, times[i], func(op byte, payload []byte, at time.Time) {
			got = append(got, wsMsg{op, string(payload), at})
		})
		if err != nil {
			return got, err
		}
	}
	return got, nil
}

// TestWSParser: messages whole, split across reads and fragmented, with
// control frames between the fragments, each stamped with the time of
// the read that completed it. Mutations caught (each seen failing):
// dropping the fragments before the last, a control frame inside a
// message taken for its end.
func TestWSParser(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ts := func(n int) []time.Time {
		out := make([]time.Time, n)
		for i := range out {
			out[i] = t0.Add(time.Duration(i) * time.Millisecond)
		}
		return out
	}
	audio := bytes.Repeat([]byte{1, 2}, 320)
	twoFrames := append(serverFrame(true, wsBinary, audio), serverFrame(true, wsText, []byte(`{"type":"clear"}`))...)
	frag := slices.Concat(serverFrame(false, wsText, []byte("he")), serverFrame(true, wsPing, []byte("p")),
		serverFrame(false, wsCont, []byte("ll")), serverFrame(true, wsCont, []byte("o")))
	big := bytes.Repeat([]byte{7}, 70000)
	tests := []struct {
		name   string
		chunks [][]byte
		want   []wsMsg
	}{
		{"two messages in one read", [][]byte{twoFrames},
			[]wsMsg{{wsBinary, string(audio), t0}, {wsText, `{"type":"clear"}`, t0}}},
		{"a message split in three reads", [][]byte{twoFrames[:1], twoFrames[1:300], twoFrames[300:]},
			[]wsMsg{{wsBinary, string(audio), t0.Add(2 * time.Millisecond)}, {wsText, `{"type":"clear"}`, t0.Add(2 * time.Millisecond)}}},
		{"the header split", [][]byte{twoFrames[:3], twoFrames[3:644], twoFrames[644:]},
			[]wsMsg{{wsBinary, string(audio), t0.Add(time.Millisecond)}, {wsText, `{"type":"clear"}`, t0.Add(2 * time.Millisecond)}}},
		{"fragments with a ping between", [][]byte{frag[:5], frag[5:]},
			[]wsMsg{{wsPing, "p", t0.Add(time.Millisecond)}, {wsText, "hello", t0.Add(time.Millisecond)}}},
		{"a 64-bit length", [][]byte{serverFrame(true, wsBinary, big)},
			[]wsMsg{{wsBinary, string(big), t0}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := collect(newWSParser(1<<17), tc.chunks, ts(len(tc.chunks)))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got %d messages %v, want %d", len(got), short(got), len(tc.want))
			}
		})
	}
}

func short(ms []wsMsg) []string {
	var out []string
	for _, m := range ms {
		out = append(out, fmt.Sprintf("op %d %d bytes at %v", m.op, len(m.payload), m.at.Sub(time.Unix(1000, 0))))
	}
	return out
}

// TestWSParserRefuses: what a server must not send is an error, not a
// message. Mutations caught (seen failing): the mask check dropped, the
// control frame check dropped.
func TestWSParserRefuses(t *testing.T) {
	masked := serverFrame(true, wsText, []byte("x"))
	masked[1] |= 0x80
	masked = append(masked[:2], append([]byte{0, 0, 0, 0}, masked[2:]...)...)
	rsv := serverFrame(true, wsText, []byte("x"))
	rsv[0] |= 0x40
	long := []byte{0x82, 127, 0x80, 0, 0, 0, 0, 0, 0, 0}
	tests := []struct {
		name string
		b    []byte
		want error
	}{
		{"masked", masked, errWSMasked},
		{"reserved bit", rsv, errWSReserved},
		{"unknown opcode", serverFrame(true, 0x3, nil), errWSOpcode},
		{"fragmented ping", serverFrame(false, wsPing, nil), errWSControl},
		{"long close", serverFrame(true, wsClose, make([]byte, 126)), errWSControl},
		{"continuation alone", serverFrame(true, wsCont, []byte("x")), errWSContinue},
		{"message in a message", slices.Concat(serverFrame(false, wsText, []byte("a")), serverFrame(true, wsText, []byte("b"))), errWSContinue},
		{"over the limit", serverFrame(true, wsBinary, make([]byte, 1025)), errWSTooLarge},
		{"fragments over the limit", slices.Concat(serverFrame(false, wsBinary, make([]byte, 600)), serverFrame(true, wsCont, make([]byte, 600))), errWSTooLarge},
		{"top bit of a 64-bit length", long, errWSLengthForm},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := collect(newWSParser(1024), [][]byte{tc.b}, []time.Time{time.Unix(1, 0)})
			if !errors.Is(err, tc.want) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
		})
	}
}

// FuzzWSParser: any bytes, cut at any point into two reads, parse to the
// same messages (payloads and order) as in one read, or fail the same
// way, and never panic.
func FuzzWSParser(f *testing.F) {
	f.Add(serverFrame(true, wsBinary, bytes.Repeat([]byte{3}, 640)), uint16(7))
	f.Add(slices.Concat(serverFrame(false, wsText, []byte("he")), serverFrame(true, wsPong, nil), serverFrame(true, wsCont, []byte("y"))), uint16(3))
	f.Fuzz(func(t *testing.T, b []byte, cut uint16) {
		at := time.Unix(5, 0)
		whole, errWhole := collect(newWSParser(4096), [][]byte{b}, []time.Time{at})
		k := int(cut) % (len(b) + 1)
		split, errSplit := collect(newWSParser(4096), [][]byte{b[:k], b[k:]}, []time.Time{at, at})
		if (errWhole == nil) != (errSplit == nil) {
			t.Fatalf("one read: %v; two reads at %d: %v", errWhole, k, errSplit)
		}
		if errWhole == nil && !slices.Equal(whole, split) {
			t.Fatalf("one read gives %d messages, two reads at %d give %d", len(whole), k, len(split))
		}
	})
}

// TestWSClientKernelTimes: a client that reads late still stamps each
// frame with a time from before its read: the kernel's receive time, not
// the read's. (When the reader is late, TCP merges the waiting segments
// and the merged one carries the newest one's time: the stamps are then
// equal, which the analysis takes for unknown, see coalesced.) Real
// loopback socket: skipped with -short. Asserts the order of events, not
// durations. Mutation caught: stamping with time.Now at the read.
func TestWSClientKernelTimes(t *testing.T) {
	if testing.Short() {
		t.Skip("a loopback socket")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	sent := make(chan []time.Time, 1)
	ready := make(chan struct{})
	go func() {
		c, err := ln.Accept()
		if err != nil {
			sent <- nil
			return
		}
		defer c.Close()
		<-ready // the client's timestamps are on
		var at []time.Time
		for _, f := range [][]byte{serverFrame(true, wsBinary, make([]byte, 640)), serverFrame(true, wsText, []byte(`{"type":"mark","name":"end-1"}`))} {
			at = append(at, time.Now())
			_, _ = c.Write(f)
			time.Sleep(30 * time.Millisecond)
		}
		_, _ = c.Write(serverFrame(true, wsClose, []byte{3, 232}))
		sent <- at
		buf := make([]byte, 64)
		_, _ = c.Read(buf) // the echoed close
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	w, err := newWSClient(nc.(*net.TCPConn))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	close(ready)
	at := <-sent
	time.Sleep(50 * time.Millisecond) // read late: all of it waits in the socket
	read := time.Now()
	var got []time.Time
	if err := w.Run(func(op byte, _ []byte, t time.Time) {
		if op != wsClose {
			got = append(got, t)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || len(at) != 2 {
		t.Fatalf("%d messages stamped, %d sent", len(got), len(at))
	}
	for i := range got {
		if got[i].Before(at[i]) || !got[i].Before(read) {
			t.Errorf("message %d stamped %v after its write, %v before the read began: want a time between", i, got[i].Sub(at[i]), read.Sub(got[i]))
		}
	}
}

// TestShardBase: a caller's frame 0 is due with its shard's next tick,
// also when it joins before the shard's first. Mutation caught: the
// truncated division of a negative wait, which put the first callers'
// frame 0 two frames before the first tick (every frame of theirs then
// 40 ms late).
func TestShardBase(t *testing.T) {
	start := time.Unix(100, 0)
	for _, c := range []struct{ now, want time.Duration }{
		{-50 * time.Millisecond, 0}, {-5 * time.Millisecond, 0}, {0, 0}, {time.Millisecond, 0},
		{20 * time.Millisecond, 20 * time.Millisecond}, {39 * time.Millisecond, 20 * time.Millisecond},
	} {
		if got := shardBase(start, start.Add(c.now)).Sub(start); got != c.want {
			t.Errorf("joining at %v: frame 0's capture starts at %v, want %v (due with tick %v)", c.now, got, c.want, c.want+20*time.Millisecond)
		}
	}
}

// scriptForTest is a script of one plain turn and one tool turn.
func scriptForTest() callScript {
	return callScript{STTFinal: 100 * time.Millisecond, TTSFirst: 150 * time.Millisecond, TokenGap: 30 * time.Millisecond,
		Turns: []callTurn{
			{LLMFirst: 200 * time.Millisecond},
			{Tool: true, LLMFirst: 300 * time.Millisecond, ToolDur: 250 * time.Millisecond, LLMFirst2: 180 * time.Millisecond, BargeIn: true},
		}}
}

// TestScripted: the providers' time on a turn's path. Mutation caught: a
// tool turn without the stream's two token gaps before Done (the tools
// run at Done), or without the second round's first token.
func TestScripted(t *testing.T) {
	s := scriptForTest()
	if got, want := s.scripted(0), 450*time.Millisecond; got != want {
		t.Errorf("plain turn %v, want STT 100 + LLM 200 + TTS 150 = %v", got, want)
	}
	if got, want := s.scripted(1), 100*time.Millisecond+300*time.Millisecond+2*30*time.Millisecond+250*time.Millisecond+180*time.Millisecond+150*time.Millisecond; got != want {
		t.Errorf("tool turn %v, want %v", got, want)
	}
	rs := s.responses()
	if len(rs) != 3 || len(rs[1].Calls) != 1 || rs[1].FirstToken != 300*time.Millisecond || rs[2].FirstToken != 180*time.Millisecond {
		t.Fatalf("responses %+v", rs)
	}
	// The tool call's arguments are cut in two by the mock: Done is
	// the third event.
	if a := rs[1].Calls[0].Args; len(a) < 2 {
		t.Fatalf("arguments %q of one fragment", a)
	}
}

// TestCallTurnMeasure: the engine-added latency is from the write of the
// frame that held the VAD decision's last sample, and the barge-in from
// the interrupt to the end of the last frame. Mutations caught: taking
// the frame before or after the deciding one (a 20 ms error), leaving
// the caller's lateness in, subtracting the scripted time twice or not
// at all, the barge-in from the last frame's arrival instead of its end.
func TestCallTurnMeasure(t *testing.T) {
	base := time.Unix(2000, 0)
	t0 := base.Add(300 * time.Microsecond) // the server's frame 0 start
	s := scriptForTest()
	sc := &serverCall{script: s, ordinal: map[messages.Epoch]int{3: 0, 5: 1},
		turns: []serverTurn{{epoch: 3, heard: true}, {epoch: 5, heard: true}},
		marks: map[messages.Epoch]map[messages.MarkKind]time.Time{}}
	frame := func(n int) time.Duration { return time.Duration(n) * messages.FrameDuration }
	// Turn 0: the utterance ends in frame 100; a Silero window ends 4 ms
	// into frame 115 (its end at 116 frames): the decision's audio time.
	det := t0.Add(frame(115) + 4*time.Millisecond)
	sc.marks[3] = map[messages.MarkKind]time.Time{messages.MarkVADDetected: det}
	late := make([]int32, callsStopWindow)
	late[15] = 2500 // frame 115 was written 2.5 ms late
	first := base.Add(frame(116)).Add(2500 * time.Microsecond).Add(s.scripted(0)).Add(1700 * time.Microsecond)
	t0rec := callerTurnRec{K: 0, Epoch: 3, EndSeq: 100, StopLateUS: late, FirstNS: first.UnixNano()}
	m := callTurnMeasure(t0rec, base.UnixNano(), s.Turns[0], sc, t0, 64*time.Millisecond)
	if !m.answered || !m.joined || !m.referenced {
		t.Fatalf("measure %+v", m)
	}
	if math.Abs(m.engineMS-1.7) > 1e-6 {
		t.Errorf("engine-added %.4f ms, want 1.7 (from frame 115's write)", m.engineMS)
	}
	if math.Abs(m.framingMS-16) > 1e-6 {
		t.Errorf("framing wait %.4f ms, want 16 (the rest of frame 115)", m.framingMS)
	}
	// From the audio time: the caller's 2.5 ms and the mapping's -0.3 ms
	// count.
	if math.Abs(m.audioMS-(1.7+2.5-0.3)) > 1e-6 {
		t.Errorf("engine-added from the audio time %.4f ms, want 3.9", m.audioMS)
	}

	// Turn 1: a barge-in; the interrupt 50 ms after the speech start,
	// the cut answer's last frame 12 ms after it.
	start := base.Add(frame(200))
	intr := start.Add(50 * time.Millisecond)
	det1 := t0.Add(frame(260))
	sc.marks[5] = map[messages.MarkKind]time.Time{messages.MarkVADDetected: det1, messages.MarkInterrupt: intr}
	startLate := make([]int32, callsStartWindow)
	startLate[3] = 1000
	t1 := callerTurnRec{K: 1, Epoch: 5, StartSeq: 200, StartNS: start.UnixNano(), EndSeq: 250, StopLateUS: make([]int32, callsStopWindow),
		StartLateUS: startLate, Barge: "cut", CutLastNS: intr.Add(12 * time.Millisecond).UnixNano(),
		FirstNS: base.Add(frame(260)).Add(s.scripted(1)).Add(3 * time.Millisecond).UnixNano()}
	m = callTurnMeasure(t1, base.UnixNano(), s.Turns[1], sc, t0, 64*time.Millisecond)
	if m.barge != bargeCut || !m.bargeJoined || math.Abs(m.bargeMS-32) > 1e-6 {
		t.Errorf("barge-in %+v, want cut, 32 ms (12 ms + the last frame's 20)", m)
	}
	// From the speech: 64 ms of speech end in frame 203 (written 1 ms
	// late, at 80 ms + 1 ms); the bot was quiet at 50 + 12 + 20 ms.
	if math.Abs(m.bargeSpeechMS-(82-81)) > 1e-6 {
		t.Errorf("barge-in from the speech %.4f ms, want 1", m.bargeSpeechMS)
	}
	if math.Abs(m.engineMS-3) > 1e-6 {
		t.Errorf("tool turn engine-added %.4f ms, want 3", m.engineMS)
	}
	// A turn the server counted under another ordinal is not joined.
	t1.K = 0
	if m := callTurnMeasure(t1, base.UnixNano(), s.Turns[0], sc, t0, 64*time.Millisecond); m.joined {
		t.Error("a turn joined with the server's turn of another ordinal")
	}
}

// TestFrameEpochs: frames take the epoch of the mark after them; frames
// a clear cut before their mark take the epoch of the answer they were
// in. Mutation caught: frames before a clear given epoch 0, or the next
// answer's epoch.
func TestFrameEpochs(t *testing.T) {
	ctl := []ctlRec{
		{epoch: 1, frame: 5}, {epoch: 1, frame: 10}, {epoch: 1, end: true, frame: 12}, // answer 1: frames 0-11
		{epoch: 2, frame: 17}, {clear: true, frame: 19}, // answer 2, cut after frame 18
		{epoch: 4, frame: 24}, // answer 4 from frame 19
	}
	got := frameEpochs(26, ctl)
	want := []uint64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 4, 4, 4, 4, 4, 0, 0}
	if !slices.Equal(got, want) {
		t.Fatalf("epochs %v\nwant   %v", got, want)
	}
	for _, c := range []struct {
		name     string
		epoch    uint64
		end, ok  bool
		tolerate bool
	}{{"pos-12-300", 12, false, true, false}, {"end-7", 7, true, true, false}, {"pos-x-1", 0, false, false, false}, {"other", 0, false, false, false}} {
		e, end, ok := markEpoch(c.name)
		if ok != c.ok || (ok && (e != c.epoch || end != c.end)) {
			t.Errorf("markEpoch(%q) = %d %v %v", c.name, e, end, ok)
		}
	}
}

// TestAnalyseJoin: a caller's turns take the epoch of the first
// user_turn event after their utterance ended, their first audio is
// that epoch's first frame, and a barge-in is judged against the answer
// before. Mutation caught: taking the last user_turn before the next
// utterance (a split utterance's second half).
func TestAnalyseJoin(t *testing.T) {
	ms := func(n int) int64 { return int64(n) * int64(time.Millisecond) }
	c := &convCaller{script: callScript{Turns: []callTurn{{}, {BargeIn: true}}}, latency: map[uint64]float64{},
		minSpeech: 40 * time.Millisecond, ws: &wsClient{}}
	c.turns = []callerTurnRec{{K: 0, StartNS: ms(0), EndNS: ms(1000)}, {K: 1, StartNS: ms(2500), EndNS: ms(4000)}}
	c.userTurns = []userTurnRec{{epoch: 1, at: ms(1300)}, {epoch: 2, at: ms(1350)}, {epoch: 3, at: ms(4400)}}
	// Answer 1 from 2000 ms (frames every 20 ms), cut by a clear at
	// 2600 ms; answer 3 from 5000 ms.
	for at := 2000; at < 2600; at += 20 {
		c.frames = append(c.frames, ms(at))
	}
	c.ctl = append(c.ctl, ctlRec{epoch: 1, frame: 10, at: ms(2200)}, ctlRec{epoch: 1, frame: 20, at: ms(2400)},
		ctlRec{clear: true, frame: 30, at: ms(2600)})
	for at := 5000; at < 5200; at += 20 {
		c.frames = append(c.frames, ms(at))
	}
	c.ctl = append(c.ctl, ctlRec{epoch: 3, end: true, frame: 40, at: ms(5200)})
	var jitter []float64
	var unstamped int
	rec := c.analyse(0, ms(10000), &jitter, &unstamped)
	if len(rec.Turns) != 2 {
		t.Fatalf("%d turns", len(rec.Turns))
	}
	t0, t1 := rec.Turns[0], rec.Turns[1]
	if t0.Epoch != 1 || t0.FirstNS != ms(2000) || t0.Frames != 30 {
		t.Errorf("turn 0: epoch %d first %d frames %d", t0.Epoch, t0.FirstNS, t0.Frames)
	}
	if t1.Epoch != 3 || t1.FirstNS != ms(5000) || t1.Barge != "cut" || t1.CutLastNS != ms(2580) {
		t.Errorf("turn 1: epoch %d first %d barge %q last %d", t1.Epoch, t1.FirstNS, t1.Barge, t1.CutLastNS)
	}
	if len(jitter) != 29+9 || unstamped != 0 {
		t.Errorf("%d gaps (%d unstamped), want the 29 and 9 within the answers", len(jitter), unstamped)
	}
	// Two frames with one kernel time (merged by TCP): the gaps around
	// the first are unknown. Mutation caught: merged frames counted as a
	// 0 ms gap (a jitter of 20 ms).
	c.frames[5] = c.frames[6]
	jitter, unstamped = nil, 0
	c.analyse(0, ms(10000), &jitter, &unstamped)
	if len(jitter) != 29+9-2 || unstamped != 2 {
		t.Errorf("with frame 5 merged: %d gaps, %d unstamped; want 36 and 2", len(jitter), unstamped)
	}
}

// TestCallsSmoke runs `calls` with 8 calls for 20 s: every turn answered,
// no lost turn, barge-ins silenced, tool turns run once, the servers's
// turns joined, no goroutine left. Counts and invariants only, no
// timing. Silero when .native has it (CI=true makes it required), the
// energy VAD otherwise; the speech fixture is required. Skipped with
// -short.
func TestCallsSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("real sockets, a child process, 30 s")
	}
	bin, args := callsCommand(t, "calls", "--calls", "8", "--warmup", "2s", "--hold", "20s", "--json")
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("calls: %v\n%s", err, stderr.String())
	}
	var s callsSweep
	if err := json.Unmarshal(stdout.Bytes(), &s); err != nil {
		t.Fatalf("report: %v\n%s", err, stdout.String())
	}
	if len(s.Runs) != 1 {
		t.Fatalf("%d runs", len(s.Runs))
	}
	r := s.Runs[0]
	if r.Error != "" || r.N != 8 || r.Turns < 16 || r.Answered != r.Turns || r.Lost != 0 {
		t.Errorf("turns: %d answered of %d, %d lost (error %q)", r.Answered, r.Turns, r.Lost, r.Error)
	}
	if r.Unjoined != 0 || r.EngineAdded.Count != r.Answered || r.Misheard != 0 {
		t.Errorf("%d unjoined, %d misheard, %d engine-added figures of %d answered", r.Unjoined, r.Misheard, r.EngineAdded.Count, r.Answered)
	}
	if r.BargeIns == 0 || r.BargeUnjoined != 0 || r.BargeIn.Count != r.BargeIns || r.StaleFrames != 0 {
		t.Errorf("%d barge-ins (%d unjoined, %d figures), %d stale frames", r.BargeIns, r.BargeUnjoined, r.BargeIn.Count, r.StaleFrames)
	}
	if r.ToolTurn == 0 || r.ToolRepeats != 0 {
		t.Errorf("%d tool turns, %d run twice", r.ToolTurn, r.ToolRepeats)
	}
	if r.GoroutinesLeft != 0 || r.Jitter.Count == 0 || r.CPUTotalPct <= 0 || r.HeapPerCallKiB <= 0 {
		t.Errorf("%d goroutines left, %d gaps, CPU %.1f%%, heap %.0f KiB per call", r.GoroutinesLeft, r.Jitter.Count, r.CPUTotalPct, r.HeapPerCallKiB)
	}
}

// TestCallsSoak is CI's two-minute soak: `calls --soak 2m --calls 20`, a
// steady churn of conversations through serve, the server sampled every
// 10 s. It asserts the soak's verdict (no series grew over the last two
// thirds: goroutines, live heap, RSS, descriptors, sockets), every turn
// answered, every barge-in silenced, no dial error and no goroutine left.
// Counts and invariants only. The verdict's own tests (soak_test.go) show
// it failing on leaks; here a leak of a goroutine or a socket per call
// (20 calls live, about 60 over the run) would trip it. Skipped with
// -short.
func TestCallsSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("real sockets, a child process, 2 minutes")
	}
	bin, args := callsCommand(t, "calls", "--soak", "2m", "--calls", "20", "--json")
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var r callsSoakResult
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("soak report: %v (run: %v)\n%s\n%s", err, runErr, stdout.String(), stderr.String())
	}
	if r.Error != "" || !r.Soak.OK || len(r.Soak.Grew) != 0 {
		t.Errorf("soak: error %q, verdict %q, grew %v", r.Error, r.Soak.Verdict, r.Soak.Grew)
	}
	if r.Callers.Completed == 0 || r.Callers.Turns == 0 || r.Lost != 0 || r.Callers.BargeLost != 0 || r.Callers.DialErrors != 0 {
		t.Errorf("calls %d completed, %d turns, %d lost, %d barge-ins not silenced, %d dial errors",
			r.Callers.Completed, r.Callers.Turns, r.Lost, r.Callers.BargeLost, r.Callers.DialErrors)
	}
	if r.GoroutinesLeft != 0 {
		t.Errorf("%d goroutines left", r.GoroutinesLeft)
	}
	if runErr != nil && r.OK {
		t.Errorf("the command failed (%v) with an OK report", runErr)
	}
}

// callsCommand builds brisvox-bench for a real-time test of args: the
// speech fixture must be there (fatal under CI, else a skip), and
// without Silero the energy VAD runs (fatal under CI).
func callsCommand(t *testing.T, args ...string) (bin string, _ []string) {
	t.Helper()
	base, err := fixtureBase()
	if err == nil {
		_, err = os.Stat(base + ".wav")
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the speech fixture is missing (CI's setup makes it): %v", err)
		}
		t.Skipf("the speech fixture is missing (go tool task setup): %v", err)
	}
	if _, err := silero.LocateFiles("", ""); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Silero is missing (CI's setup installs it): %v", err)
		}
		t.Logf("Silero missing, the energy VAD instead: %v", err)
		args = append(args, "--energy")
	}
	bin = filepath.Join(t.TempDir(), "brisvox-bench")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin, args
}
