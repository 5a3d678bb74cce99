package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/brisvox/brisvox/cmd/internal/records"
	"github.com/brisvox/brisvox/cmd/internal/records/redact"
	"github.com/brisvox/brisvox/cmd/internal/records/sqlstore"
	"github.com/brisvox/brisvox/media/g722"
	"github.com/brisvox/brisvox/media/webrtc/webrtctest"
	"github.com/coder/websocket"
)

// These tests follow calls through `brisvox serve` (the keyless agent,
// real engines, real sockets on loopback) into their call records: the
// record read back from the node's SQLite file and from the operator API
// is checked field by field against what the caller saw live, and the
// numbers and a planted number typed by the caller are in no byte of the
// records directory nor in the log. Real time: skipped with -short.

// The test's secrets. The From number is Ofcom's drama range (01632
// 960xxx) and the typed one its drama mobile range (07700 900xxx): no
// one's number.
const (
	recordsTokenEnv = "BRISVOX_RECORDS_E2E_TOKEN"
	recordsToken    = "records-e2e-operator-token-0123456789"
	recordsKey      = "records-e2e-number-key-0123456789abcdef"
	fromNumber      = "+441632960123"
	typedNumber     = "07700900123"
	// saidNumber is typedNumber as the recognizer writes it said.
	saidNumber = "zero seven seven zero zero nine zero zero one two three"
)

// liveEvents is what a caller saw of its call live: the page's events
// ({"type":"event","kind":...} objects), in arrival order.
type liveEvents []map[string]any

func epochOf(ev map[string]any) uint64 {
	f, _ := ev["epoch"].(float64) // omitted when 0
	return uint64(f)
}

func (l liveEvents) of(kind string) []map[string]any {
	var out []map[string]any
	for _, ev := range l {
		if ev["kind"] == kind {
			out = append(out, ev)
		}
	}
	return out
}

// keptCaller is a caller of the PCM websocket in real time: a 20 ms frame
// every 20 ms, silence unless something was queued by play; marks are
// echoed at once (it plays as it receives); the page's events are kept.
type keptCaller struct {
	ws     *websocket.Conn
	cancel context.CancelFunc
	wg     sync.WaitGroup
	read   chan struct{}

	mu     sync.Mutex
	queue  []int16
	events liveEvents
}

func dialKeptCaller(t *testing.T, base string) *keptCaller {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/pcm?rate=16000", &websocket.DialOptions{HTTPClient: client})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	c := &keptCaller{ws: ws, cancel: cancel, read: make(chan struct{})}
	c.wg.Go(func() {
		defer close(c.read)
		for {
			typ, data, err := ws.Read(ctx)
			if err != nil {
				return
			}
			if typ != websocket.MessageText {
				continue
			}
			var m map[string]any
			if json.Unmarshal(data, &m) != nil {
				continue
			}
			switch m["type"] {
			case "mark":
				_ = ws.Write(ctx, websocket.MessageText, data)
			case "event":
				if d, ok := m["data"].(map[string]any); ok {
					c.mu.Lock()
					c.events = append(c.events, d)
					c.mu.Unlock()
				}
			}
		}
	})
	c.wg.Go(func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		frame := make([]byte, 640)
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			c.mu.Lock()
			for j := range 320 {
				var v int16
				if j < len(c.queue) {
					v = c.queue[j]
				}
				binary.LittleEndian.PutUint16(frame[2*j:], uint16(v))
			}
			c.queue = c.queue[min(320, len(c.queue)):]
			c.mu.Unlock()
			if err := ws.Write(ctx, websocket.MessageBinary, frame); err != nil {
				return
			}
		}
	})
	t.Cleanup(c.close)
	return c
}

// play queues 16 kHz speech after what is queued.
func (c *keptCaller) play(pcm []int16) {
	c.mu.Lock()
	c.queue = append(c.queue, pcm...)
	c.mu.Unlock()
}

func (c *keptCaller) seen() liveEvents {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.events)
}

// hangup ends the call from the caller's side and waits until the server
// closed the websocket.
func (c *keptCaller) hangup(t *testing.T) {
	t.Helper()
	if err := c.ws.Write(context.Background(), websocket.MessageText, []byte(`{"type":"hangup"}`)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.read:
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not close the websocket after the hangup")
	}
	c.close()
}

func (c *keptCaller) close() {
	c.cancel()
	_ = c.ws.CloseNow()
	c.wg.Wait()
}

// waitSeen polls events until match finds one, within d.
func waitSeen(t *testing.T, d time.Duration, what string, events func() liveEvents, match func(map[string]any) bool) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(d); ; time.Sleep(50 * time.Millisecond) {
		for _, ev := range events() {
			if match(ev) {
				return ev
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %v; events: %v", what, d, events())
		}
	}
}

// answeredTurn plays question and waits for the caller's turn and the
// whole answer to it (bot_done, not cut); it returns the turn's epoch.
func answeredTurn(t *testing.T, events func() liveEvents, play func([]int16), question []int16, word string) uint64 {
	t.Helper()
	play(question)
	turn := waitSeen(t, 40*time.Second, "the question's turn", events, func(ev map[string]any) bool {
		return ev["kind"] == "user_turn" && strings.Contains(fmt.Sprint(ev["text"]), word)
	})
	ep := epochOf(turn)
	waitSeen(t, 40*time.Second, "the answer's end", events, func(ev map[string]any) bool {
		return ev["kind"] == "bot_done" && epochOf(ev) == ep
	})
	waitSeen(t, 10*time.Second, "the answer's latency", events, func(ev map[string]any) bool {
		return ev["kind"] == "latency" && epochOf(ev) == ep
	})
	return ep
}

// greeted waits for the greeting to have played whole.
func greeted(t *testing.T, events func() liveEvents) {
	t.Helper()
	waitSeen(t, 40*time.Second, "the greeting", events, func(ev map[string]any) bool {
		return ev["kind"] == "bot_done" && ev["cut"] != true
	})
}

// recordsJSON GETs an operator route with the token and decodes its
// 200 answer into v.
func recordsJSON(t *testing.T, base, path string, v any) {
	t.Helper()
	code, body := fetch(t, "GET", base+path, recordsToken)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, code, body)
	}
	if err := json.Unmarshal([]byte(body), v); err != nil {
		t.Fatalf("GET %s: %v in %s", path, err, body)
	}
}

type recordList struct {
	Node    string            `json:"node"`
	Records []records.Summary `json:"records"`
}

// waitRecord polls the operator API until a record of the transport is
// listed, and returns its summary.
func waitRecord(t *testing.T, base, transport string) records.Summary {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var l recordList
		recordsJSON(t, base, "/operator/records?transport="+transport, &l)
		if len(l.Records) > 0 {
			if len(l.Records) != 1 {
				t.Fatalf("%d records of transport %s, want 1: %v", len(l.Records), transport, l.Records)
			}
			return l.Records[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no record of a %s call within 20 s", transport)
		}
	}
}

// apiRecord is GET /operator/records/{id}'s record.
func apiRecord(t *testing.T, base, id string) *records.Record {
	t.Helper()
	var got struct {
		Record *records.Record `json:"record"`
	}
	recordsJSON(t, base, "/operator/records/"+url.PathEscape(id), &got)
	if got.Record == nil {
		t.Fatalf("GET /operator/records/%s: no record", id)
	}
	return got.Record
}

// fileDigest is the sha256 (hex) of a file's bytes: what a record's
// agent_digest must be.
func fileDigest(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// wantRecord is what a record must say beyond its live events.
type wantRecord struct {
	transport, endReason, digest string
	// parties: the call had SIP parties (hashed, never kept).
	parties bool
	// redactions are the redactor's counts the record must give.
	redactions map[string]int
}

// checkRecord checks every field of a record against the call's live
// events (events nil: the transport has no page, SIP) and want. red is
// the node's redactor (the default kinds): the record holds what was
// said as it redacts it.
func checkRecord(t *testing.T, rec *records.Record, events liveEvents, want wantRecord, red *redact.Redactor) {
	t.Helper()
	errorf := func(format string, a ...any) {
		t.Helper()
		t.Errorf("%s record %s: "+format, append([]any{want.transport, rec.CallID}, a...)...)
	}
	if rec.Version != records.SchemaVersion || rec.CallID == "" || rec.Node == "" {
		errorf("version %d, call id %q, node %q", rec.Version, rec.CallID, rec.Node)
	}
	if rec.Transport != want.transport || rec.Direction != "inbound" || rec.Trunk != "" {
		errorf("transport %q direction %q trunk %q, want %s inbound and no trunk", rec.Transport, rec.Direction, rec.Trunk, want.transport)
	}
	if rec.Agent != "local" || rec.AgentDigest != want.digest {
		errorf("agent %q digest %q, want local and %s (the agent file's sha256)", rec.Agent, rec.AgentDigest, want.digest)
	}
	if rec.EndReason != want.endReason || rec.GaveUp != "" {
		errorf("end reason %q gave up %q, want %q", rec.EndReason, rec.GaveUp, want.endReason)
	}
	if rec.Started.IsZero() || rec.Answered.Before(rec.Started) || !rec.Ended.After(rec.Answered) || rec.Ended.Sub(rec.Started) > 2*time.Minute {
		errorf("started %v answered %v ended %v", rec.Started, rec.Answered, rec.Ended)
	}
	if want.parties {
		// The numbers policy (hash, the default): each party a hash, no
		// number.
		if rec.Caller.Number != "" || len(rec.Caller.Hash) != 64 || rec.Callee.Number != "" || len(rec.Callee.Hash) != 64 {
			errorf("parties %+v %+v, want hashes only", rec.Caller, rec.Callee)
		}
	} else if rec.Caller != (records.Party{}) || rec.Callee != (records.Party{}) {
		errorf("parties %+v %+v of a call without numbers", rec.Caller, rec.Callee)
	}
	if rec.TraceID != "" || rec.Recording != nil || len(rec.Failures) != 0 || len(rec.Restarts) != 0 || len(rec.Failovers) != 0 {
		errorf("trace %q recording %v failures %v restarts %v failovers %v, want none", rec.TraceID, rec.Recording, rec.Failures, rec.Restarts, rec.Failovers)
	}
	// The question's get_time call: settled ok, its data not kept (the
	// tool-data policy's default).
	if len(rec.Tools) != 1 || !rec.ToolDataRemoved {
		errorf("tools %+v (data removed %v), want the one get_time call, its data removed", rec.Tools, rec.ToolDataRemoved)
	}
	for _, tc := range rec.Tools {
		if tc.Name != "get_time" || tc.Outcome != "ok" || tc.ID == "" || tc.Started.Before(rec.Started) || tc.Settled.Before(tc.Started) ||
			tc.DurationMS != float64(tc.Settled.Sub(tc.Started).Microseconds())/1000 || tc.Args != nil || tc.Result != "" || tc.KeyDigest != "" {
			errorf("tool call %+v", tc)
		}
		if tr := turnOf(rec, tc.Epoch); tr == nil || tr.LatencyMS == 0 {
			errorf("tool call %s in turn %d, not an answered turn", tc.ID, tc.Epoch)
		}
	}
	if !maps.Equal(rec.Redactions, want.redactions) {
		errorf("redactions %v, want %v", rec.Redactions, want.redactions)
	}

	// Every transcript line in order and within the call.
	for i, l := range rec.Transcript {
		if l.At.Before(rec.Started) || l.At.After(rec.Ended) || (i > 0 && l.At.Before(rec.Transcript[i-1].At)) {
			errorf("line %d at %v, out of order or outside the call", i, l.At)
		}
	}
	// Every turn's marks within the call, its latency the stages' sum.
	answered := 0
	for _, tr := range rec.Turns {
		for name, at := range tr.Marks {
			if at.Before(rec.Started.Add(-time.Second)) || at.After(rec.Ended) {
				errorf("turn %d: mark %s at %v outside the call", tr.Epoch, name, at)
			}
		}
		var sum float64
		for _, s := range tr.Stages {
			sum += s.MS
		}
		if d := sum - tr.LatencyMS; d > 0.01 || d < -0.01 {
			errorf("turn %d: stages sum to %.3f ms, latency %.3f ms", tr.Epoch, sum, tr.LatencyMS)
		}
		if tr.LatencyMS == 0 {
			continue
		}
		answered++
		keys := false
		if l := lineOf(rec, records.SpeakerCaller, tr.Epoch); l != nil && l.Keys > 0 {
			keys = true // typed, not said: no transcript final
		}
		for _, m := range []string{"vad_stop", "stt_final", "turn_end", "llm_request", "llm_first_token", "tts_first_audio", "first_audio_out"} {
			if _, ok := tr.Marks[m]; !ok && !(keys && m == "stt_final") {
				errorf("answered turn %d lacks the mark %s: %v", tr.Epoch, m, tr.Marks)
			}
		}
		if len(tr.RoundFirstTokens) == 0 || !tr.RoundFirstTokens[0].Equal(tr.Marks["llm_first_token"]) {
			errorf("turn %d: round first tokens %v, llm_first_token %v", tr.Epoch, tr.RoundFirstTokens, tr.Marks["llm_first_token"])
		}
		if !tr.Marks["first_audio_out"].After(tr.Marks["turn_end"]) {
			errorf("turn %d: first audio out %v not after the turn's end %v", tr.Epoch, tr.Marks["first_audio_out"], tr.Marks["turn_end"])
		}
	}
	if answered == 0 {
		errorf("no answered turn: %+v", rec.Turns)
	}

	// Usage: each engine by its vendor, with what it did.
	usage := map[string]records.Usage{}
	for _, u := range rec.Usage {
		if _, twice := usage[u.Kind]; twice {
			errorf("usage of %s twice: %+v", u.Kind, rec.Usage)
		}
		usage[u.Kind] = u
	}
	botRunes := 0
	for _, l := range rec.Transcript {
		if l.Speaker == records.SpeakerBot {
			botRunes += utf8.RuneCountInString(strings.ReplaceAll(l.Text, " ", ""))
		}
	}
	if u := usage[records.UsageSTT]; u.Vendor != "pocketsphinx" || u.Requests < 1 || u.AudioSeconds < 1 {
		errorf("stt usage %+v, want pocketsphinx with the call's audio", u)
	}
	if u := usage[records.UsageLLM]; u.Vendor != "rules" || u.Requests < answered || u.OutputTokens < 1 {
		errorf("llm usage %+v, want rules with %d requests or more and tokens", u, answered)
	}
	if u := usage[records.UsageTTS]; u.Vendor != "flite" || u.Requests < 1 || u.Characters < botRunes {
		errorf("tts usage %+v, want flite with at least the %d characters heard", u, botRunes)
	}
	if len(rec.Usage) != 3 {
		errorf("usage %+v, want stt, llm and tts", rec.Usage)
	}

	if events == nil {
		return
	}
	// Against the live events: each caller's turn as heard, each answer
	// as played (its words, its cut), each latency and its stages, the
	// turns and the barge-ins.
	epochs := map[uint64]bool{}
	lines := 0
	for _, ev := range events.of("user_turn") {
		ep, text := epochOf(ev), fmt.Sprint(ev["text"])
		epochs[ep] = true
		lines++
		want, _ := red.String(text)
		if l := lineOf(rec, records.SpeakerCaller, ep); l == nil || l.Text != want {
			errorf("the caller's line of turn %d is %+v, the page heard %q", ep, l, text)
		}
	}
	words := map[uint64][]string{}
	var bots []uint64
	for _, ev := range events.of("bot_word") {
		ep := epochOf(ev)
		if _, ok := words[ep]; !ok {
			bots = append(bots, ep)
		}
		words[ep] = append(words[ep], fmt.Sprint(ev["text"]))
		epochs[ep] = true
	}
	cuts := 0
	for _, ev := range events.of("bot_done") {
		epochs[epochOf(ev)] = true
		if ev["cut"] == true {
			cuts++
		}
	}
	for _, ep := range bots {
		lines++
		want, _ := red.String(strings.Join(words[ep], " "))
		cut := false
		for _, ev := range events.of("bot_done") {
			cut = cut || (epochOf(ev) == ep && ev["cut"] == true)
		}
		if l := lineOf(rec, records.SpeakerBot, ep); l == nil || l.Text != want || l.Cut != cut {
			errorf("the bot's line of turn %d is %+v, the page played %q (cut %v)", ep, l, want, cut)
		}
	}
	if len(rec.Transcript) != lines {
		errorf("%d transcript lines, the page saw %d: %+v", len(rec.Transcript), lines, rec.Transcript)
	}
	for _, ev := range events.of("latency") {
		ep := epochOf(ev)
		epochs[ep] = true
		tr := turnOf(rec, ep)
		if tr == nil {
			errorf("no turn %d; the page had its latency", ep)
			continue
		}
		if ms, _ := ev["latency_ms"].(float64); tr.LatencyMS != ms {
			errorf("turn %d: latency %.3f ms, the page %.3f ms", ep, tr.LatencyMS, ms)
		}
		var stages []records.Stage
		raw, _ := json.Marshal(ev["stages"])
		_ = json.Unmarshal(raw, &stages)
		if !slices.Equal(tr.Stages, stages) || len(stages) == 0 {
			errorf("turn %d: stages %v, the page %v", ep, tr.Stages, stages)
		}
	}
	// The tool's lines on the page: the same call, settled.
	for _, tc := range rec.Tools {
		var last map[string]any
		for _, ev := range events.of("tool") {
			if ev["call"] == tc.ID {
				last = ev
			}
		}
		if last == nil || last["text"] != tc.Name || epochOf(last) != tc.Epoch || last["outcome"] != "done" {
			errorf("tool call %+v; the page's last line of it %v", tc, last)
		}
	}
	if len(rec.Turns) != len(epochs) {
		errorf("%d turns, the page saw the epochs %v: %+v", len(rec.Turns), epochs, rec.Turns)
	}
	for _, tr := range rec.Turns {
		if !epochs[tr.Epoch] {
			errorf("turn %d was not on the page", tr.Epoch)
		}
	}
	if rec.BargeIns != cuts {
		errorf("%d barge-ins, the page saw %d answers cut", rec.BargeIns, cuts)
	}
}

func lineOf(rec *records.Record, speaker string, ep uint64) *records.Line {
	for i := range rec.Transcript {
		if l := &rec.Transcript[i]; l.Speaker == speaker && l.Epoch == ep {
			return l
		}
	}
	return nil
}

func turnOf(rec *records.Record, ep uint64) *records.Turn {
	for i := range rec.Turns {
		if rec.Turns[i].Epoch == ep {
			return &rec.Turns[i]
		}
	}
	return nil
}

// notInFiles fails the test for each secret found in any byte of any
// file under dir (the database, its WAL, both journals, the key).
func notInFiles(t *testing.T, dir string, secrets ...string) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds %q", path, s)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatalf("no file under %s", dir)
	}
}

// writeRTPPcap writes pcm (16 kHz) as the pcap sipp's play_pcap_audio
// replays: G.722 RTP (payload type 9, 20 ms packets of 160 bytes, the
// 8 kHz RTP clock of RFC 3551), in Ethernet/IPv4/UDP frames timed 20 ms
// apart. sipp sends each UDP payload to the answer's media address.
func writeRTPPcap(t *testing.T, path string, pcm []int16) {
	t.Helper()
	le, be := binary.LittleEndian, binary.BigEndian
	var b []byte
	b = le.AppendUint32(b, 0xa1b2c3d4)
	b = le.AppendUint16(b, 2)
	b = le.AppendUint16(b, 4)
	b = le.AppendUint32(b, 0)
	b = le.AppendUint32(b, 0)
	b = le.AppendUint32(b, 65535)
	b = le.AppendUint32(b, 1) // Ethernet
	enc := g722.NewEncoder()
	payload := make([]byte, 160)
	for i := 0; i*320 < len(pcm); i++ {
		frame := make([]int16, 320)
		copy(frame, pcm[i*320:])
		enc.Encode(payload, frame)
		rtp := []byte{0x80, 9}
		if i == 0 {
			rtp[1] |= 0x80 // marker: the talk spurt's start
		}
		rtp = be.AppendUint16(rtp, uint16(i))
		rtp = be.AppendUint32(rtp, uint32(i*160))
		rtp = be.AppendUint32(rtp, 0x5eed0722)
		rtp = append(rtp, payload...)
		udp := be.AppendUint16(nil, 40000)
		udp = be.AppendUint16(udp, 40002)
		udp = be.AppendUint16(udp, uint16(8+len(rtp)))
		udp = be.AppendUint16(udp, 0)
		udp = append(udp, rtp...)
		ip := []byte{0x45, 0}
		ip = be.AppendUint16(ip, uint16(20+len(udp)))
		ip = be.AppendUint16(ip, uint16(i))
		ip = be.AppendUint16(ip, 0x4000)
		ip = append(ip, 64, 17, 0, 0, 127, 0, 0, 2, 127, 0, 0, 1)
		var sum uint32
		for k := 0; k < 20; k += 2 {
			sum += uint32(be.Uint16(ip[k:]))
		}
		for sum > 0xffff {
			sum = sum&0xffff + sum>>16
		}
		be.PutUint16(ip[10:], ^uint16(sum))
		ip = append(ip, udp...)
		eth := append(make([]byte, 12), 0x08, 0x00)
		eth = append(eth, ip...)
		at := time.Duration(i) * 20 * time.Millisecond
		b = le.AppendUint32(b, uint32(1700000000+at/time.Second))
		b = le.AppendUint32(b, uint32(at%time.Second/time.Microsecond))
		b = le.AppendUint32(b, uint32(len(eth)))
		b = le.AppendUint32(b, uint32(len(eth)))
		b = append(b, eth...)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// sippCallScenario is a caller whose From is fromNumber: INVITE offering
// G.722 (and key presses), the 200 ACKed, call.pcap played (the caller's
// speech), after talkMS the keys of typed sent as SIP INFO
// (application/dtmf-relay) one by one, then after waitMS a BYE.
func sippCallScenario(typed string, talkMS, waitMS int) string {
	var b strings.Builder
	from := `"Caller" <sip:` + fromNumber + `@[local_ip]:[local_port]>;tag=[pid]SIPpTag00[call_number]`
	inDialog := func(method string, cseq int, ctype, body string) {
		fmt.Fprintf(&b, `  <send retrans="500">
    <![CDATA[
      %s sip:agent@[remote_ip]:[remote_port] SIP/2.0
      Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
      From: %s
      To: <sip:agent@[remote_ip]:[remote_port]>[peer_tag_param]
      Call-ID: [call_id]
      CSeq: %d %s
      Contact: sip:%s@[local_ip]:[local_port]
      Max-Forwards: 70
`, method, from, cseq, method, fromNumber)
		if body != "" {
			fmt.Fprintf(&b, "      Content-Type: %s\n      Content-Length: [len]\n\n      %s\n", ctype, strings.ReplaceAll(body, "\n", "\n      "))
		} else {
			b.WriteString("      Content-Length: 0\n\n")
		}
		b.WriteString("    ]]>\n  </send>\n")
		fmt.Fprintf(&b, "  <recv response=\"200\" crlf=\"true\"/>\n")
	}
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="ISO-8859-1" ?>
<!DOCTYPE scenario SYSTEM "sipp.dtd">
<scenario name="records_caller">
  <send retrans="500">
    <![CDATA[
      INVITE sip:agent@[remote_ip]:[remote_port] SIP/2.0
      Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
      From: %s
      To: <sip:agent@[remote_ip]:[remote_port]>
      Call-ID: [call_id]
      CSeq: 1 INVITE
      Contact: sip:%s@[local_ip]:[local_port]
      Max-Forwards: 70
      Content-Type: application/sdp
      Content-Length: [len]

      v=0
      o=user1 53655765 2353687637 IN IP[local_ip_type] [local_ip]
      s=-
      c=IN IP[local_ip_type] [local_ip]
      t=0 0
      m=audio [auto_media_port] RTP/AVP 9 101
      a=rtpmap:9 G722/8000
      a=rtpmap:101 telephone-event/8000
      a=fmtp:101 0-15
    ]]>
  </send>
  <recv response="100" optional="true"/>
  <recv response="180" optional="true"/>
  <recv response="183" optional="true"/>
  <recv response="200" rtd="true"/>
  <send>
    <![CDATA[
      ACK sip:agent@[remote_ip]:[remote_port] SIP/2.0
      Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
      From: %s
      To: <sip:agent@[remote_ip]:[remote_port]>[peer_tag_param]
      Call-ID: [call_id]
      CSeq: 1 ACK
      Contact: sip:%s@[local_ip]:[local_port]
      Max-Forwards: 70
      Content-Length: 0

    ]]>
  </send>
  <nop>
    <action>
      <exec play_pcap_audio="call.pcap"/>
    </action>
  </nop>
  <pause milliseconds="%d"/>
`, from, fromNumber, from, fromNumber, talkMS)
	for i, k := range typed {
		inDialog("INFO", 2+i, "application/dtmf-relay", fmt.Sprintf("Signal=%c\nDuration=160", k))
	}
	fmt.Fprintf(&b, "  <pause milliseconds=\"%d\"/>\n", waitMS)
	inDialog("BYE", 2+len(typed), "", "")
	b.WriteString("</scenario>\n")
	return b.String()
}

// sippCall runs the scenario from 127.0.0.2 against target in dir (where
// call.pcap is) and returns sipp's output and exit error.
func sippCall(t *testing.T, dir, target, scenario string) (string, error) {
	t.Helper()
	sf := filepath.Join(dir, "records_caller.xml")
	if err := os.WriteFile(sf, []byte(scenario), 0o644); err != nil {
		t.Fatal(err)
	}
	port := func() string { return strconv.Itoa(freeUDP(t, "127.0.0.2")) }
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sipp", "-m", "1", "-timeout", "80s", "-timeout_error", "-i", "127.0.0.2", "-mi", "127.0.0.2",
		"-p", port(), "-mp", port(), "-nostdin", "-trace_err", "-trace_msg", "-sf", sf, target)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// TestRecordsOfEachTransport: a call through each transport the keyless
// agent serves (the PCM websocket, WebRTC with the pion caller of
// webrtctest, SIP with sipp playing G.722 RTP speech and typing a number
// with SIP INFO), each asking the time and answered (the PCM caller then
// says a phone number digit by digit), leaves one complete record. It is
// read through GET /operator/records/{id} and from the node's SQLite file
// (sqlstore.Open on the test's records directory) after the node stopped,
// and every field is checked against the call's live events (the page's:
// caller turns and bot words, latency and stages, the turns, the cuts,
// the tool's lines) and what the test knows (transport, direction, end
// reason, agent and the agent file's sha256, usage by vendor, the SIP
// parties as hashes only, the said and the typed numbers redacted). The
// From number and the typed and said numbers are in no byte of the
// records directory (database, WAL, journals), and neither they nor any
// transcript line is in the server's log.
//
// Twilio Media Streams are not served by the keyless agent (8 kHz
// mu-law; its pocketsphinx hears 16 kHz only: `brisvox check` refuses
// the combination), so no Twilio call is placed here.
//
// Mutations caught (each seen failing): the keeper not wired in serve
// (keptCalls.wire not setting Keeper: no record listed); the numbers
// policy ignored (hash keeping the number too: Caller.Number set, the
// number in the database's and both journals' bytes); redaction off
// (records.Config.Redactor nil: the numbers in the callers' lines and in
// the database's and journals' bytes, redactions empty); the agent
// digest not passed to the keeper (empty); the session logging what the
// caller said at info level whatever LogContent says (the transcript
// and the said number in the log).
func TestRecordsOfEachTransport(t *testing.T) {
	needPeer(t, "sipp")
	check := noLeaks(t)
	start := time.Now()
	question := say(t, "What time is it?")
	t.Setenv(recordsTokenEnv, recordsToken)
	t.Setenv("BRISVOX_RECORDS_KEY", recordsKey)
	agent := keyless(t)
	digest := fileDigest(t, agent)
	dir := t.TempDir()
	stdout := &syncBuffer{}
	base, stop, stderr := servedOut(t, serveFlags{agent: agent, maxCalls: 4, drain: 2 * time.Second, sipAddr: "127.0.0.1:0",
		recordsDir: dir, operatorTokenEnv: recordsTokenEnv}, stdout)
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()
	var sipAddr string
	eventually(t, 5*time.Second, "the SIP banner", func() bool {
		m := sipBanner.FindStringSubmatch(stdout.String())
		if m != nil {
			sipAddr = m[1]
		}
		return m != nil
	})
	if !strings.Contains(stdout.String(), "keeping call records in "+dir+" (sqlite)") {
		t.Errorf("serve's banner does not name the records: %s", stdout)
	}
	red, err := redact.New(redact.Config{})
	if err != nil {
		t.Fatal(err)
	}
	type placed struct {
		want   wantRecord
		events liveEvents
		id     string
		api    *records.Record
	}
	var calls []*placed
	figures := map[string]time.Duration{"start": time.Since(start)}

	t.Run("pcm", func(t *testing.T) {
		t0 := time.Now()
		c := dialKeptCaller(t, base)
		greeted(t, c.seen)
		answeredTurn(t, c.seen, c.play, question, "time")
		// The caller says a number digit by digit: the recognizer
		// writes it in words, the redactor finds it.
		ep := answeredTurn(t, c.seen, c.play, say(t, "My number is zero, seven, seven, zero, zero, nine, zero, zero, one, two, three."), "number")
		c.hangup(t)
		p := &placed{want: wantRecord{transport: "pcm", endReason: "hangup", digest: digest, redactions: map[string]int{"phone": 1}}, events: c.seen()}
		p.id = waitRecord(t, base, "pcm").CallID
		p.api = apiRecord(t, base, p.id)
		checkRecord(t, p.api, p.events, p.want, red)
		if l := lineOf(p.api, records.SpeakerCaller, ep); l == nil || l.Text != "my number is [phone]" {
			t.Errorf("the said number's line: %+v, want it redacted", l)
		}
		calls = append(calls, p)
		figures["pcm"] = time.Since(t0)
	})
	t.Run("webrtc", func(t *testing.T) {
		t0 := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c, err := webrtctest.Dial(ctx, base+"/webrtc", webrtctest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.WaitConnected(ctx); err != nil {
			t.Fatal(err)
		}
		events := func() liveEvents { return c.Events() }
		greeted(t, events)
		answeredTurn(t, events, func(pcm []int16) {
			if err := c.Play(pcm, 16000); err != nil {
				t.Error(err)
			}
		}, question, "time")
		if err := c.Bye(); err != nil {
			t.Fatal(err)
		}
		p := &placed{want: wantRecord{transport: "webrtc", endReason: "hangup", digest: digest}}
		p.id = waitRecord(t, base, "webrtc").CallID
		p.events = events()
		if p.id != c.CallID() {
			t.Errorf("the record's call id %q, the caller's %q", p.id, c.CallID())
		}
		if err := c.Close(); err != nil {
			t.Error(err)
		}
		p.api = apiRecord(t, base, p.id)
		checkRecord(t, p.api, p.events, p.want, red)
		calls = append(calls, p)
		figures["webrtc"] = time.Since(t0)
	})
	t.Run("sip", func(t *testing.T) {
		t0 := time.Now()
		run := t.TempDir()
		// The greeting plays first (about 3 s); the question at 4.5 s;
		// RTP (silence after the question) for the whole call.
		writeRTPPcap(t, filepath.Join(run, "call.pcap"), append(append(silence(4.5), question...), silence(22)...))
		out, err := sippCall(t, run, sipAddr, sippCallScenario(typedNumber, 12000, 6000))
		if err != nil {
			t.Fatalf("sipp: %v\n%s\n%s", err, out, sippMessages(t, run))
		}
		// The typed number is withheld as key presses ([keys]), before
		// the redactor would see it as a phone.
		p := &placed{want: wantRecord{transport: "sip", endReason: "hangup", digest: digest, parties: true, redactions: map[string]int{"keys": 1}}}
		p.id = waitRecord(t, base, "sip").CallID
		p.api = apiRecord(t, base, p.id)
		checkRecord(t, p.api, nil, p.want, red)
		// The spoken question and the typed number, each a turn of its
		// own, the number redacted.
		var heard, typed *records.Line
		for i, l := range p.api.Transcript {
			switch {
			case l.Speaker == records.SpeakerCaller && strings.Contains(l.Text, "time"):
				heard = &p.api.Transcript[i]
			case l.Speaker == records.SpeakerCaller && l.Keys > 0:
				typed = &p.api.Transcript[i]
			}
		}
		if heard == nil || typed == nil || typed.Keys != len(typedNumber) || typed.Text != "The caller pressed [keys]" {
			t.Errorf("the caller's lines: %+v", p.api.Transcript)
		}
		// The server hashes a number given to the list's filter as it
		// hashed the From user.
		var l recordList
		recordsJSON(t, base, "/operator/records?caller="+url.QueryEscape(fromNumber), &l)
		if len(l.Records) != 1 || l.Records[0].CallID != p.id || l.Records[0].CallerHash != p.api.Caller.Hash {
			t.Errorf("the records of caller %s: %+v, want the SIP call's (hash %s)", "fromNumber", l.Records, p.api.Caller.Hash)
		}
		calls = append(calls, p)
		figures["sip"] = time.Since(t0)
	})
	if len(calls) == 0 {
		return
	}

	stopped = true
	if code := stop(); code != 0 {
		t.Errorf("serve exited with %d:\n%s", code, stderr)
	}
	// The node's SQLite file holds the same records.
	ctx := context.Background()
	st, err := sqlstore.Open(ctx, "sqlite:"+filepath.Join(dir, "records.db"))
	if err != nil {
		t.Fatal(err)
	}
	sums, err := st.List(ctx, records.Query{})
	if err != nil {
		t.Fatal(err)
	}
	if len(sums) != len(calls) {
		t.Errorf("%d records in the database, want %d: %+v", len(sums), len(calls), sums)
	}
	var secrets []string
	for _, p := range calls {
		rec, err := st.Get(ctx, p.id)
		if err != nil {
			t.Fatalf("%s: %v", p.id, err)
		}
		checkRecord(t, rec, p.events, p.want, red)
		a, _ := json.Marshal(p.api)
		b, _ := json.Marshal(rec)
		if !bytes.Equal(a, b) {
			t.Errorf("the API's record and the database's differ:\n%s\n%s", a, b)
		}
		for _, l := range rec.Transcript {
			if len(l.Text) > 12 {
				secrets = append(secrets, l.Text)
			}
		}
		for _, ev := range p.events.of("user_turn") {
			secrets = append(secrets, fmt.Sprint(ev["text"])) // as heard, unredacted
		}
	}
	if err := st.Close(); err != nil {
		t.Error(err)
	}
	numbers := []string{fromNumber, strings.TrimPrefix(fromNumber, "+"), typedNumber, strings.Join(strings.Split(typedNumber, ""), " "), saidNumber}
	notInFiles(t, dir, numbers...)
	log := stderr.String()
	for _, s := range append(numbers, secrets...) {
		if strings.Contains(log, s) {
			t.Errorf("the server's log holds %q", s)
		}
	}
	figures["total"] = time.Since(start)
	t.Logf("records of %d calls checked; times: %v", len(calls), figures)
	check()
}

// recordsCLI runs `brisvox records` in process with env as its
// environment and the real --db opener.
func recordsCLI(env map[string]string, args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = recordsWith(context.Background(), args, recordsEnv{
		callsEnv: callsEnv{stdout: &o, stderr: &e, lookupEnv: func(k string) (string, bool) {
			v, ok := env[k]
			return v, ok
		}},
		now: time.Now, openStore: openRecordsDB,
	})
	return code, o.String(), e.String()
}

// listedRow is the row of `brisvox records list` that starts with the
// call id's shown prefix, split into its columns.
func listedRow(t *testing.T, out, id string) []string {
	t.Helper()
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		if len(f) > 0 && (f[0] == id || strings.HasPrefix(id, strings.TrimSuffix(f[0], "…"))) && f[0] != "ID" {
			return f
		}
	}
	t.Fatalf("no row of call %s in:\n%s", id, out)
	return nil
}

// TestRecordsListCLI: after a call through `brisvox serve` (the PCM
// websocket, the keyless agent: the greeting, a question answered, the
// caller's hangup), `brisvox records list` shows it against the server's
// operator API (its transport, agent, end reason and turns), --json gives
// its summary, and --db on the node's records.db, once the node stopped,
// shows the same row. Mutation caught (seen failing): the keeper not
// wired in serve (no record: the list is empty and the row missing).
func TestRecordsListCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("a real-time call on loopback")
	}
	check := noLeaks(t)
	start := time.Now()
	question := say(t, "What time is it?")
	t.Setenv(recordsTokenEnv, recordsToken)
	dir := t.TempDir()
	base, stop, stderr := servedWith(t, serveFlags{agent: keyless(t), maxCalls: 2, drain: 2 * time.Second, sipAddr: "127.0.0.1:0",
		recordsDir: dir, operatorTokenEnv: recordsTokenEnv})
	c := dialKeptCaller(t, base)
	greeted(t, c.seen)
	answeredTurn(t, c.seen, c.play, question, "time")
	c.hangup(t)
	sum := waitRecord(t, base, "pcm")
	env := map[string]string{"BRISVOX_OPERATOR_TOKEN": recordsToken, "BRISVOX_OPERATOR_ADDR": base}
	code, out, errs := recordsCLI(env, "list")
	if code != 0 {
		t.Fatalf("records list: %d %q", code, errs)
	}
	checkColumns(t, out)
	row := listedRow(t, out, sum.CallID)
	want := []string{"pcm", "local", "hangup", "2", "1"}
	if len(row) < len(want) || !slices.Equal(row[len(row)-len(want):], want) || sum.Turns != 2 || sum.Tools != 1 {
		t.Errorf("records list's row %q, want it to end %q (2 turns: the greeting and the question's; its get_time call)", row, want)
	}
	code, js, errs := recordsCLI(env, "list", "--json", "--transport", "pcm", "--end-reason", "hangup")
	var l struct {
		Records []records.Summary `json:"records"`
	}
	if code != 0 || json.Unmarshal([]byte(js), &l) != nil || len(l.Records) != 1 || l.Records[0].CallID != sum.CallID || l.Records[0].Turns != sum.Turns {
		t.Errorf("records list --json: %d %q %q", code, js, errs)
	}
	if code, out, _ := recordsCLI(env, "list", "--end-reason", "node_crashed"); code != 0 || strings.Contains(out, sum.CallID[:8]) {
		t.Errorf("records list --end-reason node_crashed: %d %q", code, out)
	}
	if code := stop(); code != 0 {
		t.Errorf("serve exited with %d:\n%s", code, stderr)
	}
	// The stopped node's file, without the API.
	code, dbOut, errs := recordsCLI(nil, "list", "--db", filepath.Join(dir, "records.db"))
	if code != 0 {
		t.Fatalf("records list --db: %d %q", code, errs)
	}
	if got := listedRow(t, dbOut, sum.CallID); !slices.Equal(got, row) {
		t.Errorf("records list --db's row %q, the API's %q", got, row)
	}
	t.Logf("brisvox records list (%v):\n%s", time.Since(start).Round(time.Millisecond), out)
	check()
}
