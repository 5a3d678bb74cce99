package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/coder/websocket"
)

// The latency command: a caller over the PCM websocket that speaks in real
// time and measures, for each of its turns, the time from the last sample
// of its speech it sent to the first sound of the answer it received.
//
// Time is the caller's own clock. Frame k is due at the call's start plus
// k x 20 ms and is taken to hold the audio that ended then, as a
// microphone's frame does; a frame received at t starts playing at t (no jitter
// buffer). Sound is a sample of magnitude at least soundLevel (-40 dBFS)
// both ways: the end of speech is the utterance's last such sample, the
// first audio of the answer the first such sample received after it.

// soundLevel is the magnitude from which a sample counts as sound.
const soundLevel = 328 // -40 dBFS of 32767

// latencyRate is the call's sample rate; frameSamples one frame of it.
const (
	latencyRate  = 16000
	frameSamples = latencyRate / 50
)

// latencyKind is a kind of turn: the phrases it says in turn and the tool
// its answer should call ("" for none).
type latencyKind struct {
	Name    string
	Phrases []string
	Tool    string
}

// latencyKinds are the turns measured: plain questions and a tool turn.
var latencyKinds = []latencyKind{
	{Name: "plain", Phrases: []string{"hello", "what can you do"}},
	{Name: "tool", Phrases: []string{"what time is it"}, Tool: "get_time"},
}

// latencyConfig is what one latency run needs.
type latencyConfig struct {
	Brisvox string
	Agent   string
	Turns   int    // per kind
	Voice   string // the flite voice the caller speaks with
	// Pause is the silence after an answer ended before the next turn.
	Pause time.Duration
	// AnswerTimeout bounds the wait for an answer's first sound, and
	// again for its end.
	AnswerTimeout time.Duration
	Log           io.Writer // the child's stderr lines, when set
	Progress      io.Writer // a line per turn, when set
}

// latencyReport is one run's result.
type latencyReport struct {
	Date  string        `json:"date"`
	Agent string        `json:"agent"`
	Voice string        `json:"voice"`
	Kinds []kindSummary `json:"kinds"`
	Turns []turnResult  `json:"turns"`
	Error string        `json:"error,omitempty"`
}

// kindSummary is one kind's figures over its answered turns, in ms.
type kindSummary struct {
	Kind     string `json:"kind"`
	Turns    int    `json:"turns"`
	Answered int    `json:"answered"`
	ToolRan  int    `json:"tool_ran,omitempty"` // answers that called the kind's tool
	// Unheard counts the turns whose speech the server's VAD did not
	// report (no speech start).
	Unheard int     `json:"unheard"`
	Median  float64 `json:"median_ms"`
	P90     float64 `json:"p90_ms"`
	Min     float64 `json:"min_ms"`
	Max     float64 `json:"max_ms"`
	// Server is the median of the server's own latency event (from its
	// backdated end of speech to its first audio out).
	Server float64 `json:"server_median_ms"`
	// Stages are the medians of the stages' shares of the server's
	// latency (its latency event's stages).
	Stages map[string]float64 `json:"stage_medians_ms,omitempty"`
}

// turnResult is one turn.
type turnResult struct {
	Kind   string `json:"kind"`
	Phrase string `json:"phrase"`
	// Heard is the transcript the server answered (the user_turn event).
	Heard string `json:"heard,omitempty"`
	// Spoke counts the server's speech starts (user_speaking events)
	// before the turn: 0 for speech the VAD did not hear, 1 or more with
	// no Heard for speech it heard but made no turn of.
	Spoke int      `json:"speech_starts"`
	Epoch uint64   `json:"epoch,omitempty"`
	Tools []string `json:"tools,omitempty"`
	// LatencyMS is the caller's measure; 0 with Answered false.
	Answered  bool    `json:"answered"`
	LatencyMS float64 `json:"latency_ms,omitempty"`
	ServerMS  float64 `json:"server_latency_ms,omitempty"`
	// Stages splits ServerMS by the stage that took it (the latency
	// event's stages: messages.TurnStage), when the server sent them.
	Stages map[string]float64 `json:"stages_ms,omitempty"`
}

// stageNames are the stages of the server's latency event, in turn order:
// listen (the end of speech to the recognizer's final: the VAD's hangover
// and the final decode), end_of_turn (the end-of-turn wait), think (to
// the model's first token), tools (the first tool round), voice (to the
// first synthesised audio) and send (to the first audio out).
var stageNames = []string{"listen", "end_of_turn", "think", "tools", "voice", "send"}

// latency measures the keyless agent's turn latency through the PCM
// websocket of a brisvox serve child.
func latency(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("latency", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg latencyConfig
	fs.StringVar(&cfg.Brisvox, "brisvox", "", "the brisvox binary to serve with (go build -o first); required")
	fs.StringVar(&cfg.Agent, "agent", "examples/agents/local.toml", "the agent file the child serves (it must serve PCM at 16 kHz)")
	fs.IntVar(&cfg.Turns, "turns", 20, "turns per kind (plain, tool), interleaved")
	fs.StringVar(&cfg.Voice, "voice", "slt", "the flite voice the caller speaks with")
	fs.DurationVar(&cfg.Pause, "pause", time.Second, "silence after an answer before the next turn")
	fs.DurationVar(&cfg.AnswerTimeout, "answer-timeout", 10*time.Second, "wait for an answer's first sound, and again for its end")
	childLog := fs.String("child-log", "", "append the child's log lines to this file")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		return 2
	}
	switch {
	case cfg.Brisvox == "":
		fmt.Fprintln(stderr, "brisvox-bench: latency needs --brisvox PATH (go build -o bin/brisvox ./cmd/brisvox)")
		return 2
	case cfg.Turns <= 0 || cfg.Pause < 0 || cfg.AnswerTimeout <= 0:
		fmt.Fprintln(stderr, "brisvox-bench: latency: --turns and --answer-timeout must be positive, --pause not negative")
		return 2
	}
	logFile, err := openChildLog(*childLog)
	if err != nil {
		fmt.Fprintln(stderr, "brisvox-bench:", err)
		return 1
	}
	if logFile != nil {
		defer logFile.Close()
		cfg.Log = logFile
	}
	cfg.Progress = stderr
	rep, err := runLatency(context.Background(), cfg)
	code := 0
	if err != nil {
		fmt.Fprintf(stderr, "brisvox-bench: latency: %v\n", err)
		rep.Error, code = err.Error(), 1
	}
	if *asJSON {
		b, _ := json.MarshalIndent(rep, "", "  ")
		fmt.Fprintln(stdout, string(b))
	} else if err == nil {
		printLatency(stdout, rep)
	}
	return code
}

func printLatency(w io.Writer, r latencyReport) {
	fmt.Fprintf(w, "latency: %s, caller voice %s, end of speech to first audio over the PCM websocket (%s)\n", r.Agent, r.Voice, r.Date)
	fmt.Fprintf(w, "  %-6s %5s %8s %7s %5s %7s %7s %7s %7s %7s\n", "kind", "turns", "answered", "unheard", "tool", "median", "p90", "min", "max", "server")
	for _, k := range r.Kinds {
		tool := "-"
		if k.Kind != "plain" {
			tool = fmt.Sprint(k.ToolRan)
		}
		fmt.Fprintf(w, "  %-6s %5d %8d %7d %5s %7.0f %7.0f %7.0f %7.0f %7.0f\n", k.Kind, k.Turns, k.Answered, k.Unheard, tool, k.Median, k.P90, k.Min, k.Max, k.Server)
	}
	fmt.Fprintf(w, "  the server's latency by stage, median ms:\n  %-6s", "kind")
	for _, s := range stageNames {
		fmt.Fprintf(w, " %11s", s)
	}
	fmt.Fprintln(w)
	for _, k := range r.Kinds {
		fmt.Fprintf(w, "  %-6s", k.Kind)
		for _, s := range stageNames {
			if v, ok := k.Stages[s]; ok {
				fmt.Fprintf(w, " %11.0f", v)
			} else {
				fmt.Fprintf(w, " %11s", "-")
			}
		}
		fmt.Fprintln(w)
	}
}

// utterance is a phrase as the caller says it: 16 kHz PCM16 up to its last
// sound (the synthesizer's trailing pause cut), whole frames, silence
// padded after the end.
type utterance struct {
	kind, phrase string
	frames       [][]byte
	// endFrame and endSample locate the last sound: frame endFrame,
	// sample endSample of it.
	endFrame, endSample int
}

// newUtterance frames pcm, cut after its last sound. It fails when pcm
// holds no sound.
func newUtterance(kind, phrase string, pcm []int16) (*utterance, error) {
	last := -1
	for i, v := range pcm {
		if abs16(v) >= soundLevel {
			last = i
		}
	}
	if last < 0 {
		return nil, fmt.Errorf("%w: %q: no sound in the synthesized audio", ErrSpeech, phrase)
	}
	pcm = pcm[:last+1]
	u := &utterance{kind: kind, phrase: phrase, endFrame: last / frameSamples, endSample: last % frameSamples}
	for at := 0; at < len(pcm); at += frameSamples {
		f := make([]byte, 2*frameSamples)
		for i, v := range pcm[at:min(at+frameSamples, len(pcm))] {
			binary.LittleEndian.PutUint16(f[2*i:], uint16(v))
		}
		u.frames = append(u.frames, f)
	}
	return u, nil
}

func abs16(v int16) int {
	if v < 0 {
		return -int(v)
	}
	return int(v)
}

// firstSound is the index of the first sample of a PCM16 frame that is
// sound, or -1.
func firstSound(frame []byte) int {
	for i := 0; i+1 < len(frame); i += 2 {
		if abs16(int16(binary.LittleEndian.Uint16(frame[i:]))) >= soundLevel {
			return i / 2
		}
	}
	return -1
}

// synthesize speaks text with the flite command's voice into 16 kHz PCM.
func synthesize(ctx context.Context, dir, voice, text string) ([]int16, error) {
	path := filepath.Join(dir, "utterance.wav")
	if out, err := exec.CommandContext(ctx, "flite", "-voice", voice, "-t", text, "-o", path).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%w: flite: %w: %s", ErrSpeech, err, strings.TrimSpace(string(out)))
	}
	b, err := loadSpeech(path)
	if err != nil {
		return nil, err
	}
	pcm := make([]int16, len(b)/2)
	for i := range pcm {
		pcm[i] = int16(binary.LittleEndian.Uint16(b[2*i:]))
	}
	return pcm, nil
}

// runLatency serves the agent on a child and runs the turns.
func runLatency(ctx context.Context, cfg latencyConfig) (latencyReport, error) {
	rep := latencyReport{Date: time.Now().UTC().Format("2006-01-02"), Agent: cfg.Agent, Voice: cfg.Voice}
	dir, err := os.MkdirTemp("", "latency")
	if err != nil {
		return rep, err
	}
	defer os.RemoveAll(dir)
	var plan []*utterance
	said := map[string]*utterance{}
	for i := range cfg.Turns {
		for _, k := range latencyKinds {
			p := k.Phrases[i%len(k.Phrases)]
			u, ok := said[p]
			if !ok {
				pcm, err := synthesize(ctx, dir, cfg.Voice, p)
				if err != nil {
					return rep, err
				}
				if u, err = newUtterance(k.Name, p, pcm); err != nil {
					return rep, err
				}
				said[p] = u
			}
			plan = append(plan, u)
		}
	}
	ch, err := startChild(ctx, cfg.Brisvox, cfg.Agent, 4, false, cfg.Log)
	if err != nil {
		return rep, err
	}
	defer ch.stop()
	c, err := dialCaller(ctx, ch.base)
	if err != nil {
		return rep, err
	}
	defer c.close()
	if err := c.greeting(cfg.AnswerTimeout); err != nil {
		return rep, err
	}
	for i, u := range plan {
		r, err := c.turn(u, cfg)
		if err != nil {
			return rep, err
		}
		rep.Turns = append(rep.Turns, r)
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "turn %d/%d %s: answered %v, %.0f ms\n", i+1, len(plan), u.kind, r.Answered, r.LatencyMS)
		}
	}
	c.hangup()
	rep.Kinds = summarize(rep.Turns)
	return rep, nil
}

// summarize gives each kind's figures, in the order of latencyKinds.
func summarize(turns []turnResult) []kindSummary {
	var out []kindSummary
	for _, k := range latencyKinds {
		s := kindSummary{Kind: k.Name, Stages: map[string]float64{}}
		var lat, srv []float64
		stages := map[string][]float64{}
		for _, t := range turns {
			if t.Kind != k.Name {
				continue
			}
			s.Turns++
			if t.Spoke == 0 {
				s.Unheard++
			}
			if k.Tool != "" && slices.Contains(t.Tools, k.Tool) {
				s.ToolRan++
			}
			if !t.Answered {
				continue
			}
			s.Answered++
			lat = append(lat, t.LatencyMS)
			if t.ServerMS > 0 {
				srv = append(srv, t.ServerMS)
			}
			for name, v := range t.Stages {
				stages[name] = append(stages[name], v)
			}
		}
		if len(lat) > 0 {
			slices.Sort(lat)
			s.Median, s.P90, s.Min, s.Max = quantile(lat, 0.5), quantile(lat, 0.9), lat[0], lat[len(lat)-1]
		}
		s.Server = quantile(srv, 0.5)
		for name, v := range stages {
			s.Stages[name] = quantile(v, 0.5)
		}
		out = append(out, s)
	}
	return out
}

// quantile is the q-quantile of v by the nearest rank (the smallest value
// with at least q of the values at or below it); 0 for no values. v is
// sorted in place.
func quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	i := int(math.Ceil(q*float64(len(v)))) - 1
	return v[min(max(i, 0), len(v)-1)]
}

// caller is the PCM websocket client: one goroutine reads (stamping each
// message's arrival), the caller's methods write in real time.
type caller struct {
	ws     *websocket.Conn
	cancel context.CancelFunc
	in     chan received
	done   chan struct{}
	silent []byte
	// next is when the next frame is due: frame k at the call's start
	// plus k x 20 ms. A frame sent late is followed by the next one at
	// once, so the audio sent keeps up with the wall clock (a
	// time.Ticker drops the ticks a busy reader misses, and the server,
	// whose clock is the frames' count, would fall behind).
	next  time.Time
	timer *time.Timer
}

// received is one message of the server, stamped on arrival.
type received struct {
	at    time.Time
	sound int // audio: the first sample that is sound, -1 for none
	audio bool
	ev    *wireEvent
	mark  string
	err   error
}

// wireEvent is the part of a live event the caller reads (the shape of
// cmd/internal/serve's Event).
type wireEvent struct {
	Kind      string  `json:"kind"`
	Epoch     uint64  `json:"epoch"`
	Text      string  `json:"text"`
	State     string  `json:"state"`
	LatencyMS float64 `json:"latency_ms"`
	Stages    []struct {
		Name string  `json:"name"`
		MS   float64 `json:"ms"`
	} `json:"stages"`
}

func dialCaller(ctx context.Context, base string) (*caller, error) {
	ctx, cancel := context.WithCancel(ctx)
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/pcm?rate=16000", &websocket.DialOptions{HTTPClient: hc})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("%w: dial the PCM websocket: %w", ErrCall, err)
	}
	ws.SetReadLimit(1 << 20)
	c := &caller{ws: ws, cancel: cancel, in: make(chan received, 4096), done: make(chan struct{}),
		silent: make([]byte, 2*frameSamples), next: time.Now(), timer: time.NewTimer(0)}
	go c.read(ctx) // waited for in close
	return c, nil
}

func (c *caller) read(ctx context.Context) {
	defer close(c.done)
	for {
		typ, b, err := c.ws.Read(ctx)
		now := time.Now()
		if err != nil {
			c.in <- received{at: now, err: err}
			return
		}
		if typ == websocket.MessageBinary {
			c.in <- received{at: now, audio: true, sound: firstSound(b)}
			continue
		}
		var m struct {
			Type string          `json:"type"`
			Name string          `json:"name"`
			Data json.RawMessage `json:"data"`
		}
		if json.Unmarshal(b, &m) != nil {
			continue
		}
		switch m.Type {
		case "mark":
			c.in <- received{at: now, mark: m.Name}
		case "event":
			var ev wireEvent
			if json.Unmarshal(m.Data, &ev) == nil {
				c.in <- received{at: now, ev: &ev}
			}
		}
	}
}

// send writes one frame when it is due, taking in what arrived meanwhile
// (marks are echoed: the caller plays what it receives as it comes). It
// returns when the frame went out, with the time it was due: the end of
// its audio on the caller's clock, as a microphone's frame is full then
// (a frame the caller itself sent late does not shorten the latency).
func (c *caller) send(frame []byte, take func(received) error) (time.Time, error) {
	c.timer.Reset(time.Until(c.next))
	for {
		select {
		case r := <-c.in:
			if r.err != nil {
				return time.Time{}, fmt.Errorf("%w: the server closed it: %w", ErrCall, r.err)
			}
			if r.mark != "" {
				b, _ := json.Marshal(map[string]string{"type": "mark", "name": r.mark})
				if err := c.ws.Write(context.Background(), websocket.MessageText, b); err != nil {
					return time.Time{}, err
				}
				continue
			}
			if err := take(r); err != nil {
				return time.Time{}, err
			}
		case <-c.timer.C:
			at := c.next
			c.next = c.next.Add(20 * time.Millisecond)
			if err := c.ws.Write(context.Background(), websocket.MessageBinary, frame); err != nil {
				return time.Time{}, err
			}
			return at, nil
		}
	}
}

// errStop ends a wait early; it is not an error of the call.
var errStop = errors.New("stop")

// silence streams silence until take returns errStop or timeout passes
// (false). take also gets an empty message after each frame sent (no
// audio, no event), so that a wait for quiet ends while nothing comes.
func (c *caller) silence(timeout time.Duration, take func(received) error) (bool, error) {
	end := time.Now().Add(timeout)
	for time.Now().Before(end) {
		_, err := c.send(c.silent, take)
		if err == nil {
			err = take(received{at: time.Now(), sound: -1})
		}
		if errors.Is(err, errStop) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
	}
	return false, nil
}

// quietFor is how long no sound must come before an answer counts as
// ended, once the server said it is done.
const quietFor = 400 * time.Millisecond

// greeting waits for the greeting to play out.
func (c *caller) greeting(timeout time.Duration) error {
	var done bool
	var lastSound time.Time
	ok, err := c.silence(3*timeout, func(r received) error {
		switch {
		case r.audio && r.sound >= 0:
			lastSound = r.at
		case r.ev != nil && r.ev.Kind == "bot_done":
			done = true
		}
		if done && !lastSound.IsZero() && time.Since(lastSound) > quietFor {
			return errStop
		}
		return nil
	})
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: the greeting did not play out", ErrCall)
	}
	return nil
}

// turn says u and measures the answer.
func (c *caller) turn(u *utterance, cfg latencyConfig) (turnResult, error) {
	r := turnResult{Kind: u.kind, Phrase: u.phrase}
	var end, first, lastSound time.Time
	done := false
	take := func(m received) error {
		switch {
		case m.audio && m.sound >= 0 && !end.IsZero():
			if first.IsZero() {
				first = m.at.Add(time.Duration(m.sound) * time.Second / latencyRate)
			}
			lastSound = m.at
		case m.ev == nil:
		case m.ev.Kind == "user_speaking" && r.Epoch == 0:
			r.Spoke++
		case m.ev.Kind == "user_turn" && r.Epoch == 0:
			r.Epoch, r.Heard = m.ev.Epoch, m.ev.Text
		case m.ev.Epoch != r.Epoch || r.Epoch == 0:
		case m.ev.Kind == "tool" && !slices.Contains(r.Tools, m.ev.Text):
			// A call's events (running, then done) name it once here.
			r.Tools = append(r.Tools, m.ev.Text)
		case m.ev.Kind == "latency":
			r.ServerMS = m.ev.LatencyMS
			for _, st := range m.ev.Stages {
				if r.Stages == nil {
					r.Stages = map[string]float64{}
				}
				r.Stages[st.Name] += st.MS
			}
		case m.ev.Kind == "bot_done":
			done = true
		}
		if done && !lastSound.IsZero() && time.Since(lastSound) > quietFor {
			return errStop
		}
		return nil
	}
	for i, f := range u.frames {
		at, err := c.send(f, take)
		if err != nil {
			return r, err
		}
		if i == u.endFrame {
			// The frame ended at its send: its last sound was that many
			// samples earlier.
			end = at.Add(-time.Duration(frameSamples-1-u.endSample) * time.Second / latencyRate)
		}
	}
	// The first sound: waited for up to the timeout, then the end.
	if _, err := c.silence(cfg.AnswerTimeout, func(m received) error {
		err := take(m)
		if err == nil && !first.IsZero() {
			return errStop
		}
		return err
	}); err != nil {
		return r, err
	}
	if !first.IsZero() {
		r.Answered = true
		r.LatencyMS = float64(first.Sub(end).Microseconds()) / 1000
		if _, err := c.silence(cfg.AnswerTimeout, take); err != nil {
			return r, err
		}
	}
	if _, err := c.silence(cfg.Pause, func(m received) error { _ = take(m); return nil }); err != nil {
		return r, err
	}
	return r, nil
}

// hangup ends the call from the caller's side.
func (c *caller) hangup() {
	_ = c.ws.Write(context.Background(), websocket.MessageText, []byte(`{"type":"hangup"}`))
}

func (c *caller) close() {
	c.timer.Stop()
	_ = c.ws.Close(websocket.StatusNormalClosure, "")
	c.cancel()
	// The reader ends at the close; what it still holds is dropped.
	for {
		select {
		case <-c.done:
			return
		case <-c.in:
		}
	}
}
