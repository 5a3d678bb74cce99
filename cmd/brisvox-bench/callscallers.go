package main

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brisvox/brisvox/messages"
)

// calls-callers is the calls command's child: N scripted conversations
// over the PCM websocket, 16 kHz. It prints "hold-start" and "hold-end"
// as it measures, then one JSON line, callersOut.

// callerTurnRec is what a caller saw of one of its turns. Times are Unix
// nanoseconds: audio times on the caller's clock (base + seq*20 ms, the
// start of the frame's capture) and kernel receive times.
type callerTurnRec struct {
	K int `json:"k"`
	// StartNS and EndNS are the audio times of the utterance's first
	// and last sample.
	StartNS int64 `json:"start_ns"`
	EndNS   int64 `json:"end_ns"`
	// Epoch is the epoch of the server's user_turn event that followed
	// the utterance (0: none came).
	Epoch uint64 `json:"epoch"`
	// FirstNS is the kernel time of the first frame of the answer of
	// Epoch (0: none came); Frames counts the answer's frames.
	FirstNS int64 `json:"first_audio_ns"`
	Frames  int   `json:"frames"`
	// FirstMerged: the first frame's time is its successor's (merged),
	// an upper bound.
	FirstMerged bool `json:"first_merged,omitempty"`
	// StartSeq is the frame holding the utterance's first sample, EndSeq
	// its last. StopLateUS are how late (µs after their due time, the end
	// of their capture) the frames from EndSeq on were written, for
	// callsStopWindow frames; StartLateUS those from StartSeq on, for
	// callsStartWindow: the callers' own lateness, which the server sees
	// as audio arriving late.
	StartSeq    int64   `json:"start_seq"`
	EndSeq      int64   `json:"end_seq"`
	StopLateUS  []int32 `json:"stop_late_us"`
	StartLateUS []int32 `json:"start_late_us"`
	// Barge-in turns: Barge is "cut" (a clear came and the previous
	// answer stopped), "over" (that answer had ended before the caller
	// started), "not_cut" (it went on: a lost turn) or "no_answer";
	// CutLastNS is the cut answer's last frame (kernel time).
	Barge     string `json:"barge,omitempty"`
	CutLastNS int64  `json:"cut_last_ns,omitempty"`
	// LatencyMS is the server's own latency event for Epoch (end of
	// speech to first audio out).
	LatencyMS float64 `json:"server_latency_ms,omitempty"`
}

// callerRec is one caller's record.
type callerRec struct {
	Caller int `json:"caller"`
	// Port is the caller's local port: the server's listener saw its
	// frame 0 arrive.
	Port int `json:"port"`
	// BaseNS is the audio time of frame 0's start; Frame0NS when frame 0
	// was written (due: BaseNS + 20 ms).
	BaseNS   int64           `json:"base_ns"`
	Frame0NS int64           `json:"frame0_sent_ns"`
	Turns    []callerTurnRec `json:"turns"`
	// Stale counts bot frames that came after a clear and before the
	// next answer's first mark within 200 ms of the clear.
	Stale  int    `json:"stale_frames"`
	Errors int    `json:"error_messages"`
	End    string `json:"end,omitempty"`
}

// callersOut is the callers' process's report.
type callersOut struct {
	// Transport is "sip" for the SIP callers ("": the PCM websocket).
	Transport  string  `json:"transport,omitempty"`
	Calls      int     `json:"calls"`
	Connected  int     `json:"connected"`
	HoldFromNS int64   `json:"hold_from_ns"`
	HoldToNS   int64   `json:"hold_to_ns"`
	CPU        float64 `json:"callers_cpu_pct_of_core"`
	// Jitter is |arrival gap - 20 ms| between consecutive frames of an
	// answer during the hold, from kernel times.
	Jitter callsDist `json:"jitter_ms"`
	// Unstamped counts the gaps left out of Jitter: a frame's time was
	// its successor's (merged).
	Unstamped int `json:"unstamped_gaps"`
	// WriteErrors counts frames that could not be written (the call was
	// gone).
	WriteErrors int         `json:"write_errors"`
	Callers     []callerRec `json:"callers"`
	Error       string      `json:"error,omitempty"`
}

// ctlRec is a control message of the server, in order with the frames:
// a mark (epoch from its name) or a clear, after frame Frame-1.
type ctlRec struct {
	clear bool
	end   bool
	epoch uint64
	frame int
	at    int64
}

// userTurnRec is a user_turn event's epoch and arrival.
type userTurnRec struct {
	epoch uint64
	at    int64
}

// convCaller is one scripted conversation.
type convCaller struct {
	idx int
	ws  *wsClient
	// leg is the caller's SIP call (--transport sip; ws is nil then),
	// rate its audio's rate (0: 16 kHz).
	leg    *sipLeg
	rate   int
	script callScript
	speech [][]byte // the fixture's utterances, s16le
	// minSpeech is the VAD's start delay (the gate's MinSpeech, or the
	// energy VAD's StartAfter): a barge-in is decided that long after the
	// speech started.
	minSpeech time.Duration

	base    time.Time
	seq     int64 // frames sent
	frame0  time.Time
	silence []byte // 20 ms of silence, never written
	buf     []byte // the frame being sent
	// noise, when set, is added to every frame (speech and silence) from
	// the caller's own offset on: a line's noise floor (--noise-dbfs).
	noise    []int16
	noiseAt  int
	stopping atomic.Bool
	// maxTurns, when set, ends the call once that many turns were
	// answered (the soak's churn).
	maxTurns int

	// The send side's state (the shard's goroutine only).
	speaking  bool
	turn      int
	pos       int // bytes of the utterance sent
	startSeq  int64
	awaitFrom int64 // Unix ns the last utterance ended (0: none yet)
	// late is how late each frame was written (µs after its due time).
	late  []int32
	turns []callerTurnRec

	mu sync.Mutex // the reader's records
	// frames are the kernel times of the bot's frames.
	frames    []int64
	ctl       []ctlRec
	userTurns []userTurnRec
	latency   map[uint64]float64
	errors    int
	// ansStart and ansEnd: the answer after the last utterance began
	// (its first frame) and ended (its end mark), Unix ns.
	ansStart, ansEnd int64
	end              string
}

// The windows of frames whose write lateness a turn's record keeps:
// from the utterance's last frame through the hangover and the VAD's
// backlog (2 s: a loaded Silero pool decides late), and from its first
// frame through the start delay.
const (
	callsStopWindow  = 100
	callsStartWindow = 10
)

// lateWindow is the lateness of n frames from seq on (fewer at the end).
func (c *convCaller) lateWindow(seq int64, n int) []int32 {
	if seq < 0 || seq >= int64(len(c.late)) {
		return nil
	}
	return slices.Clone(c.late[seq:min(int(seq)+n, len(c.late))])
}

// tick sends the caller's next frame, at now.
func (c *convCaller) tick(now time.Time) error {
	if c.maxTurns > 0 && c.turn >= c.maxTurns && !c.speaking && c.lastAnswerOver(now) {
		return errCallDone
	}
	if !c.speaking && !c.stopping.Load() && c.turn < len(c.script.Turns) && c.startNow(now) {
		c.speaking, c.pos, c.startSeq = true, 0, c.seq
	}
	payload := c.silence
	if c.speaking || c.noise != nil {
		clear(c.buf)
		payload = c.buf
	}
	if c.speaking {
		u := c.speech[c.script.Turns[c.turn].Utt]
		n := copy(c.buf, u[c.pos:])
		c.pos += n
		if c.pos >= len(u) {
			c.speaking = false
			start := c.base.Add(time.Duration(c.startSeq) * messages.FrameDuration)
			end := start.Add(time.Duration(len(u)/2) * time.Second / time.Duration(cmp.Or(c.rate, 16000)))
			c.turns = append(c.turns, callerTurnRec{K: c.turn, StartNS: start.UnixNano(), EndNS: end.UnixNano(),
				StartSeq: c.startSeq, EndSeq: c.seq})
			c.turn++
			c.mu.Lock()
			c.awaitFrom, c.ansStart, c.ansEnd = end.UnixNano(), 0, 0
			c.mu.Unlock()
		}
	}
	if c.noise != nil {
		c.noiseAt = addNoise(c.buf, c.noise, c.noiseAt)
	}
	var err error
	if c.leg != nil {
		err = c.leg.send(payload)
	} else {
		err = c.ws.Write(wsBinary, payload)
	}
	sent := time.Now()
	if c.seq == 0 {
		c.frame0 = sent
	}
	due := c.base.Add(time.Duration(c.seq+1) * messages.FrameDuration)
	c.late = append(c.late, int32(min(sent.Sub(due).Microseconds(), math.MaxInt32)))
	c.seq++
	return err
}

// addNoise adds noise[at:] to the s16le frame b (saturating), wrapping
// around noise, and returns the next offset.
func addNoise(b []byte, noise []int16, at int) int {
	for i := 0; i+1 < len(b); i += 2 {
		v := int32(int16(binary.LittleEndian.Uint16(b[i:]))) + int32(noise[at])
		binary.LittleEndian.PutUint16(b[i:], uint16(int16(min(max(v, math.MinInt16), math.MaxInt16))))
		if at++; at == len(noise) {
			at = 0
		}
	}
	return at
}

// lineNoise is 10 s of seeded white Gaussian noise at an RMS of dBFS
// (dB of full scale, 32768): the callers' --noise-dbfs.
func lineNoise(seed uint64, dBFS float64) []int16 {
	r := rand.New(rand.NewPCG(seed, 0x6e6f697365))
	rms := 32768 * math.Pow(10, dBFS/20)
	n := make([]int16, 10*16000)
	for i := range n {
		n[i] = int16(min(max(math.Round(r.NormFloat64()*rms), math.MinInt16), math.MaxInt16))
	}
	return n
}

// errCallDone is a soak call's end: its turns are done.
var errCallDone = errors.New("the call's turns are done")

// lastAnswerOver says whether the answer to the last utterance has ended
// (or never came in 8 s).
func (c *convCaller) lastAnswerOver(now time.Time) bool {
	at := now.UnixNano()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ansStart == 0 {
		return at-c.awaitFrom > int64(8*time.Second)
	}
	if c.ansEnd == 0 && len(c.frames) > 0 && at-c.frames[len(c.frames)-1] > int64(500*time.Millisecond) {
		c.ansEnd = c.frames[len(c.frames)-1]
	}
	return c.ansEnd != 0 && at >= c.ansEnd+int64(300*time.Millisecond)
}

// startNow says whether the next turn starts with this frame.
func (c *convCaller) startNow(now time.Time) bool {
	t := c.script.Turns[c.turn]
	at := now.UnixNano()
	if c.turn == 0 {
		return now.Sub(c.base) >= c.script.Start
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.ansStart == 0:
		// No answer yet: give up on it after 8 s (a lost turn) and go on.
		return at-c.awaitFrom > int64(8*time.Second)+int64(t.Pause)
	case t.BargeIn:
		return at >= c.ansStart+int64(t.BargeAfter)
	}
	if c.ansEnd == 0 && len(c.frames) > 0 && at-c.frames[len(c.frames)-1] > int64(500*time.Millisecond) {
		c.ansEnd = c.frames[len(c.frames)-1] // no end mark: the audio stopped
	}
	return c.ansEnd != 0 && at >= c.ansEnd+int64(t.Pause)
}

// serverControl is a text message of the server.
type serverControl struct {
	Type string `json:"type"`
	Name string `json:"name"`
	Data struct {
		Kind      string  `json:"kind"`
		Epoch     uint64  `json:"epoch"`
		LatencyMS float64 `json:"latency_ms"`
	} `json:"data"`
}

// receive handles one message of the server (the reader's goroutine).
func (c *convCaller) receive(op byte, payload []byte, at time.Time) {
	ns := at.UnixNano()
	switch op {
	case wsBinary:
		c.mu.Lock()
		c.frames = append(c.frames, ns)
		if c.awaitFrom != 0 && c.ansStart == 0 && ns > c.awaitFrom {
			c.ansStart = ns
		}
		c.mu.Unlock()
	case wsText:
		var m serverControl
		if json.Unmarshal(payload, &m) != nil {
			return
		}
		switch m.Type {
		case "mark":
			// The caller plays what it gets as it comes: a mark's audio
			// has played when the mark arrives.
			echo, _ := json.Marshal(struct {
				Type string `json:"type"`
				Name string `json:"name"`
			}{"mark", m.Name})
			_ = c.ws.Write(wsText, echo)
			epoch, end, ok := markEpoch(m.Name)
			if !ok {
				return
			}
			c.mu.Lock()
			c.ctl = append(c.ctl, ctlRec{epoch: epoch, end: end, frame: len(c.frames), at: ns})
			if end && c.ansStart != 0 {
				c.ansEnd = ns
			}
			c.mu.Unlock()
		case "clear":
			c.mu.Lock()
			c.ctl = append(c.ctl, ctlRec{clear: true, frame: len(c.frames), at: ns})
			c.mu.Unlock()
		case "event":
			c.mu.Lock()
			switch m.Data.Kind {
			case "user_turn":
				c.userTurns = append(c.userTurns, userTurnRec{epoch: m.Data.Epoch, at: ns})
			case "latency":
				c.latency[m.Data.Epoch] = m.Data.LatencyMS
			}
			c.mu.Unlock()
		case "error":
			c.mu.Lock()
			c.errors++
			c.mu.Unlock()
		}
	}
}

// markEpoch reads the epoch of the pacer's mark names, "pos-<epoch>-<ms>"
// and "end-<epoch>".
func markEpoch(name string) (epoch uint64, end, ok bool) {
	switch {
	case strings.HasPrefix(name, "end-"):
		e, err := strconv.ParseUint(name[4:], 10, 64)
		return e, true, err == nil
	case strings.HasPrefix(name, "pos-"):
		e, _, found := strings.Cut(name[4:], "-")
		if !found {
			return 0, false, false
		}
		n, err := strconv.ParseUint(e, 10, 64)
		return n, false, err == nil
	}
	return 0, false, false
}

// frameEpochs gives each frame the epoch of the mark that follows it;
// frames a clear cut before their mark came take the epoch of the mark
// before them when that was a position within the same answer (0 when
// unknown).
func frameEpochs(n int, ctl []ctlRec) []uint64 {
	out := make([]uint64, n)
	from := 0
	var last ctlRec
	for _, m := range ctl {
		to := min(m.frame, n)
		var e uint64
		switch {
		case !m.clear:
			e = m.epoch
		case !last.clear && !last.end:
			e = last.epoch
		}
		for i := from; i < to; i++ {
			out[i] = e
		}
		from = max(from, to)
		last = m
	}
	return out
}

// analyse fills the turn records from what was received; jitter gets
// the gaps of answers whose frames fall in [from, to], unstamped counts
// those left out because a frame's time is not its own (merged).
func (c *convCaller) analyse(from, to int64, jitter *[]float64, unstamped *int) callerRec {
	c.mu.Lock()
	defer c.mu.Unlock()
	rec := callerRec{Caller: c.idx, Port: c.ws.local, BaseNS: c.base.UnixNano(), Frame0NS: c.frame0.UnixNano(), Errors: c.errors, End: c.end}
	epochs := frameEpochs(len(c.frames), c.ctl)
	spans := map[uint64]*frameSpan{}
	for i, e := range epochs {
		if e == 0 {
			continue
		}
		s := spans[e]
		if s == nil {
			s = &frameSpan{first: i}
			spans[e] = s
		} else if f := c.frames[i]; f >= from && f <= to && epochs[i-1] == e {
			if merged(c.frames, i-1) || merged(c.frames, i) {
				*unstamped++
				s.last, s.n = i, s.n+1
				continue
			}
			d := float64(f-c.frames[i-1])/1e6 - 20
			*jitter = append(*jitter, max(d, -d))
			if debugCalls && max(d, -d) > 10 {
				var ctx []string
				for j := max(s.first, i-4); j <= min(i+4, len(c.frames)-1); j++ {
					ctx = append(ctx, fmt.Sprintf("%.1f", float64(c.frames[j]-c.frames[s.first])/1e6))
				}
				fmt.Fprintf(os.Stderr, "gap caller %d e%d frame %d (%d of the answer): %.1f ms; arrivals %v\n", c.idx, e, i, i-s.first, d+20, ctx)
			}
		}
		s.last, s.n = i, s.n+1
	}
	// Stale audio: frames within 200 ms after a clear.
	for _, m := range c.ctl {
		if !m.clear {
			continue
		}
		for i := m.frame; i < len(c.frames) && c.frames[i]-m.at < int64(200*time.Millisecond); i++ {
			rec.Stale++
		}
	}
	for j := range c.turns {
		t := &c.turns[j]
		next := int64(1<<63 - 1)
		if j+1 < len(c.turns) {
			next = c.turns[j+1].StartNS
		}
		for _, u := range c.userTurns {
			if u.at > t.EndNS && u.at < next {
				t.Epoch = u.epoch
				break
			}
		}
		if s := spans[t.Epoch]; t.Epoch != 0 && s != nil {
			t.FirstNS, t.Frames, t.FirstMerged = c.frames[s.first], s.n, merged(c.frames, s.first)
		}
		t.LatencyMS = c.latency[t.Epoch]
		t.StopLateUS, t.StartLateUS = c.lateWindow(t.EndSeq, callsStopWindow), c.lateWindow(t.StartSeq, callsStartWindow)
		if c.script.Turns[t.K].BargeIn {
			t.Barge, t.CutLastNS = c.bargeIn(j, spans)
		}
		rec.Turns = append(rec.Turns, *t)
	}
	return rec
}

// debugCalls prints the callers' barge-ins and big gaps to stderr.
var debugCalls = os.Getenv("BRISVOX_CALLS_DEBUG") != ""

// shardBase is the audio time of frame 0 of a caller joining, at now, a
// shard that ticks at start + k*20 ms (k >= 1): frame 0 goes with the
// next tick and its capture began 20 ms before.
func shardBase(start, now time.Time) time.Time {
	k := time.Duration(1)
	if d := now.Sub(start); d > 0 {
		k = d/messages.FrameDuration + 1
	}
	return start.Add((k - 1) * messages.FrameDuration)
}

// frameEpoch is frame i's epoch (debug output only).
func (c *convCaller) frameEpoch(i int) uint64 { return frameEpochs(len(c.frames), c.ctl)[i] }

// merged says frame i's time is not its own: the next frame has the very
// same kernel time, which two segments written apart never share. TCP
// merged them while they waited for a late read, and the merged segment
// keeps the newest one's time: frame i came at that time or before.
func merged(frames []int64, i int) bool { return i+1 < len(frames) && frames[i+1] == frames[i] }

// frameSpan is an answer's frames: the first and last index, the count.
type frameSpan struct{ first, last, n int }

// bargeIn judges barge-in turn j against the answer of the turn before.
// The records of turn j-1 are analysed already.
func (c *convCaller) bargeIn(j int, spans map[uint64]*frameSpan) (string, int64) {
	if j == 0 || c.turns[j-1].Epoch == 0 {
		return "no_answer", 0
	}
	prev := c.turns[j-1].Epoch
	s := spans[prev]
	if s == nil {
		return "no_answer", 0
	}
	last := c.frames[s.last]
	decided := c.turns[j].StartNS + int64(c.minSpeech)
	for _, m := range c.ctl {
		if m.end && m.epoch == prev && m.at < decided {
			return "over", 0 // it played to its end before the caller spoke
		}
	}
	if debugCalls {
		st := c.turns[j].StartNS
		var fr []string
		for i := max(s.first, s.last-4); i <= min(s.last+3, len(c.frames)-1); i++ {
			fr = append(fr, fmt.Sprintf("%d:e%d@%.1f", i, c.frameEpoch(i), float64(c.frames[i]-st)/1e6))
		}
		var ctl []string
		for _, m := range c.ctl {
			if m.at > st-int64(300*time.Millisecond) && m.at < st+int64(500*time.Millisecond) {
				ctl = append(ctl, fmt.Sprintf("clear=%v end=%v e%d f%d @%.1f", m.clear, m.end, m.epoch, m.frame, float64(m.at-st)/1e6))
			}
		}
		fmt.Fprintf(os.Stderr, "barge caller %d turn %d prev e%d decided +%.1f ms; frames %v; ctl %v\n", c.idx, c.turns[j].K, prev, float64(decided-st)/1e6, fr, ctl)
	}
	for _, m := range c.ctl {
		if m.clear && m.frame > s.first && m.frame <= s.last+1 && m.at >= c.turns[j].StartNS {
			return "cut", last
		}
	}
	return "not_cut", last
}

// callsCallers runs the calls' callers.
func callsCallers(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("calls-callers", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "", "the server's host:port")
	path := fs.String("path", "/pcm", "the PCM websocket's path")
	calls := fs.Int("calls", 8, "conversations")
	seed := fs.Uint64("seed", 1, "the scripts' seed")
	warmup := fs.Duration("warmup", 10*time.Second, "time after the last call connected before measuring")
	hold := fs.Duration("hold", 60*time.Second, "the measured time")
	tail := fs.Duration("tail", 5*time.Second, "time after the hold for the last turns' answers (no turn starts)")
	ramp := fs.Duration("ramp", 20*time.Millisecond, "time between two calls' connects")
	fixture := fs.String("fixture", "", "the speech fixture (base path of .wav and .json)")
	turns := fs.Int("turns", 40, "turns in each script (the server's agent draws as many)")
	minSpeech := fs.Duration("min-speech", 64*time.Millisecond, "the VAD's start delay")
	noiseDB := fs.Float64("noise-dbfs", 0, "white noise at this RMS (dBFS, below 0) added to every frame; 0: none")
	transport := fs.String("transport", "pcm", "pcm (the PCM websocket at --addr, 16 kHz) or sip (a SIP UAC a caller to --addr over UDP, PCMU RTP at 8 kHz)")
	if err := fs.Parse(args); err != nil || *addr == "" || *calls <= 0 || *fixture == "" || *noiseDB > 0 || (*transport != "pcm" && *transport != "sip") {
		return 2
	}
	sipMode := *transport == "sip"
	var sipServer netip.AddrPort
	if sipMode {
		ap, err := netip.ParseAddrPort(*addr)
		if err != nil {
			fmt.Fprintln(stderr, "calls-callers: --addr:", err)
			return 2
		}
		sipServer = ap
	}
	var noise []int16
	if *noiseDB < 0 {
		noise = lineNoise(*seed, *noiseDB)
	}
	out := callersOut{Calls: *calls}
	emit := func() int {
		b, _ := json.Marshal(out)
		fmt.Fprintln(stdout, string(b))
		if out.Error != "" {
			return 1
		}
		return 0
	}
	fx, err := loadCallFixture(*fixture)
	if err != nil {
		out.Error = err.Error()
		return emit()
	}
	speech, rate, frameBytes := speechBytes(fx), 16000, 640
	if sipMode {
		out.Transport = "sip"
		if speech, err = decimateSpeech(fx); err != nil {
			out.Error = err.Error()
			return emit()
		}
		rate, frameBytes = callsSIPRate, 2*callsSIPRate/50
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var sendErrs atomic.Int64
	shards := startCallerShards(*calls, func(_ *callerShard, cs []*convCaller, now time.Time) {
		for _, c := range cs {
			if c.tick(now) != nil {
				sendErrs.Add(1)
			}
		}
	})
	cs := make([]*convCaller, 0, *calls)
	var readers sync.WaitGroup
	for i := range *calls {
		c := &convCaller{idx: i, script: newCallScript(*seed, i, len(fx.Texts), *turns), speech: speech, rate: rate,
			minSpeech: *minSpeech, silence: make([]byte, frameBytes), buf: make([]byte, frameBytes), latency: map[uint64]float64{},
			noise: noise, noiseAt: i * 7919 % max(len(noise), 1)}
		if sipMode {
			dctx, dcancel := context.WithTimeout(ctx, sipCallersTimeout)
			leg, err := dialSIPLeg(dctx, i, sipServer, *seed, func(at time.Time) { c.receive(wsBinary, nil, at) })
			dcancel()
			if err != nil {
				out.Error = fmt.Sprintf("call %d: %v", i, err)
				break
			}
			c.leg = leg
		} else {
			dctx, dcancel := context.WithTimeout(ctx, 10*time.Second)
			ws, err := dialWS(dctx, *addr, *path+"?rate=16000&caller="+strconv.Itoa(i))
			dcancel()
			if err != nil {
				out.Error = fmt.Sprintf("call %d: %v", i, err)
				break
			}
			c.ws = ws
			readers.Go(func() {
				err := ws.Run(c.receive)
				c.mu.Lock()
				if err != nil {
					c.end = err.Error()
				}
				c.mu.Unlock()
			})
		}
		shards.add(i, c)
		cs = append(cs, c)
		out.Connected++
		time.Sleep(*ramp)
	}
	finish := func() {
		for _, c := range cs {
			c.stopping.Store(true)
		}
		shards.stopAll()
		if sipMode {
			// Every caller hangs up (BYE) at once and waits for its 200.
			var byes sync.WaitGroup
			for _, c := range cs {
				byes.Go(func() {
					if err := c.leg.bye(ctx); err != nil {
						c.mu.Lock()
						c.end = err.Error()
						c.mu.Unlock()
					}
					c.leg.close()
				})
			}
			byes.Wait()
			return
		}
		for _, c := range cs {
			_ = c.ws.Write(wsText, []byte(`{"type":"hangup"}`))
		}
		done := make(chan struct{})
		go func() { readers.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			for _, c := range cs {
				_ = c.ws.Close()
			}
			<-done
		}
		for _, c := range cs {
			_ = c.ws.Close()
		}
	}
	if out.Error != "" {
		finish()
		return emit()
	}
	time.Sleep(*warmup)
	from, cpu0 := time.Now(), cpuTime()
	fmt.Fprintln(stdout, "hold-start")
	time.Sleep(*hold)
	to, cpu1 := time.Now(), cpuTime()
	fmt.Fprintln(stdout, "hold-end")
	for _, c := range cs {
		c.stopping.Store(true) // no turn starts; those under way end
	}
	time.Sleep(*tail)
	fmt.Fprintln(stdout, "hangup")
	finish()
	out.CPU = 100 * float64(cpu1-cpu0) / float64(to.Sub(from))
	out.HoldFromNS, out.HoldToNS = from.UnixNano(), to.UnixNano()
	var jitter []float64
	for _, c := range cs {
		if sipMode {
			out.Callers = append(out.Callers, c.analyseSIP(out.HoldFromNS, out.HoldToNS, &jitter))
			continue
		}
		out.Callers = append(out.Callers, c.analyse(out.HoldFromNS, out.HoldToNS, &jitter, &out.Unstamped))
	}
	out.Jitter = newCallsDist(jitter)
	out.WriteErrors = int(sendErrs.Load()) // calls the server ended early: the parent says why
	return emit()
}
