package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/brisvox/brisvox/actors/vad"
	"github.com/brisvox/brisvox/cmd/internal/serve"
	"github.com/brisvox/brisvox/media"
	"github.com/rs/zerolog"
)

// `brisvox-bench calls --soak D`: a steady churn of conversations for D.
// The callers' process keeps --calls conversations live, each of 2 to 4
// turns and a hang-up, replaced as they end; the server's process is
// sampled every 10 s (soak.go's sampler: goroutines, live heap, RSS,
// descriptors, sockets, live calls) and fails when a series grows over
// the last two thirds.

// soakCallersOut is the soak callers' report.
type soakCallersOut struct {
	Started    int     `json:"calls_started"`
	Completed  int     `json:"calls_completed"`
	DialErrors int     `json:"dial_errors"`
	Turns      int     `json:"turns"`
	Answered   int     `json:"answered"`
	BargeIns   int     `json:"barge_ins"`
	BargeLost  int     `json:"barge_ins_not_silenced"`
	CPU        float64 `json:"callers_cpu_pct_of_core"`
	Error      string  `json:"error,omitempty"`
}

// callsSoakResult is what `calls --soak` prints.
type callsSoakResult struct {
	Date     string         `json:"date"`
	Command  string         `json:"command"`
	Machine  callsHost      `json:"machine"`
	VAD      string         `json:"vad"`
	Calls    int            `json:"concurrent_calls"`
	Duration float64        `json:"duration_s"`
	Callers  soakCallersOut `json:"callers"`
	// Lost = Turns - Answered.
	Lost           int `json:"lost_turns"`
	GoroutinesLeft int `json:"goroutines_left"`
	// EndReasons counts, by reason, the calls that did not end with their
	// caller's hang-up (every call of the soak should): calls the server
	// ended (a slow consumer, no input, a failed stage) or that vanished.
	EndReasons map[string]int `json:"other_end_reasons,omitempty"`
	Soak       soakReport     `json:"soak"`
	OK         bool           `json:"ok"`
	Error      string         `json:"error,omitempty"`
}

// runCallsSoak runs the soak on a fresh server.
func runCallsSoak(o callsOpts, n int, d time.Duration, fx callFixture, model *vad.Model) (callsSoakResult, error) {
	res := callsSoakResult{Date: time.Now().UTC().Format(time.RFC3339), Calls: n, VAD: "silero", Machine: callsHost{
		Cores: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), CPU: cpuModel(), Go: runtime.Version()}}
	minSpeech := media.DefaultSpeechMinSpeech
	if model == nil {
		res.VAD, minSpeech = "energy", media.DefaultVADStartAfter
	}
	baseGoroutines := runtime.NumGoroutine()
	obs := newCallsObserver()
	obs.forget = true // a record per call would grow with the churn
	agent, err := newCallsAgent(o.seed, 8, fx, model, obs)
	if err != nil {
		return res, err
	}
	cs, err := startCallsServer(serve.Config{MaxCalls: n + n/2 + 10, DrainTimeout: 2 * time.Second, ClosingTimeout: time.Second, IdleFree: -1,
		Log: zerolog.Nop(), ObserveEnd: obs.observeEnd}, agent, nil)
	if err != nil {
		return res, err
	}
	defer cs.stop()
	self, err := os.Executable()
	if err != nil {
		return res, err
	}
	childArgs := []string{"calls-soak-callers", "--addr", cs.addr, "--calls", strconv.Itoa(n),
		"--seed", strconv.FormatUint(o.seed, 10), "--duration", d.String(), "--fixture", o.fixture, "--min-speech", minSpeech.String()}
	child := callersCommand(o.nice, self, childArgs)
	child.Stderr = o.stderr
	pipe, err := child.StdoutPipe()
	if err != nil {
		return res, err
	}
	sampler := startSoakSamplerFor(10*time.Second, d, func() int { return len(cs.srv.Live()) }, cs.srv.DispatcherWorkers)
	if err := child.Start(); err != nil {
		sampler.Stop()
		return res, err
	}
	sc := bufio.NewScanner(pipe)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "{") {
			if err := json.Unmarshal([]byte(line), &res.Callers); err != nil {
				sampler.Stop()
				return res, fmt.Errorf("callers' report: %w", err)
			}
		}
	}
	werr := child.Wait()
	res.Soak = sampler.Stop()
	res.Duration = d.Seconds()
	if res.Callers.Error != "" {
		return res, fmt.Errorf("callers: %s", res.Callers.Error)
	}
	if werr != nil {
		return res, fmt.Errorf("callers failed: %v", werr)
	}
	live, left := cs.windDown(baseGoroutines)
	res.GoroutinesLeft = left
	obs.mu.Lock()
	res.EndReasons = maps.Clone(obs.early) // no hang-up line in a soak: every end is in early
	obs.mu.Unlock()
	if live > 0 {
		return res, fmt.Errorf("%d calls still live 30 s after the hang-ups", live)
	}
	res.Lost = res.Callers.Turns - res.Callers.Answered
	res.OK = res.Soak.OK && res.Lost == 0 && res.Callers.BargeLost == 0 && res.Callers.DialErrors == 0 && res.GoroutinesLeft == 0 &&
		len(res.EndReasons) == 0
	return res, nil
}

// callersCommand is the callers' process at nice n: through nice(1),
// so that every thread has it (setpriority on a started Go process
// reaches its main thread only), else reniced after the start.
func callersCommand(n int, self string, args []string) *exec.Cmd {
	if n > 0 {
		if nicePath, err := exec.LookPath("nice"); err == nil {
			return exec.Command(nicePath, append([]string{"-n", strconv.Itoa(n), self}, args...)...)
		}
	}
	return exec.Command(self, args...)
}

// callsSoakCallers is the soak's callers: --calls conversations live at
// once, each replaced by a new one when it ends, for --duration; then
// the last ones finish.
func callsSoakCallers(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("calls-soak-callers", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "", "the server's host:port")
	path := fs.String("path", "/pcm", "the PCM websocket's path")
	calls := fs.Int("calls", 8, "conversations live at once")
	seed := fs.Uint64("seed", 1, "the scripts' seed")
	duration := fs.Duration("duration", time.Minute, "how long new calls keep coming")
	fixture := fs.String("fixture", "", "the speech fixture (base path of .wav and .json)")
	minSpeech := fs.Duration("min-speech", 64*time.Millisecond, "the VAD's start delay")
	if err := fs.Parse(args); err != nil || *addr == "" || *calls <= 0 || *fixture == "" {
		return 2
	}
	var out soakCallersOut
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
	speech := speechBytes(fx)
	var mu sync.Mutex // out's counts
	ended := make(chan struct{}, *calls)
	var readers sync.WaitGroup
	shards := startCallerShards(*calls, func(s *callerShard, cs []*convCaller, now time.Time) {
		var done []*convCaller
		for _, c := range cs {
			if err := c.tick(now); err == errCallDone {
				done = append(done, c)
			}
		}
		if len(done) == 0 {
			return
		}
		s.remove(done)
		for _, c := range done {
			_ = c.ws.Write(wsText, []byte(`{"type":"hangup"}`))
		}
	})
	cpu0, from := cpuTime(), time.Now()
	end := from.Add(*duration)
	live := 0
	for i := 0; ; i++ {
		for live >= *calls {
			<-ended
			live--
		}
		if time.Now().After(end) {
			break
		}
		dctx, dcancel := context.WithTimeout(context.Background(), 10*time.Second)
		ws, err := dialWS(dctx, *addr, *path+"?rate=16000&caller="+strconv.Itoa(i))
		dcancel()
		if err != nil {
			mu.Lock()
			out.DialErrors++
			mu.Unlock()
			time.Sleep(100 * time.Millisecond)
			continue
		}
		script := newCallScript(*seed, i, len(fx.Texts), 8)
		c := &convCaller{idx: i, ws: ws, script: script, speech: speech, minSpeech: *minSpeech,
			silence: make([]byte, 640), buf: make([]byte, 640), latency: map[uint64]float64{}, maxTurns: 2 + i%3}
		live++
		out.Started++
		readers.Go(func() {
			err := ws.Run(c.receive)
			_ = ws.Close()
			var jitter []float64
			var unstamped int
			rec := c.analyse(0, 1<<62, &jitter, &unstamped)
			mu.Lock()
			if err == nil {
				out.Completed++
			}
			for _, t := range rec.Turns {
				out.Turns++
				if t.FirstNS != 0 && t.Barge != "not_cut" {
					out.Answered++
				}
				switch t.Barge {
				case "cut":
					out.BargeIns++
				case "not_cut":
					out.BargeLost++
				}
			}
			mu.Unlock()
			ended <- struct{}{}
		})
		shards.add(i, c)
		time.Sleep(20 * time.Millisecond)
	}
	// The last calls finish their turns (bounded: 4 turns take < 40 s).
	deadline := time.After(60 * time.Second)
	for live > 0 {
		select {
		case <-ended:
			live--
		case <-deadline:
			out.Error = fmt.Sprintf("%d calls did not end 60 s after the soak", live)
			live = 0
		}
	}
	shards.stopAll()
	shards.each(func(c *convCaller) { _ = c.ws.Close() })
	readers.Wait()
	out.CPU = 100 * float64(cpuTime()-cpu0) / float64(time.Since(from))
	return emit()
}

// printCallsSoak prints a soak's result.
func printCallsSoak(w io.Writer, r callsSoakResult) {
	fmt.Fprintf(w, "soak of %d concurrent calls for %.0f s (%s VAD): %d calls started, %d completed, %d dial errors; %d turns, %d answered, %d barge-ins (%d not silenced); %d goroutines left\n",
		r.Calls, r.Duration, r.VAD, r.Callers.Started, r.Callers.Completed, r.Callers.DialErrors, r.Callers.Turns, r.Callers.Answered,
		r.Callers.BargeIns, r.Callers.BargeLost, r.GoroutinesLeft)
	if len(r.EndReasons) > 0 {
		fmt.Fprintf(w, "calls not ended by their caller's hang-up, by reason: %v\n", r.EndReasons)
	}
	fmt.Fprintf(w, "%s\n", r.Soak.Verdict)
	if r.OK {
		fmt.Fprintln(w, "ok")
	} else {
		fmt.Fprintln(w, "FAILED")
	}
}
