package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/brisvox/brisvox/media/conn"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/brisvox/brisvox/actors/session"
	"github.com/brisvox/brisvox/actors/vad"
	"github.com/brisvox/brisvox/cmd/internal/serve"
	"github.com/brisvox/brisvox/media/webrtc"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/rs/zerolog"
)

// talker is the load's agent: mock providers and a greeting long enough
// to keep every call's output busy for the whole run. tts is the mock
// TTS's config: by default the whole greeting is synthesized at once;
// sip-load's hundreds of calls would then keep gigabytes of audio live
// and measure the garbage collector's marking, so it paces the synthesis
// in 200 ms chunks at the call's rate (no resampling in the pacer).
type talker struct {
	greeting string
	tts      providertest.TTSConfig
	// vad, when set, is every call's model VAD (sip-load --silero).
	vad *vad.Model
}

func (talker) Name() string { return "load" }

func (a talker) Session(serve.CallEnv) (session.Config, error) {
	return session.Config{
		STT:      providertest.NewMockSTT(providertest.STTConfig{}, nil),
		LLM:      providertest.NewMockLLM(providertest.LLMConfig{}),
		TTS:      providertest.NewMockTTS(a.tts),
		VADModel: a.vad,
		Greeting: a.greeting,
	}, nil
}

// loadReport is webrtc-load's result.
type loadReport struct {
	Calls       int     `json:"calls"`
	Complexity  int     `json:"opus_complexity"`
	Application string  `json:"opus_application"`
	GOMAXPROCS  int     `json:"gomaxprocs"`
	HoldS       float64 `json:"hold_s"`
	CPUPerCall  float64 `json:"cpu_per_call_pct_of_core"`
	CPUTotal    float64 `json:"cpu_total_pct_of_core"`
	Cores       int     `json:"cores"`
	MaxRSSMB    float64 `json:"server_max_rss_mb"`
	callersReport
	// SchedP99MS and SchedMaxMS are the server's goroutine scheduling
	// latencies over the hold (runtime/metrics /sched/latencies:seconds:
	// from runnable to running), the time a woken media tick can lose.
	SchedP50MS float64           `json:"server_sched_latency_p50_ms"`
	SchedP99MS float64           `json:"server_sched_latency_p99_ms"`
	Server     map[string]uint64 `json:"webrtc_counters,omitempty"`
}

// schedHist reads the scheduler latency histogram.
func schedHist() *metrics.Float64Histogram {
	s := []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		return nil
	}
	return s[0].Value.Float64Histogram()
}

// histQuantile is the q-quantile (upper bucket bound, in ms) of the counts
// added between a and b.
func histQuantile(a, b *metrics.Float64Histogram, q float64) float64 {
	if a == nil || b == nil {
		return 0
	}
	var total uint64
	for i := range b.Counts {
		total += b.Counts[i] - a.Counts[i]
	}
	if total == 0 {
		return 0
	}
	want := uint64(math.Ceil(q * float64(total)))
	var n uint64
	for i := range b.Counts {
		n += b.Counts[i] - a.Counts[i]
		if n >= want {
			return b.Buckets[i+1] * 1000
		}
	}
	return b.Buckets[len(b.Buckets)-1] * 1000
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func maxRSS() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Maxrss) / 1024 // KiB on Linux
}

func webrtcLoad(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("webrtc-load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	calls := fs.Int("calls", 60, "concurrent calls")
	hold := fs.Duration("hold", 30*time.Second, "the measured time")
	warmup := fs.Duration("warmup", 5*time.Second, "time after the last call connected before measuring")
	complexity := fs.Int("complexity", 5, "Opus encoder complexity (1-10)")
	application := fs.String("application", "audio", "Opus application of the output: audio or voip")
	niceCallers := fs.Int("nice-callers", 10, "the callers' process's nice value (0: same priority as the server)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	cpuProfile := fs.String("cpuprofile", "", "write the server's CPU profile of the hold to this file")
	if err := fs.Parse(args); err != nil || *calls <= 0 {
		return 2
	}
	// Speak for the whole run: the ramp, the warm-up, the hold and slack,
	// at about 200 ms a word.
	words := int((time.Duration(*calls)*20*time.Millisecond+*warmup+*hold+20*time.Second)/(200*time.Millisecond)) + 1
	text := strings.TrimSpace(strings.Repeat("load ", words))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(stderr, "brisvox-bench:", err)
		return 1
	}
	// The transport first: a bad setting is refused before anything runs.
	var srv *serve.Server
	w, err := webrtc.New(webrtc.Config{IncludeLoopback: true, OpusComplexity: *complexity, OpusApplication: *application,
		OnCall: func(c *webrtc.Call) { srv.Start(c) }, Admit: func() (conn.Admission, error) { return srv.Admit() }})
	if err != nil {
		_ = ln.Close()
		fmt.Fprintln(stderr, "brisvox-bench:", err)
		return 2
	}
	srv, err = serve.New(serve.Config{MaxCalls: *calls, DrainTimeout: time.Second, ClosingTimeout: time.Second, Log: zerolog.Nop()}, talker{greeting: text})
	if err != nil {
		_ = ln.Close()
		fmt.Fprintln(stderr, "brisvox-bench:", err)
		return 1
	}
	srv.Handle("/webrtc/", http.StripPrefix("/webrtc", w.Handler()), "webrtc", w.Stats, func() { _ = w.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	defer func() { cancel(); <-served }()

	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(stderr, "brisvox-bench:", err)
		return 1
	}
	child := exec.Command(self, "webrtc-callers", "--url", "http://"+ln.Addr().String()+"/webrtc",
		"--calls", strconv.Itoa(*calls), "--warmup", warmup.String(), "--hold", hold.String())
	child.Stderr = stderr
	pipe, err := child.StdoutPipe()
	if err != nil {
		fmt.Fprintln(stderr, "brisvox-bench:", err)
		return 1
	}
	if err := child.Start(); err != nil {
		fmt.Fprintln(stderr, "brisvox-bench:", err)
		return 1
	}
	if *niceCallers > 0 {
		// The load generator yields to the server, as if it ran on another
		// machine; its arrival times are the kernel's, so its own
		// scheduling does not enter the jitter.
		if err := syscall.Setpriority(syscall.PRIO_PROCESS, child.Process.Pid, *niceCallers); err != nil {
			fmt.Fprintln(stderr, "brisvox-bench: nice the callers:", err)
		}
	}
	rep := loadReport{Calls: *calls, Complexity: *complexity, Application: *application, GOMAXPROCS: runtime.GOMAXPROCS(0), Cores: runtime.NumCPU()}
	var cpu0, cpu1 time.Duration
	var sched0, sched1 *metrics.Float64Histogram
	var t0, t1 time.Time
	sc := bufio.NewScanner(pipe)
	for sc.Scan() {
		switch line := sc.Text(); {
		case line == "hold-start":
			cpu0, t0, sched0 = cpuTime(), time.Now(), schedHist()
			if *cpuProfile != "" {
				if f, err := os.Create(*cpuProfile); err == nil {
					_ = pprof.StartCPUProfile(f)
					defer f.Close()
				}
			}
		case line == "hold-end":
			cpu1, t1, sched1 = cpuTime(), time.Now(), schedHist()
			if *cpuProfile != "" {
				pprof.StopCPUProfile()
			}
			rep.Server = w.Stats()
		case strings.HasPrefix(line, "{"):
			if err := json.Unmarshal([]byte(line), &rep.callersReport); err != nil {
				fmt.Fprintln(stderr, "brisvox-bench: callers:", err)
			}
		}
	}
	if err := child.Wait(); err != nil || rep.Error != "" || t1.IsZero() {
		fmt.Fprintf(stderr, "brisvox-bench: callers failed: %v %s\n", err, rep.Error)
		return 1
	}
	wall := t1.Sub(t0)
	rep.HoldS = wall.Seconds()
	rep.CPUTotal = 100 * float64(cpu1-cpu0) / float64(wall)
	rep.CPUPerCall = rep.CPUTotal / float64(*calls)
	rep.MaxRSSMB = maxRSS()
	rep.SchedP50MS, rep.SchedP99MS = histQuantile(sched0, sched1, 0.5), histQuantile(sched0, sched1, 0.99)
	if *asJSON {
		b, _ := json.MarshalIndent(rep, "", "  ")
		fmt.Fprintln(stdout, string(b))
		return 0
	}
	fmt.Fprintf(stdout, "%d WebRTC calls on loopback, Opus %s complexity %d, %d cores, GOMAXPROCS %d, hold %.1fs\n", rep.Calls, rep.Application, rep.Complexity, rep.Cores, rep.GOMAXPROCS, rep.HoldS)
	fmt.Fprintf(stdout, "server CPU: %.1f%% of a core in all, %.2f%% per call; max RSS %.0f MB\n", rep.CPUTotal, rep.CPUPerCall, rep.MaxRSSMB)
	fmt.Fprintf(stdout, "server goroutine scheduling latency: p50 %.3f ms, p99 %.3f ms\n", rep.SchedP50MS, rep.SchedP99MS)
	fmt.Fprintf(stdout, "callers' process CPU: %.1f%% of a core\n", rep.CPU)
	fmt.Fprintf(stdout, "outbound frames at the callers: %d packets, |gap-20ms| p50 %.2f ms, p99 %.2f ms, max %.2f ms; %d calls short of packets\n",
		rep.Packets, rep.P50MS, rep.P99MS, rep.MaxMS, rep.Short)
	return 0
}
