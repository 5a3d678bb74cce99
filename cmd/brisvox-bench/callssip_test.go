package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brisvox/brisvox/internal/leaktest"
	"github.com/brisvox/brisvox/messages"
)

// TestSIPCallerAddr: every caller index has its own address and reads
// back from it; the addresses of other loopback tests (127.0.0.x) and
// 127.1.0.0 are no caller's. Catches an off-by-one in either direction
// (two callers on one address, or the server drawing caller i+1's
// script).
func TestSIPCallerAddr(t *testing.T) {
	seen := map[netip.Addr]bool{}
	for i := range 65535 {
		a := sipCallerAddr(i)
		if seen[a] {
			t.Fatalf("caller %d shares %v", i, a)
		}
		seen[a] = true
		if !a.IsLoopback() {
			t.Fatalf("caller %d: %v is not loopback", i, a)
		}
		if j, ok := sipCallerOf(a); !ok || j != i {
			t.Fatalf("caller %d: %v reads back as %d, %v", i, a, j, ok)
		}
	}
	for _, s := range []string{"127.0.0.1", "127.0.0.2", "127.1.0.0", "10.1.0.1", "::1"} {
		if i, ok := sipCallerOf(netip.MustParseAddr(s)); ok {
			t.Errorf("%s reads as caller %d", s, i)
		}
	}
}

// TestParseUACMsg: a response with compact headers, a folded header and
// a body longer than its Content-Length; a request. Catches the compact
// forms not mapped (the To tag and Contact would be lost: the ACK and
// BYE would leave the dialog) and the body not cut at Content-Length.
func TestParseUACMsg(t *testing.T) {
	raw := "SIP/2.0 200 OK\r\nv: SIP/2.0/UDP 127.1.0.1:5060;branch=z9hG4bK-x-1;rport=5060\r\n" +
		"f: <sip:caller0@127.1.0.1>;tag=c1-0\r\nt: <sip:bench@127.0.0.1:5060>\r\n ;tag=srv7\r\ni: abc\r\n" +
		"CSeq: 1 INVITE\r\nm: <sip:brisvox@127.0.0.1:5060;transport=udp>\r\nl: 5\r\n\r\nv=0\r\nrest"
	m, err := parseUACMsg([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if m.code != 200 || uacParam(m.header("via"), "branch") != "z9hG4bK-x-1" || uacParam(m.header("to"), "tag") != "srv7" {
		t.Errorf("code %d, via %q, to %q", m.code, m.header("via"), m.header("to"))
	}
	if got := uacURIOf(m.header("contact")); got != "sip:brisvox@127.0.0.1:5060;transport=udp" {
		t.Errorf("contact URI %q", got)
	}
	if string(m.body) != "v=0\r\n" {
		t.Errorf("body %q", m.body)
	}
	req, err := parseUACMsg([]byte("BYE sip:caller0@127.1.0.1:40000 SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:5060;branch=z9hG4bKs\r\nFrom: <sip:bench@127.0.0.1>;tag=srv7\r\n" +
		"To: <sip:caller0@127.1.0.1>;tag=c1-0\r\nCall-ID: abc\r\nCSeq: 5 BYE\r\nContent-Length: 0\r\n\r\n"))
	if err != nil || req.method != "BYE" || req.code != 0 {
		t.Fatalf("request: %+v %v", req, err)
	}
	resp, err := parseUACMsg(uacResponse(req, 200, "OK"))
	if err != nil || resp.code != 200 || resp.header("cseq") != "5 BYE" || resp.header("via") != req.header("via") || resp.header("to") != req.header("to") {
		t.Errorf("the BYE's 200: %+v %v", resp, err)
	}
}

// TestParseAnswer: the audio's address from an answer (session c=);
// an answer without PCMU or without an address fails.
func TestParseAnswer(t *testing.T) {
	ans := "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 20004 RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n"
	ap, err := parseAnswer([]byte(ans))
	if err != nil || ap != netip.MustParseAddrPort("127.0.0.1:20004") {
		t.Fatalf("%v %v", ap, err)
	}
	for _, bad := range []string{strings.Replace(ans, "RTP/AVP 0", "RTP/AVP 8", 1), strings.Replace(ans, "c=IN IP4 127.0.0.1\r\n", "", 1)} {
		if _, err := parseAnswer([]byte(bad)); err == nil {
			t.Errorf("no error for %q", bad)
		}
	}
}

// TestDecimateSpeech: an utterance at 8 kHz is half as long and its onset
// stays where it was (the resampler's delay compensated): a 16 kHz burst
// starting at 100 ms starts at 100 ms at 8 kHz, within 1 ms. Catches the
// delay left in (about 1-2 ms late at the default filter: the turn's end
// time would be early by it) or dropped twice, and a 16 kHz length.
func TestDecimateSpeech(t *testing.T) {
	pcm := make([]int16, 16000) // 1 s: silence, then a 300 Hz tone from 100 ms
	for i := 1600; i < len(pcm); i++ {
		pcm[i] = int16(8000 * math.Sin(2*math.Pi*300*float64(i)/16000))
	}
	out, err := decimateSpeech(callFixture{Texts: []string{"x"}, PCM: [][]int16{pcm}})
	if err != nil {
		t.Fatal(err)
	}
	b := out[0]
	if len(b) != 2*8000 {
		t.Fatalf("%d bytes, want %d", len(b), 2*8000)
	}
	onset := -1
	for i := 0; i+1 < len(b); i += 2 {
		if v := int16(binary.LittleEndian.Uint16(b[i:])); v > 1000 || v < -1000 {
			onset = i / 2
			break
		}
	}
	// The tone passes 1000 about 0.07 ms after its start: at sample 800
	// (100 ms) or the next.
	if onset < 800 || onset > 808 {
		t.Errorf("the onset at sample %d of 8 kHz (%.2f ms), want 800 (100 ms)", onset, float64(onset)/8)
	}
}

// sipTestCaller is a SIP caller with scripted turns and received frames.
func sipTestCaller(turns []callTurn, recs []callerTurnRec, frames []int64) *convCaller {
	c := &convCaller{script: callScript{Turns: turns}, turns: recs, frames: frames, minSpeech: 64 * time.Millisecond}
	c.late = make([]int32, 1000)
	return c
}

// frameRun is n frames 20 ms apart from at (ns).
func frameRun(at int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = at + int64(i)*int64(20*time.Millisecond)
	}
	return out
}

// TestAnalyseSIP: answers are found between the utterances' ends, first
// audio is the first loud packet after the end, jitter counts only gaps
// within an answer, and a barge-in is "spoke" (the answer ran past the
// VAD's decision) or "over" (it had ended before). Catches the answer
// window bounded by the next turn's start (the cut answer's frames after
// a barge-in's start would be lost: "over" instead of "spoke") and the
// gap between two answers counted as jitter.
func TestAnalyseSIP(t *testing.T) {
	ms := func(v int) int64 { return int64(v) * int64(time.Millisecond) }
	turns := []callTurn{{}, {BargeIn: true}, {BargeIn: true}}
	recs := []callerTurnRec{
		{K: 0, StartNS: ms(0), EndNS: ms(1000)},
		// Barges in 500 ms into answer 0 (1500..2500 ms): it spoke on
		// past the decision (2064 ms) to 2100 ms.
		{K: 1, StartNS: ms(2000), EndNS: ms(3000)},
		// Starts after answer 1 (3500..3900 ms) ended: over.
		{K: 2, StartNS: ms(4000), EndNS: ms(5000)},
	}
	var frames []int64
	frames = append(frames, frameRun(ms(1500), 31)...) // answer 0 to 2100 ms
	frames = append(frames, frameRun(ms(3500), 21)...) // answer 1 to 3900 ms
	frames = append(frames, frameRun(ms(5600), 10)...)
	frames[5] += ms(3) // one late packet in answer 0: gaps 23 and 17 ms
	c := sipTestCaller(turns, recs, frames)
	var jitter []float64
	rec := c.analyseSIP(0, ms(10000), &jitter)
	if len(rec.Turns) != 3 {
		t.Fatalf("%d turns", len(rec.Turns))
	}
	got := rec.Turns
	if got[0].FirstNS != ms(1500) || got[0].Frames != 31 || got[1].FirstNS != ms(3500) || got[1].Frames != 21 || got[2].FirstNS != ms(5600) {
		t.Errorf("answers: %+v", got)
	}
	if got[1].Barge != "spoke" || got[1].CutLastNS != ms(2100) {
		t.Errorf("turn 1: %q, last %d", got[1].Barge, got[1].CutLastNS)
	}
	if got[2].Barge != "over" {
		t.Errorf("turn 2: %q", got[2].Barge)
	}
	if want := 30 + 20 + 9; len(jitter) != want {
		t.Errorf("%d gaps, want %d (within the answers)", len(jitter), want)
	}
	var big int
	for _, j := range jitter {
		if j > 2.5 {
			big++
		}
		if j > 3.5 {
			t.Errorf("a gap of %.1f ms off 20: between answers", j)
		}
	}
	if big != 2 {
		t.Errorf("%d gaps 3 ms off, want 2", big)
	}
}

// TestSIPJoinEpochs: each turn gets the earliest epoch the VAD decided
// after the utterance's end and by the next one's; a barge-in that spoke
// on is cut when the server interrupted at its epoch, not cut without.
// Catches the window opening at the utterance's start (a stop decided
// in a pause of the utterance, epoch 3, would be taken), the latest
// epoch of the window taken (7), and "spoke" taken as cut without the
// interrupt.
func TestSIPJoinEpochs(t *testing.T) {
	base := time.Unix(1000, 0)
	at := func(ms int) time.Time { return base.Add(time.Duration(ms) * time.Millisecond) }
	ns := func(ms int) int64 { return at(ms).UnixNano() }
	sc := &serverCall{caller: 3, marks: map[messages.Epoch]map[messages.MarkKind]time.Time{
		3: {messages.MarkVADDetected: at(800)}, // a pause within utterance 0
		2: {messages.MarkVADDetected: at(1300)},
		4: {messages.MarkVADDetected: at(3200), messages.MarkInterrupt: at(2080)},
		6: {messages.MarkVADDetected: at(5200)},
		7: {messages.MarkVADDetected: at(5400)}, // a later one in the same window
	}}
	obs := newCallsObserver()
	obs.byCaller[3] = sc
	out := callersOut{Callers: []callerRec{{Caller: 3, Turns: []callerTurnRec{
		{K: 0, StartNS: ns(0), EndNS: ns(1000)},
		{K: 1, StartNS: ns(2000), EndNS: ns(3000), Barge: "spoke"},
		{K: 2, StartNS: ns(4000), EndNS: ns(5000), Barge: "spoke"},
	}}}}
	sipJoinEpochs(&out, obs)
	got := out.Callers[0].Turns
	if got[0].Epoch != 2 || got[1].Epoch != 4 || got[2].Epoch != 6 {
		t.Errorf("epochs %d %d %d, want 2 4 6", got[0].Epoch, got[1].Epoch, got[2].Epoch)
	}
	if got[1].Barge != "cut" || got[2].Barge != "not_cut" {
		t.Errorf("barge-ins %q %q, want cut, not_cut", got[1].Barge, got[2].Barge)
	}
}

// TestCallsRunJSONOmits: a SIP run's JSON has no key NotMeasured names
// (a zero would read as measured) and keeps the rest; a pcm run keeps
// them all.
func TestCallsRunJSONOmits(t *testing.T) {
	r := callsRun{N: 3, Transport: "sip", NotMeasured: callsSIPNotMeasured}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range callsSIPNotMeasured {
		if _, ok := m[k]; ok {
			t.Errorf("%s in the SIP run's JSON", k)
		}
	}
	if m["calls"] != float64(3) || m["jitter_ms"] == nil {
		t.Errorf("kept keys lost: %s", b)
	}
	b, _ = json.Marshal(callsRun{N: 3})
	for _, k := range callsSIPNotMeasured {
		if k != "engine_added_stages_ms" && !bytes.Contains(b, []byte(`"`+k+`"`)) {
			t.Errorf("%s missing from a pcm run's JSON", k)
		}
	}
	var back callsRun
	if err := json.Unmarshal(b, &back); err != nil || back.N != 3 {
		t.Errorf("round trip: %v %+v", err, back)
	}
}

// TestCallsSIPSmoke is `calls --transport sip --calls 8 --hold 20s`: the
// scripted conversations as SIP calls (a UAC a caller on 127.1.x.y, PCMU
// RTP at 8 kHz) into serve's SIP transport. It asserts counts and
// invariants only, no timing: the 8 calls answered over SIP (8 INVITEs
// answered 200, 8 BYEs 200), every turn answered and joined with the
// server's, barge-ins silenced and joined, tool turns run once, no call
// ended early, no goroutine left, and the figures RTP cannot give left
// out of the JSON. Silero (at 8 kHz) when .native has it, the energy
// VAD otherwise; the speech fixture is required. Skipped with -short.
func TestCallsSIPSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("real sockets, a child process, 30 s")
	}
	bin, args := callsCommand(t, "calls", "--transport", "sip", "--calls", "8", "--warmup", "2s", "--hold", "20s", "--json")
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("calls: %v\n%s\n%s", err, stderr.String(), tail(stdout.String(), 20))
	}
	var s struct {
		Runs []map[string]json.RawMessage `json:"runs"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &s); err != nil || len(s.Runs) != 1 {
		t.Fatalf("report: %v (%d runs)\n%s", err, len(s.Runs), stdout.String())
	}
	for _, k := range callsSIPNotMeasured {
		if _, ok := s.Runs[0][k]; ok {
			t.Errorf("%s in the SIP run's JSON", k)
		}
	}
	var r callsRun
	raw, _ := json.Marshal(s.Runs[0])
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	if r.Transport != "sip" || r.Error != "" || r.N != 8 {
		t.Fatalf("transport %q, %d calls, error %q", r.Transport, r.N, r.Error)
	}
	if c := r.SIPCounters; c["responses_INVITE_200"] != 8 || c["responses_BYE_200"] != 8 || c["rtp_accepted"] == 0 || c["rtp_sent"] == 0 {
		t.Errorf("SIP counters: %v", c)
	}
	if r.Turns < 16 || r.Answered != r.Turns || r.Lost != 0 {
		t.Errorf("turns: %d answered of %d, %d lost", r.Answered, r.Turns, r.Lost)
	}
	if r.Unjoined != 0 || r.EngineAdded.Count != r.Answered || r.Misheard != 0 || r.VADStopAfterEnd.Count != r.Answered {
		t.Errorf("%d unjoined, %d misheard, %d engine-added figures and %d VAD stops of %d answered", r.Unjoined, r.Misheard, r.EngineAdded.Count, r.VADStopAfterEnd.Count, r.Answered)
	}
	if r.BargeIns == 0 || r.BargeUnjoined != 0 || r.BargeIn.Count != r.BargeIns {
		t.Errorf("%d barge-ins (%d unjoined, %d figures)", r.BargeIns, r.BargeUnjoined, r.BargeIn.Count)
	}
	if r.ToolTurn == 0 || r.ToolRepeats != 0 {
		t.Errorf("%d tool turns, %d run twice", r.ToolTurn, r.ToolRepeats)
	}
	if r.EndedEarly != 0 || r.WriteErrors != 0 {
		t.Errorf("%d calls ended early (%v), %d write errors", r.EndedEarly, r.EarlyReasons, r.WriteErrors)
	}
	if r.GoroutinesLeft != 0 || r.Jitter.Count == 0 || r.CPUTotalPct <= 0 || r.HeapPerCallKiB <= 0 {
		t.Errorf("%d goroutines left, %d gaps, CPU %.1f%%, heap %.0f KiB per call", r.GoroutinesLeft, r.Jitter.Count, r.CPUTotalPct, r.HeapPerCallKiB)
	}
}

// TestSIPLegAgainstSipp places one call of the callers' UAC to sipp's
// built-in UAS (an independent SIP stack): INVITE with the offer, sipp's
// 180 and 200, the ACK, a second of PCMU, the BYE and its 200. sipp
// exits 0 only when its scenario ran through (it counts the call failed
// without the ACK or the BYE, or on an unexpected message). Skipped
// without sipp and with -short.
func TestSIPLegAgainstSipp(t *testing.T) {
	if testing.Short() {
		t.Skip("loopback with sipp")
	}
	if _, err := exec.LookPath("sipp"); err != nil {
		t.Skip("sipp is not installed (go tool task setup installs sip-tester)")
	}
	free := func() int {
		c, err := net.ListenPacket("udp", "127.0.0.5:0")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return c.LocalAddr().(*net.UDPAddr).Port
	}
	port, mport := free(), free()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sipp", "-sn", "uas", "-i", "127.0.0.5", "-p", strconv.Itoa(port), "-mp", strconv.Itoa(mport),
		"-m", "1", "-timeout", "30s", "-timeout_error", "-trace_msg", "-message_file", filepath.Join(dir, "msg.log"), "-nostdin")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	server := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.5"), uint16(port))
	base := leaktest.Snapshot()
	// sipp binds as it starts: the INVITE's retransmissions cover it.
	leg, err := dialSIPLeg(ctx, 0, server, 1, func(time.Time) {})
	if err != nil {
		cancel()
		<-exited
		t.Fatalf("dial: %v\n%s", err, tail(out.String(), 30))
	}
	if leg.remoteRTP.Port() != uint16(mport) || leg.toTag == "" {
		t.Errorf("the answer's RTP %v (sipp's media port %d), To tag %q", leg.remoteRTP, mport, leg.toTag)
	}
	frame := make([]byte, 320)
	for range 50 {
		if err := leg.send(frame); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := leg.bye(ctx); err != nil {
		t.Errorf("bye: %v", err)
	}
	leg.close()
	if n, stacks := leaktest.Settle(base, 5*time.Second); n != 0 {
		t.Log(stacks)
		t.Errorf("%d of the leg's goroutines left after close", n)
	}
	if err := <-exited; err != nil {
		t.Errorf("sipp: %v\n%s", err, tail(out.String(), 30))
	}
	trace, _ := os.ReadFile(filepath.Join(dir, "msg.log"))
	for _, m := range []string{"INVITE sip:bench@", "ACK sip:", "BYE sip:", "m=audio "} {
		if !bytes.Contains(trace, []byte(m)) {
			t.Errorf("sipp's trace has no %q", m)
		}
	}
}

// TestCallsHTMLSIP: a SIP run's report says it ran over SIP and what RTP
// does not measure, and shows its stale frames as not measured, not 0.
// Catches staleCell giving the zero.
func TestCallsHTMLSIP(t *testing.T) {
	s := callsSweep{Goals: callsGoalsDefault, VAD: "energy", Runs: []callsRun{{N: 2, Transport: "sip", NotMeasured: callsSIPNotMeasured, VAD: "energy"}}}
	var b bytes.Buffer
	if err := writeCallsHTML(&b, s); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if !strings.Contains(page, "over SIP (G.711 PCMU RTP") || !strings.Contains(page, "frame0_offset_ms") {
		t.Errorf("the page does not say the run was over SIP and what it left out")
	}
	if !strings.Contains(page, ">not measured<") {
		t.Errorf("stale frames shown as measured")
	}
}

// TestJoinCallsSIP: a SIP caller's plain turn, joined by sipJoinEpochs
// and joinCalls: engine-added from vad_detected less the scripted
// latencies, the stages from vad_detected (sipStages), the VAD's stop
// after the utterance's end, and no figure of the deciding frame (no
// server frame 0 over RTP). Catches sipStages not called (no stages),
// the stages taken from the utterance's end instead of the decision
// (send is the same, vad_stt 300 ms more), and the stop offset not kept.
func TestJoinCallsSIP(t *testing.T) {
	script := newCallScript(1, 0, 3, 4)
	script.Turns[0].Tool, script.Turns[0].BargeIn = false, false
	base := time.Unix(2000, 0)
	at := func(ms int) time.Time { return base.Add(time.Duration(ms) * time.Millisecond) }
	end, det := at(1000), at(1300)
	scripted := script.scripted(0)
	first := det.Add(scripted + 42*time.Millisecond) // 42 ms engine-added
	outAt := first.Add(-31 * time.Millisecond)
	sc := &serverCall{caller: 5, script: script, ordinal: map[messages.Epoch]int{9: 0}, turns: []serverTurn{{epoch: 9, heard: true}},
		marks: map[messages.Epoch]map[messages.MarkKind]time.Time{9: {
			messages.MarkVADStop: at(1055), messages.MarkVADDetected: det,
			messages.MarkSTTFinal: det.Add(script.STTFinal + 2*time.Millisecond), messages.MarkFirstAudioOut: outAt,
		}}, toolRuns: map[string]int{}}
	obs := newCallsObserver()
	obs.byCaller[5] = sc
	out := callersOut{HoldFromNS: at(0).UnixNano(), HoldToNS: at(5000).UnixNano(), Callers: []callerRec{{Caller: 5, Turns: []callerTurnRec{
		{K: 0, StartNS: at(0).UnixNano(), EndNS: end.UnixNano(), FirstNS: first.UnixNano(), Frames: 40},
	}}}}
	sipJoinEpochs(&out, obs)
	r := callsRun{Transport: "sip"}
	joinCalls(&r, out, obs, nil, 64*time.Millisecond)
	if r.Turns != 1 || r.Answered != 1 || r.Unjoined != 0 || r.Unreferenced != 1 {
		t.Fatalf("turns %d answered %d unjoined %d unreferenced %d", r.Turns, r.Answered, r.Unjoined, r.Unreferenced)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-6 }
	if !near(r.EngineAdded.P50, 42) || r.Frame0Offset.Count != 0 {
		t.Errorf("engine-added %.3f ms (want 42), %d frame 0 offsets", r.EngineAdded.P50, r.Frame0Offset.Count)
	}
	if st := r.EngineStages; !near(st["send"].P50, 31) || !near(st["vad_stt"].P50, 2) {
		t.Errorf("stages %+v, want send 31, vad_stt 2", st)
	}
	if r.VADStopAfterEnd.Count != 1 || !near(r.VADStopAfterEnd.P50, 55) {
		t.Errorf("the VAD's stop after the end: %+v, want 55 ms", r.VADStopAfterEnd)
	}
}
