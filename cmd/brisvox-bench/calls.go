package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/brisvox/brisvox/actors/vad"
	"github.com/brisvox/brisvox/cmd/internal/serve"
	"github.com/brisvox/brisvox/media"
	"github.com/brisvox/brisvox/media/silero"
	"github.com/brisvox/brisvox/messages"
	"github.com/rs/zerolog"
)

// callsGoalsDefault are the goals.
var callsGoalsDefault = callsGoals{EngineAddedP99MS: 5, BargeInP99MS: 40, JitterP99MS: 5, HeapPerCallKiB: 256}

// callsOpts are the calls command's settings.
type callsOpts struct {
	calls     []int
	hold      time.Duration
	warmup    time.Duration
	tail      time.Duration
	ramp      time.Duration
	seed      uint64
	energy    bool
	floor     int     // vad.Model.Floor
	floorDBFS float64 // the same, as given
	noiseDBFS float64 // the callers' line noise (0: none)
	nice      int
	fixture   string
	// transport is "pcm" (the PCM websocket, 16 kHz) or "sip" (SIP over
	// UDP with PCMU RTP, 8 kHz: callssip.go).
	transport  string
	cpuProfile string
	memProfile string
	stderr     io.Writer
}

// calls runs `brisvox-bench calls`.
func calls(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("calls", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("calls", 50, "concurrent calls (one run)")
	sweep := fs.String("sweep", "", "comma-separated counts of calls, one run each (instead of --calls)")
	hold := fs.Duration("hold", 60*time.Second, "the measured time of a run")
	warmup := fs.Duration("warmup", 10*time.Second, "time after the last call connected before measuring")
	seed := fs.Uint64("seed", 1, "the conversations' and the mocks' latencies' seed")
	energy := fs.Bool("energy", false, "the energy VAD instead of Silero (Silero needs .native/env)")
	report := fs.String("report", "", "write the HTML report to this file")
	asJSON := fs.Bool("json", false, "print the sweep as JSON")
	nice := fs.Int("nice-callers", 10, "the callers' process's nice value")
	fixture := fs.String("fixture", "", "the speech fixture's base path (default .native/fixtures/en)")
	soak := fs.Duration("soak", 0, "instead of runs: a steady churn of --calls conversations (2-4 turns each) for this long, the server sampled every 10 s")
	cpuProfile := fs.String("cpuprofile", "", "write the server's CPU profile of the largest run's hold to this file")
	memProfile := fs.String("memprofile", "", "write the server's heap profile at the largest run's hold end to this file")
	floorDB := fs.Float64("floor-dbfs", -60, "Silero: windows under this RMS (dBFS) are silence without the model, as the agent file's vad.floor_dbfs; -100: every window scored")
	noiseDB := fs.Float64("noise-dbfs", 0, "white noise at this RMS (dBFS, below 0) added to every frame the callers send; 0: none (digital silence between turns)")
	transport := fs.String("transport", "pcm", "how the callers reach the server: pcm (the PCM websocket, 16 kHz) or sip (a SIP UAC a caller over UDP on 127.1.x.y, G.711 PCMU RTP, 8 kHz stages and Silero at 8 kHz)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *transport != "pcm" && *transport != "sip" {
		fmt.Fprintln(stderr, "brisvox-bench calls: --transport is pcm or sip")
		return 2
	}
	if *transport == "sip" && *soak > 0 {
		fmt.Fprintln(stderr, "brisvox-bench calls: --soak runs over pcm only")
		return 2
	}
	if *floorDB < -100 || *floorDB > -30 || *noiseDB > 0 {
		fmt.Fprintln(stderr, "brisvox-bench calls: --floor-dbfs is -100..-30, --noise-dbfs below 0 (or 0: none)")
		return 2
	}
	o := callsOpts{hold: *hold, warmup: *warmup, tail: 5 * time.Second, ramp: 20 * time.Millisecond, seed: *seed,
		energy: *energy, floor: vad.FloorOf(*floorDB), floorDBFS: *floorDB, noiseDBFS: *noiseDB, nice: *nice, fixture: *fixture, transport: *transport, cpuProfile: *cpuProfile, memProfile: *memProfile, stderr: stderr}
	if *memProfile != "" {
		runtime.MemProfileRate = 4096 // a profile of a few KiB per call needs fine sampling
	}
	if *sweep != "" {
		for _, f := range strings.Split(*sweep, ",") {
			v, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || v <= 0 {
				fmt.Fprintf(stderr, "brisvox-bench calls: bad --sweep entry %q\n", f)
				return 2
			}
			o.calls = append(o.calls, v)
		}
		slices.Sort(o.calls)
	} else {
		if *n <= 0 {
			return 2
		}
		o.calls = []int{*n}
	}
	if o.fixture == "" {
		base, err := fixtureBase()
		if err != nil {
			fmt.Fprintln(stderr, "brisvox-bench calls:", err)
			return 1
		}
		o.fixture = base
	}
	if *soak > 0 {
		return callsSoakCommand(o, *n, *soak, *report, *asJSON, args, stdout, stderr)
	}
	s, err := runCallsSweep(o)
	if err != nil {
		fmt.Fprintln(stderr, "brisvox-bench calls:", err)
		return 1
	}
	s.Command = "brisvox-bench calls " + strings.Join(args, " ")
	if *report != "" {
		if err := writeCallsReport(*report, s); err != nil {
			fmt.Fprintln(stderr, "brisvox-bench calls:", err)
			return 1
		}
	}
	if *asJSON {
		b, _ := json.MarshalIndent(s, "", "  ")
		fmt.Fprintln(stdout, string(b))
	} else {
		printCallsSweep(stdout, s)
	}
	for _, r := range s.Runs {
		if r.Error != "" {
			return 1
		}
	}
	return 0
}

// printCallsSweep prints a sweep as a table.
func printCallsSweep(w io.Writer, s callsSweep) {
	fmt.Fprintf(w, "%s, %d cores, GOMAXPROCS %d, %s\n", s.Machine.CPU, s.Machine.Cores, s.Machine.GOMAXPROCS, s.Machine.Go)
	fmt.Fprintf(w, "VAD %s, floor %g dBFS, callers' noise %g dBFS (0: none)\n", s.VAD, s.FloorDBFS, s.NoiseDBFS)
	for _, r := range s.Runs {
		if r.Transport == "sip" {
			fmt.Fprintf(w, "over SIP (PCMU RTP, 8 kHz); not measured over RTP: %s\n", strings.Join(r.NotMeasured, ", "))
		}
		fmt.Fprintf(w, "N=%d %s: %d turns, %d answered, %d lost, %d tool turns, %d barge-ins (%d not barge-ins)\n",
			r.N, r.VAD, r.Turns, r.Answered, r.Lost, r.ToolTurn, r.BargeIns, r.BargeMissed)
		fmt.Fprintf(w, "  engine-added p50 %.2f p90 %.2f p99 %.2f max %.2f ms (from the decision's audio time: p50 %.2f p99 %.2f ms; framing wait p50 %.2f max %.2f ms; %d unreferenced); first audio p50 %.0f p99 %.0f ms\n",
			r.EngineAdded.P50, r.EngineAdded.P90, r.EngineAdded.P99, r.EngineAdded.Max, r.EngineAddedAudio.P50, r.EngineAddedAudio.P99,
			r.FramingWait.P50, r.FramingWait.Max, r.Unreferenced, r.FirstAudio.P50, r.FirstAudio.P99)
		if len(r.EngineStages) > 0 {
			fmt.Fprintf(w, "  engine-added by stage (plain turns, p50/p99 ms):")
			for _, name := range []string{"vad_stt", "turn", "llm", "tts", "pacer", "send"} {
				if d, ok := r.EngineStages[name]; ok {
					fmt.Fprintf(w, " %s %.2f/%.2f", name, d.P50, d.P99)
				}
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "  the VAD's stop (audio time) after the utterance's end p50 %.1f p99 %.1f ms (%d turns)\n", r.VADStopAfterEnd.P50, r.VADStopAfterEnd.P99, r.VADStopAfterEnd.Count)
		fmt.Fprintf(w, "  barge-in to silence p50 %.1f p99 %.1f max %.1f ms (from the speech start + the VAD's delay p50 %.1f p99 %.1f ms); jitter p50 %.2f p99 %.2f max %.2f ms (%d gaps)\n",
			r.BargeIn.P50, r.BargeIn.P99, r.BargeIn.Max, r.BargeInFromSpeech.P50, r.BargeInFromSpeech.P99, r.Jitter.P50, r.Jitter.P99, r.Jitter.Max, r.Jitter.Count)
		if r.Transport != "sip" {
			fmt.Fprintf(w, "  frame 0 offset p50 %.3f max %.3f ms (its write to the server's read p50 %.3f max %.3f ms); callers' send lateness p99 %.2f max %.2f ms; %d gaps and %d first audios with merged kernel times\n",
				r.Frame0Offset.P50, r.Frame0Offset.Max, r.Frame0Read.P50, r.Frame0Read.Max, r.SendLate.P99, r.SendLate.Max, r.UnstampedGaps, r.MergedFirst)
		}
		fmt.Fprintf(w, "  server CPU %.1f%% of a core (%.2f%% per call), callers %.1f%%; RSS %.0f MB (%.0f KiB per call), heap %.1f KiB per call; GC pause p99 %.3f ms, sched p99 %.3f ms, %.1f goroutines per call, %d left after\n",
			r.CPUTotalPct, r.CPUPerCallPct, r.CallersCPUPct, r.RSSMB, r.RSSPerCallKiB, r.HeapPerCallKiB, r.GCPauseP99MS, r.SchedLatencyP99MS, r.GoroutinesPerCall, r.GoroutinesLeft)
		verdict := "met every goal"
		if !r.Met {
			verdict = "missed: " + strings.Join(r.Why, "; ")
		}
		fmt.Fprintf(w, "  %s\n", verdict)
	}
	fmt.Fprintf(w, "largest N meeting every goal: %d\n", s.Largest)
}

// callsSoakCommand runs and prints the soak.
func callsSoakCommand(o callsOpts, n int, d time.Duration, report string, asJSON bool, args []string, stdout, stderr io.Writer) int {
	fx, err := loadCallFixture(o.fixture)
	if err != nil {
		fmt.Fprintln(stderr, "brisvox-bench calls:", err)
		return 1
	}
	model, closeModel, err := callsVAD(o.energy, o.floor)
	if err != nil {
		fmt.Fprintln(stderr, "brisvox-bench calls:", err)
		return 1
	}
	defer closeModel()
	r, err := runCallsSoak(o, n, d, fx, model)
	r.Command = "brisvox-bench calls " + strings.Join(args, " ")
	if err != nil {
		r.OK, r.Error = false, err.Error()
	}
	if report != "" {
		f, err := os.Create(report)
		if err == nil {
			err = writeSoakHTML(f, r.Soak)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintln(stderr, "brisvox-bench calls:", err)
			return 1
		}
	}
	if asJSON {
		b, _ := json.MarshalIndent(r, "", "  ")
		fmt.Fprintln(stdout, string(b))
	} else {
		printCallsSoak(stdout, r)
		if r.Error != "" {
			fmt.Fprintln(stdout, "error:", r.Error)
		}
	}
	if !r.OK {
		return 1
	}
	return 0
}

// callsVAD opens the 16 kHz Silero pool (nil model with energy) and a
// closer.
func callsVAD(energy bool, floor int) (*vad.Model, func(), error) {
	return callsVADAt(energy, floor, silero.Rate16k)
}

// callsVADAt is callsVAD with the pool at rate (silero.Rate16k or
// Rate8k: the SIP calls' stages hear 8 kHz).
func callsVADAt(energy bool, floor, rate int) (*vad.Model, func(), error) {
	if energy {
		return nil, func() {}, nil
	}
	pool, err := silero.NewPool(silero.PoolConfig{SampleRate: rate})
	if err != nil {
		return nil, nil, fmt.Errorf("silero (give --energy for the energy VAD): %w", err)
	}
	model := &vad.Model{
		NewScorer: func() (vad.Scorer, error) { return pool.NewScorer(0), nil },
		NewGate: func() vad.Gate {
			g, _ := media.NewSpeechGate(media.SpeechGateConfig{}) // the defaults are valid
			return g
		},
		Floor: floor,
	}
	return model, func() { pool.Close() }, nil
}

// runCallsSweep runs each count of calls on a fresh server (the Silero
// pool is shared) and judges the runs.
func runCallsSweep(o callsOpts) (callsSweep, error) {
	fx, err := loadCallFixture(o.fixture)
	if err != nil {
		return callsSweep{}, err
	}
	s := callsSweep{Date: time.Now().UTC().Format(time.RFC3339), Goals: callsGoalsDefault, Machine: callsHost{
		Cores: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), CPU: cpuModel(), Go: runtime.Version()},
		VAD: "silero", FloorDBFS: o.floorDBFS, NoiseDBFS: o.noiseDBFS}
	if o.energy {
		s.VAD, s.FloorDBFS = "energy", 0
	}
	rate := silero.Rate16k
	if o.transport == "sip" {
		rate = silero.Rate8k
	}
	model, closeModel, err := callsVADAt(o.energy, o.floor, rate)
	if err != nil {
		return s, err
	}
	defer closeModel()
	for i, n := range o.calls {
		last := i == len(o.calls)-1
		r, err := runCalls(o, n, fx, model, last)
		if err != nil {
			r.N, r.Error = n, err.Error()
		}
		judgeCallsRun(&r, s.Goals)
		s.Runs = append(s.Runs, r)
		if r.Met {
			s.Largest = n
		}
	}
	return s, nil
}

// judgeCallsRun sets Met and Why.
func judgeCallsRun(r *callsRun, g callsGoals) {
	r.Why = nil
	miss := func(format string, a ...any) { r.Why = append(r.Why, fmt.Sprintf(format, a...)) }
	if r.Error != "" {
		miss("the run failed: %s", r.Error)
	}
	if r.Turns == 0 {
		miss("no turn measured")
	}
	if r.Lost > 0 {
		miss("%d lost turns", r.Lost)
	}
	if r.Unjoined > 0 || r.BargeUnjoined > 0 {
		miss("%d answered turns and %d barge-ins not joined with the server's", r.Unjoined, r.BargeUnjoined)
	}
	if r.EngineAdded.P99 > g.EngineAddedP99MS {
		miss("engine-added p99 %.2f ms > %.0f ms", r.EngineAdded.P99, g.EngineAddedP99MS)
	}
	if r.BargeIn.P99 > g.BargeInP99MS {
		miss("barge-in to silence p99 %.1f ms > %.0f ms", r.BargeIn.P99, g.BargeInP99MS)
	}
	if r.Jitter.P99 > g.JitterP99MS {
		miss("jitter p99 %.2f ms > %.0f ms", r.Jitter.P99, g.JitterP99MS)
	}
	if r.HeapPerCallKiB > g.HeapPerCallKiB {
		miss("heap %.0f KiB per call > %.0f KiB", r.HeapPerCallKiB, g.HeapPerCallKiB)
	}
	if r.EndedEarly > 0 {
		miss("%d calls ended by the server before the hang-up (%v)", r.EndedEarly, r.EarlyReasons)
	}
	if r.GoroutinesLeft > 0 {
		miss("%d goroutines left after the calls", r.GoroutinesLeft)
	}
	if r.StaleFrames > 0 {
		miss("%d bot frames after a clear", r.StaleFrames)
	}
	if r.ToolRepeats > 0 {
		miss("%d tool calls run more than once", r.ToolRepeats)
	}
	r.Met = len(r.Why) == 0
}

// runtimeSample reads runtime/metrics.
type runtimeSample struct {
	liveHeap   uint64
	gcPauses   *metrics.Float64Histogram
	sched      *metrics.Float64Histogram
	goroutines int
}

func readRuntime() runtimeSample {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/sched/pauses/total/gc:seconds"}, {Name: "/sched/latencies:seconds"}}
	metrics.Read(s)
	var out runtimeSample
	if s[0].Value.Kind() == metrics.KindUint64 {
		out.liveHeap = s[0].Value.Uint64()
	}
	if s[1].Value.Kind() == metrics.KindFloat64Histogram {
		out.gcPauses = s[1].Value.Float64Histogram()
	}
	if s[2].Value.Kind() == metrics.KindFloat64Histogram {
		out.sched = s[2].Value.Float64Histogram()
	}
	out.goroutines = runtime.NumGoroutine()
	return out
}

// runCalls is one run of n calls on a fresh server.
// With last, it writes the profiles asked for.
func runCalls(o callsOpts, n int, fx callFixture, model *vad.Model, last bool) (callsRun, error) {
	cpuProfile, memProfile := "", ""
	if last {
		cpuProfile, memProfile = o.cpuProfile, o.memProfile
	}
	r := callsRun{N: n, VAD: "silero", Transport: cmp.Or(o.transport, "pcm")}
	sipMode := o.transport == "sip"
	if sipMode {
		r.NotMeasured = callsSIPNotMeasured
	}
	minSpeech := media.DefaultSpeechMinSpeech
	if model == nil {
		r.VAD, minSpeech = "energy", media.DefaultVADStartAfter
	}
	baseGoroutines := runtime.NumGoroutine()
	turns := callsTurnsFor(time.Duration(n)*o.ramp + o.warmup + o.hold + o.tail)
	obs := newCallsObserver()
	agent, err := newCallsAgent(o.seed, turns, fx, model, obs)
	if err != nil {
		return r, err
	}
	var ln *stampListener
	cfg := serve.Config{MaxCalls: n, DrainTimeout: 2 * time.Second, ClosingTimeout: time.Second, IdleFree: -1,
		Log: zerolog.Nop(), Observe: obs.observe, ObserveEnd: obs.observeEnd}
	var cs *callsServer
	if sipMode {
		agent.rate = callsSIPRate
		cs, err = startCallsSIPServer(cfg, agent, n)
	} else {
		cs, err = startCallsServer(cfg, agent, func(tcp net.Listener) net.Listener { ln = newStampListener(tcp); return ln })
	}
	if err != nil {
		return r, err
	}
	defer cs.stop()

	runtime.GC()
	before := readRuntime()
	rss0 := rssMB()
	self, err := os.Executable()
	if err != nil {
		return r, err
	}
	childArgs := []string{"calls-callers", "--addr", cs.addr, "--calls", strconv.Itoa(n),
		"--seed", strconv.FormatUint(o.seed, 10), "--warmup", o.warmup.String(), "--hold", o.hold.String(),
		"--tail", o.tail.String(), "--ramp", o.ramp.String(), "--fixture", o.fixture, "--turns", strconv.Itoa(turns),
		"--min-speech", minSpeech.String(), "--noise-dbfs", strconv.FormatFloat(o.noiseDBFS, 'g', -1, 64),
		"--transport", cmp.Or(o.transport, "pcm")}
	child := callersCommand(o.nice, self, childArgs)
	child.Stderr = o.stderr
	pipe, err := child.StdoutPipe()
	if err != nil {
		return r, err
	}
	if err := child.Start(); err != nil {
		return r, err
	}
	if o.nice > 0 && len(child.Args) > 0 && child.Args[0] == self {
		renice(child, o.nice, o.stderr)
	}
	var cpu0, cpu1 time.Duration
	var t0, t1 time.Time
	var hold0, hold1 runtimeSample
	var heapNoGC uint64 // the live heap at the hold's end before its GC
	var rss1 float64
	var out callersOut
	var profFile *os.File
	sc := bufio.NewScanner(pipe)
	sc.Buffer(nil, 256<<20) // the report is one long line; it grows then
	for sc.Scan() {
		switch line := sc.Text(); {
		case line == "hold-start":
			cpu0, t0, hold0 = cpuTime(), time.Now(), readRuntime()
			if memProfile != "" {
				if f, err := os.Create(memProfile + ".start"); err == nil {
					_ = pprof.Lookup("heap").WriteTo(f, 0)
					_ = f.Close()
				}
			}
			if cpuProfile != "" {
				if f, err := os.Create(cpuProfile); err == nil {
					profFile = f
					_ = pprof.StartCPUProfile(f)
				}
			}
		case line == "hold-end":
			cpu1, t1, hold1 = cpuTime(), time.Now(), readRuntime()
			// The live heap is as of the last GC, which a light run may
			// not have had since the calls began: one now (the pauses and
			// the CPU are read already).
			heapNoGC = hold1.liveHeap
			runtime.GC()
			hold1.liveHeap = readRuntime().liveHeap
			rss1 = rssMB()
			if profFile != nil {
				pprof.StopCPUProfile()
				_ = profFile.Close()
			}
			if memProfile != "" {
				if f, err := os.Create(memProfile); err == nil {
					_ = pprof.Lookup("heap").WriteTo(f, 0)
					_ = f.Close()
				}
			}
		case line == "hangup":
			obs.mu.Lock()
			obs.hangups = time.Now()
			obs.mu.Unlock()
		case strings.HasPrefix(line, "{"):
			if err := json.Unmarshal([]byte(line), &out); err != nil {
				return r, fmt.Errorf("callers' report: %w", err)
			}
		}
	}
	werr := child.Wait()
	if cs.sipStats != nil {
		r.SIPCounters = cs.sipStats()
	}
	obs.mu.Lock()
	for reason, k := range obs.early {
		r.EndedEarly += k
		if r.EarlyReasons == nil {
			r.EarlyReasons = map[string]int{}
		}
		r.EarlyReasons[reason] += k
	}
	obs.mu.Unlock()
	r.WriteErrors = out.WriteErrors
	if out.Error != "" {
		return r, fmt.Errorf("callers: %s", out.Error)
	}
	if werr != nil || t1.IsZero() {
		return r, fmt.Errorf("callers failed: %v", werr)
	}
	// Every call ends with its hang-up; then the server stops and its
	// goroutines must be gone.
	live, left := cs.windDown(baseGoroutines)
	r.GoroutinesLeft = left
	if live > 0 {
		return r, fmt.Errorf("%d calls still live 30 s after the hang-ups", live)
	}

	wall := t1.Sub(t0)
	r.HoldS = wall.Seconds()
	r.CPUTotalPct = 100 * float64(cpu1-cpu0) / float64(wall)
	r.CPUPerCallPct = r.CPUTotalPct / float64(n)
	r.CallersCPUPct = out.CPU
	r.RSSMB = rss1
	r.RSSPerCallKiB = (rss1 - rss0) * 1024 / float64(n)
	r.HeapPerCallKiB = (float64(hold1.liveHeap) - float64(before.liveHeap)) / 1024 / float64(n)
	if os.Getenv("BRISVOX_CALLS_DEBUG") != "" {
		fmt.Fprintf(o.stderr, "live heap before %d, at the hold start %d, end %d (as of the last GC before it: %d)\n", before.liveHeap, hold0.liveHeap, hold1.liveHeap, heapNoGC)
	}
	r.GCPauseP99MS = histQuantile(hold0.gcPauses, hold1.gcPauses, 0.99)
	r.SchedLatencyP99MS = histQuantile(hold0.sched, hold1.sched, 0.99)
	r.GoroutinesPerCall = float64(hold1.goroutines-before.goroutines) / float64(n)
	r.Jitter, r.UnstampedGaps = out.Jitter, out.Unstamped
	if out.Connected != n {
		return r, fmt.Errorf("%d of %d calls connected", out.Connected, n)
	}
	if sipMode {
		sipJoinEpochs(&out, obs)
	}
	joinCalls(&r, out, obs, ln, minSpeech)
	return r, nil
}

// joinCalls joins the callers' turns with the server's timelines and
// fills the run's per-turn figures.
func joinCalls(r *callsRun, out callersOut, obs *callsObserver, ln *stampListener, minSpeech time.Duration) {
	var engine, audio, first, barge, bargeSpeech, framing, offset, read0, late, stopAfter []float64
	stages := map[string][]float64{}
	for _, cr := range out.Callers {
		obs.mu.Lock()
		sc := obs.byCaller[cr.Caller]
		obs.mu.Unlock()
		r.StaleFrames += cr.Stale
		var t0 time.Time
		if at, ok := ln.frame0(cr.Port); ok {
			t0 = at.Add(-messages.FrameDuration)
			offset = append(offset, float64(t0.UnixNano()-cr.BaseNS)/1e6)
			read0 = append(read0, float64(at.UnixNano()-cr.Frame0NS)/1e6)
		}
		if sc == nil {
			r.Unjoined += len(cr.Turns)
			continue
		}
		sc.mu.Lock()
		for _, runs := range sc.toolRuns {
			if runs > 1 {
				r.ToolRepeats++
			}
		}
		for _, t := range cr.Turns {
			if t.EndNS < out.HoldFromNS || t.EndNS > out.HoldToNS {
				continue
			}
			st := sc.script.Turns[t.K]
			r.Turns++
			if st.Tool {
				r.ToolTurn++
			}
			m := callTurnMeasure(t, cr.BaseNS, st, sc, t0, minSpeech)
			if r.Transport == "sip" {
				sipStages(&m, t, st, sc)
			}
			switch m.barge {
			case bargeCut:
				r.BargeIns++
				bargeSpeech = append(bargeSpeech, m.bargeSpeechMS)
				if m.bargeJoined {
					barge = append(barge, m.bargeMS)
				} else {
					r.BargeUnjoined++
				}
			case bargeMissed:
				r.BargeMissed++
			}
			if !m.answered {
				continue
			}
			r.Answered++
			if t.FirstMerged {
				r.MergedFirst++
			}
			first = append(first, float64(t.FirstNS-t.EndNS)/1e6)
			if !m.joined {
				r.Unjoined++
				continue
			}
			if stop, ok := sc.marks[messages.Epoch(t.Epoch)][messages.MarkVADStop]; ok {
				stopAfter = append(stopAfter, float64(stop.UnixNano()-t.EndNS)/1e6)
			}
			if !m.heard {
				r.Misheard++
			}
			if !m.referenced {
				r.Unreferenced++
			}
			engine = append(engine, m.engineMS)
			audio = append(audio, m.audioMS)
			for name, v := range m.stages {
				stages[name] = append(stages[name], v)
			}
			late = append(late, m.lateMS)
			framing = append(framing, m.framingMS)
		}
		sc.mu.Unlock()
	}
	r.Lost = r.Turns - r.Answered
	r.EngineAdded, r.FirstAudio, r.BargeIn = newCallsDist(engine), newCallsDist(first), newCallsDist(barge)
	r.FramingWait, r.Frame0Offset, r.SendLate = newCallsDist(framing), newCallsDist(offset), newCallsDist(late)
	r.EngineAddedAudio, r.BargeInFromSpeech, r.Frame0Read = newCallsDist(audio), newCallsDist(bargeSpeech), newCallsDist(read0)
	r.VADStopAfterEnd = newCallsDist(stopAfter)
	for name, v := range stages {
		if r.EngineStages == nil {
			r.EngineStages = map[string]callsDist{}
		}
		d := newCallsDist(v)
		d.Points = nil
		r.EngineStages[name] = d
	}
}

// The barge-in outcomes of a turn.
const (
	bargeNone   = iota // not a barge-in turn
	bargeCut           // the bot went quiet
	bargeMissed        // the answer had ended (or never came): no barge-in
	bargeLost          // the bot went on speaking
)

// turnMeasure is one turn's figures.
type turnMeasure struct {
	answered, joined, heard bool
	// engineMS is from the write of the frame that held the decision's
	// last sample (referenced: that frame was found in the record), or
	// else from the decision's time; audioMS always from the decision's
	// time (plus the framing wait).
	engineMS, audioMS, framingMS float64
	referenced                   bool
	// stages split engineMS of a plain (no tool) referenced turn by the
	// server's marks (callsStages).
	stages map[string]float64
	lateMS float64
	barge  int
	// bargeMS is from the interrupt (bargeJoined: its mark was found),
	// bargeSpeechMS from the caller's speech start plus the VAD's start
	// delay; both to the end of the last bot frame received.
	bargeMS, bargeSpeechMS float64
	bargeJoined            bool
}

// callTurnMeasure computes a caller's turn against the server's record
// of its call (locked by the caller). t0 is the server's frame 0 start
// (zero: unknown).
func callTurnMeasure(t callerTurnRec, baseNS int64, st callTurn, sc *serverCall, t0 time.Time, minSpeech time.Duration) turnMeasure {
	var m turnMeasure
	m.answered = t.FirstNS != 0
	if st.BargeIn {
		switch t.Barge {
		case "cut":
			// The bot is quiet once its last frame has played.
			quiet := t.CutLastNS + int64(messages.FrameDuration)
			m.barge = bargeCut
			m.bargeSpeechMS = float64(quiet-bargeDecided(t, baseNS, minSpeech)) / 1e6
			if at, ok := sc.marks[messages.Epoch(t.Epoch)][messages.MarkInterrupt]; ok && t.Epoch != 0 {
				m.bargeMS, m.bargeJoined = float64(quiet-at.UnixNano())/1e6, true
			}
		case "not_cut":
			m.barge, m.answered = bargeLost, false
		default:
			m.barge = bargeMissed
		}
	}
	if !m.answered {
		return m
	}
	k, ok := sc.ordinal[messages.Epoch(t.Epoch)]
	marks := sc.marks[messages.Epoch(t.Epoch)]
	det, okDet := marks[messages.MarkVADDetected]
	if !ok || k != t.K || !okDet {
		return m
	}
	m.joined, m.heard = true, sc.turns[k].heard
	scripted := sc.script.scripted(t.K)
	wait := framingWait(det, t0)
	m.framingMS = float64(wait) / 1e6
	m.audioMS = engineAdded(t.FirstNS, det.UnixNano()+int64(wait), scripted)
	m.engineMS = m.audioMS
	if seq, ok := decidingFrame(det, t0); ok {
		if i := seq - t.EndSeq; i >= 0 && i < int64(len(t.StopLateUS)) {
			late := int64(t.StopLateUS[i]) * 1000
			sent := baseNS + (seq+1)*int64(messages.FrameDuration) + late
			m.engineMS, m.referenced, m.lateMS = engineAdded(t.FirstNS, sent, scripted), true, float64(late)/1e6
			if !st.Tool {
				m.stages = callsStages(marks, sent, t.FirstNS, sc.script)
				if v, ok := m.stages["llm"]; ok {
					m.stages["llm"] = v - float64(st.LLMFirst)/1e6
				}
			}
		}
	}
	return m
}

// callsStages splits a plain turn's engine-added time by the server's
// marks, each stage less its scripted latency (ms): vad_stt (the
// deciding frame's write to the STT final, less the STT's latency: the
// VAD's decision and the final's trip), turn (the final to the LLM
// request), llm (the request to the first token, less its latency), tts
// (the first token to the first synthesised audio, less the first
// byte), pacer (to the first audio out) and send (out to the caller's
// kernel). Missing marks leave their stages out.
func callsStages(marks map[messages.MarkKind]time.Time, sentNS, firstNS int64, s callScript) map[string]float64 {
	out := map[string]float64{}
	at := func(k messages.MarkKind) (int64, bool) {
		t, ok := marks[k]
		return t.UnixNano(), ok
	}
	ms := func(d int64) float64 { return float64(d) / 1e6 }
	final, ok1 := at(messages.MarkSTTFinal)
	req, ok2 := at(messages.MarkLLMRequest)
	tok, ok3 := at(messages.MarkLLMFirstToken)
	tts, ok4 := at(messages.MarkTTSFirstAudio)
	outAt, ok5 := at(messages.MarkFirstAudioOut)
	if ok1 {
		out["vad_stt"] = ms(final - sentNS - int64(s.STTFinal))
	}
	if ok1 && ok2 {
		out["turn"] = ms(req - final)
	}
	if ok2 && ok3 {
		out["llm"] = ms(tok - req) // the caller subtracts the turn's first token

	}
	if ok3 && ok4 {
		out["tts"] = ms(tts - tok - int64(s.TTSFirst))
	}
	if ok4 && ok5 {
		out["pacer"] = ms(outAt - tts)
	}
	if ok5 {
		out["send"] = ms(firstNS - outAt)
	}
	return out
}

// bargeDecided is the earliest the VAD could decide a barge-in: when the
// caller's frame holding the sample minSpeech after the speech's start
// was written (its due time when the record lacks it).
func bargeDecided(t callerTurnRec, baseNS int64, minSpeech time.Duration) int64 {
	i := (int64(minSpeech) + int64(messages.FrameDuration) - 1) / int64(messages.FrameDuration) // frames of speech
	seq := t.StartSeq + i - 1
	at := baseNS + (seq+1)*int64(messages.FrameDuration)
	if i-1 < int64(len(t.StartLateUS)) {
		at += int64(t.StartLateUS[i-1]) * 1000
	}
	return at
}

// engineAdded is what the engine added to a turn, in ms: the first audio
// at the caller (kernel time) less the time the audio that decided the
// turn's end reached the server and the providers' scripted latencies.
func engineAdded(firstNS, fromNS int64, scripted time.Duration) float64 {
	return float64(firstNS-fromNS-int64(scripted)) / 1e6
}

// decidingFrame is the frame that held the last sample of the audio the
// VAD decided on: its decision time is that audio's end (t0 + samples);
// a time within 1 ms after a frame's end is taken for that end (t0 is
// an estimate, early by the server's read of frame 0).
func decidingFrame(detected, t0 time.Time) (int64, bool) {
	rel := detected.Sub(t0) - time.Millisecond
	if t0.IsZero() || rel < 0 {
		return 0, false
	}
	return int64(rel / messages.FrameDuration), true
}

// framingWait is how long after the VAD's decision time (an audio time:
// the end of the frame or Silero window whose score decided) the frame
// holding that sample ended: a Silero window (512 samples) ends inside a
// 20 ms frame, which arrives whole at its end; the energy VAD decides at
// frame ends (0). t0 is the server's start of frame 0 (from the arrival
// of frame 0, a little early); a decision within 1 ms after a frame end
// is taken for that end, an estimate's error. Zero t0: 0.
func framingWait(detected, t0 time.Time) time.Duration {
	seq, ok := decidingFrame(detected, t0)
	if !ok {
		return 0
	}
	return max(0, t0.Add(time.Duration(seq+1)*messages.FrameDuration).Sub(detected))
}

// cpuModel is the machine's CPU model name.
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "model name"); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
		}
	}
	return runtime.GOARCH
}

// writeCallsReport writes the sweep's HTML report (callshtml.go).
func writeCallsReport(path string, s callsSweep) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := writeCallsHTML(f, s); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
