package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/brisvox/brisvox/cmd/internal/admit"
	"github.com/brisvox/brisvox/cmd/internal/serve"
	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/sip"
	"github.com/brisvox/brisvox/sip/rtp"
	"github.com/brisvox/brisvox/sip/sdp"
	"github.com/brisvox/brisvox/sip/signal"
	"github.com/brisvox/brisvox/sip/trunk"
	"github.com/rs/zerolog"
)

// brisvox-bench admission [--admission fixed|measured|both] [--calls 40] [--rate 2] [--cost 0.1] [--json]
//
// admission offers more calls than the machine can carry and compares
// the two admissions of brisvox serve: a fixed call limit (set high, so
// it admits everything, as a limit sized for a lighter agent would) and
// admission from measured cost (cmd/internal/admit's Meter on the
// process's CPU time, ceiling 0.75 of GOMAXPROCS cores). It is sip-load's
// set-up (the SIP transport and serve in this process, sipp placing G.711
// calls from 127.0.0.2, the media peer child on 127.0.0.3 recording the
// kernel arrival time of every RTP packet of the bot's audio), with every
// call's VAD a synthetic model that burns --cost cores of CPU work every
// 20 ms of the call (admission_cost.go). sipp offers --calls at --rate; each call is held past the
// measured hold, which starts --settle after the last offer (so it sees
// the calls admitted, not the ramp), and a refused call (503) is ACKed
// and ends. It reports per run the calls offered, admitted and refused
// by cause, the peak live count, the server's CPU over the hold, and
// |arrival gap - 20 ms| of the bot's RTP over the hold (p50, p99, max),
// against --bound (p99).

// admissionScenario is sipp's call for the admission bench: load.xml's
// INVITE, and a 503 (refused) ACKed and ended instead of a failure.
const admissionScenario = `<?xml version="1.0" encoding="ISO-8859-1" ?>
<!DOCTYPE scenario SYSTEM "sipp.dtd">
<scenario name="brisvox admission">
  <send retrans="500">
    <![CDATA[
      INVITE sip:load@[remote_ip]:[remote_port] SIP/2.0
      Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
      From: sipp <sip:sipp@[local_ip]:[local_port]>;tag=[pid]SIPpTag00[call_number]
      To: <sip:load@[remote_ip]:[remote_port]>
      Call-ID: [call_id]
      CSeq: 1 INVITE
      Contact: <sip:sipp@[local_ip]:[local_port]>
      Max-Forwards: 70
      Content-Type: application/sdp
      Content-Length: [len]

      v=0
      o=sipp 1 1 IN IP4 [mediaip]
      s=-
      c=IN IP4 [mediaip]
      t=0 0
      m=audio [mediaport] RTP/AVP 0 101
      a=rtpmap:0 PCMU/8000
      a=rtpmap:101 telephone-event/8000
      a=fmtp:101 0-15
      a=ptime:20

    ]]>
  </send>
  <recv response="100" optional="true"/>
  <recv response="180" optional="true"/>
  <recv response="183" optional="true"/>
  <recv response="503" optional="true" next="refused"/>
  <recv response="200"/>
  <send>
    <![CDATA[
      ACK sip:load@[remote_ip]:[remote_port] SIP/2.0
      Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
      From: sipp <sip:sipp@[local_ip]:[local_port]>;tag=[pid]SIPpTag00[call_number]
      To: <sip:load@[remote_ip]:[remote_port]>[peer_tag_param]
      Call-ID: [call_id]
      CSeq: 1 ACK
      Contact: <sip:sipp@[local_ip]:[local_port]>
      Max-Forwards: 70
      Content-Length: 0

    ]]>
  </send>
  <pause/>
  <send retrans="500">
    <![CDATA[
      BYE sip:load@[remote_ip]:[remote_port] SIP/2.0
      Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
      From: sipp <sip:sipp@[local_ip]:[local_port]>;tag=[pid]SIPpTag00[call_number]
      To: <sip:load@[remote_ip]:[remote_port]>[peer_tag_param]
      Call-ID: [call_id]
      CSeq: 2 BYE
      Contact: <sip:sipp@[local_ip]:[local_port]>
      Max-Forwards: 70
      Content-Length: 0

    ]]>
  </send>
  <recv response="200" crlf="true" next="end"/>
  <label id="refused"/>
  <send>
    <![CDATA[
      ACK sip:load@[remote_ip]:[remote_port] SIP/2.0
      Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
      From: sipp <sip:sipp@[local_ip]:[local_port]>;tag=[pid]SIPpTag00[call_number]
      To: <sip:load@[remote_ip]:[remote_port]>[peer_tag_param]
      Call-ID: [call_id]
      CSeq: 1 ACK
      Max-Forwards: 70
      Content-Length: 0

    ]]>
  </send>
  <label id="end"/>
</scenario>
`

// admissionRun is one run's settings.
type admissionRun struct {
	Mode     string // fixed or measured
	Calls    int
	Rate     float64
	Cost     float64 // cores per call
	Ceiling  float64
	MaxCalls int
	Settle   time.Duration
	Hold     time.Duration
	Nice     int
	Quiet    float64 // wait for the machine's busy share to be at most this (0: no wait)
}

// admissionPlan is a run's timeline: sipp offers the calls over Offer;
// the media peer's hold starts Warmup after the first stream; every
// admitted call lasts Length, past the hold's end.
type admissionPlan struct {
	Offer, Warmup, Length, Timeout time.Duration
}

// planAdmission lays out a run: the offers take calls/rate; the hold
// begins settle after the last offer and lasts hold; a call admitted
// first is still live at its end (5 s slack). Timeout bounds sipp: the
// last offer's call ends Offer + Length after the start.
func planAdmission(calls int, rate float64, settle, hold time.Duration) admissionPlan {
	offer := time.Duration(float64(calls) / rate * float64(time.Second))
	p := admissionPlan{Offer: offer, Warmup: offer + settle}
	p.Length = p.Warmup + hold + 5*time.Second
	p.Timeout = offer + p.Length + 30*time.Second
	return p
}

// admissionReport is one run's result.
type admissionReport struct {
	Date       string  `json:"date"`
	Mode       string  `json:"admission"`
	Cores      int     `json:"cores"`
	GOMAXPROCS int     `json:"gomaxprocs"`
	Offered    int     `json:"offered"`
	Rate       float64 `json:"calls_per_second"`
	CostCores  float64 `json:"synthetic_cost_cores_per_call"`
	// SpinNS is the calibrated cost of one iteration of the synthetic
	// loop; Iters the iterations of a 20 ms tick.
	SpinNS   float64 `json:"spin_ns_per_iteration"`
	Iters    int     `json:"spin_iterations_per_tick"`
	Ceiling  float64 `json:"ceiling,omitempty"`
	MaxCalls int     `json:"max_calls"`
	// Admitted and Refused are the server's admission answers; Refused
	// by cause (overloaded, full, ...).
	Admitted int            `json:"admitted"`
	Refused  map[string]int `json:"refused"`
	Peak     int            `json:"server_peak_calls"`
	// SippSuccessful and SippFailed are sipp's calls: a refused call that
	// was ACKed counts as successful.
	SippSuccessful int     `json:"sipp_successful_calls"`
	SippFailed     int     `json:"sipp_failed_calls"`
	HoldS          float64 `json:"hold_s"`
	CPUTotal       float64 `json:"cpu_total_pct_of_core"`
	// Windows is the synthetic ticks burned over the hold; WindowsWant
	// those the live calls owed (one each 20 ms) had the cores kept up.
	Windows     uint64  `json:"synthetic_ticks_hold"`
	WindowsWant float64 `json:"synthetic_ticks_due_hold"`
	// MachineBusy is the share of all the machine's cores busy over the
	// hold (this process, its children and anyone else), Steal the share
	// the hypervisor gave to other guests; Load1 the load average at the
	// hold's end. A shared machine shows here.
	// BusyBefore is the machine's busy share over 2 s before the first
	// call (other processes: this one is idle then). Well above 0, the
	// cores GOMAXPROCS counts are not all this server's.
	BusyBefore  float64         `json:"machine_busy_share_before"`
	WaitedS     float64         `json:"waited_for_quiet_s"`
	MachineBusy float64         `json:"machine_busy_share"`
	Steal       float64         `json:"machine_steal_share"`
	Load1       float64         `json:"loadavg_1m"`
	Estimate    *admit.Estimate `json:"estimate,omitempty"`
	Media       sipMediaReport  `json:"media"`
	BoundMS     float64         `json:"bound_p99_ms"`
	Held        bool            `json:"bound_held"`
	Error       string          `json:"error,omitempty"`
}

func admission(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("admission", flag.ContinueOnError)
	fs.SetOutput(stderr)
	mode := fs.String("admission", "both", "fixed (--max-calls only), measured (the meter, --cpu-ceiling) or both (fixed, then measured)")
	calls := fs.Int("calls", 40, "calls offered")
	rate := fs.Float64("rate", 2, "calls offered per second")
	cost := fs.Float64("cost", 0.1, "synthetic CPU per call, in cores (0.1: 2 ms of work every 20 ms)")
	ceiling := fs.Float64("cpu-ceiling", admit.DefaultCeiling, "measured: the share of the cores the estimate stays under")
	maxCalls := fs.Int("max-calls", 1000, "the call limit of both modes (fixed: set past --calls, so it admits them all)")
	settle := fs.Duration("settle", 5*time.Second, "time after the last offer before the hold")
	hold := fs.Duration("hold", 30*time.Second, "the measured time")
	bound := fs.Duration("bound", 20*time.Millisecond, "the p99 jitter bound the report checks")
	nice := fs.Int("nice", 10, "nice value of sipp and the media peer (0: same priority as the server)")
	quiet := fs.Float64("wait-quiet", 0, "before each run, wait (at most 3 min) until the machine's busy share over 2 s is at most this (0: no wait)")
	asJSON := fs.Bool("json", false, "print the reports as JSON, one a line")
	if err := fs.Parse(args); err != nil || *calls <= 0 || !(*rate > 0) || !(*cost > 0) || *hold <= 0 {
		return 2
	}
	var modes []string
	switch *mode {
	case "fixed", "measured":
		modes = []string{*mode}
	case "both":
		modes = []string{"fixed", "measured"}
	default:
		fmt.Fprintf(stderr, "brisvox-bench: --admission %q: want fixed, measured or both\n", *mode)
		return 2
	}
	if _, err := exec.LookPath("sipp"); err != nil {
		fmt.Fprintln(stderr, "brisvox-bench: sipp is not installed (go tool task setup installs sip-tester)")
		return 1
	}
	code := 0
	for _, m := range modes {
		rep := runAdmission(admissionRun{Mode: m, Calls: *calls, Rate: *rate, Cost: *cost, Ceiling: *ceiling,
			MaxCalls: *maxCalls, Settle: *settle, Hold: *hold, Nice: *nice, Quiet: *quiet}, stderr)
		rep.BoundMS = float64(bound.Microseconds()) / 1000
		rep.Held = rep.Error == "" && rep.Media.P99MS <= rep.BoundMS
		if rep.Error != "" {
			code = 1
		}
		if *asJSON {
			b, _ := json.Marshal(rep)
			fmt.Fprintln(stdout, string(b))
			continue
		}
		printAdmission(stdout, rep)
	}
	return code
}

func printAdmission(w io.Writer, r admissionReport) {
	limit := fmt.Sprintf("max calls %d", r.MaxCalls)
	if r.Mode == "measured" {
		limit = fmt.Sprintf("ceiling %.2f of %d cores, max calls %d", r.Ceiling, r.GOMAXPROCS, r.MaxCalls)
	}
	fmt.Fprintf(w, "admission %s (%s): %d calls offered at %g/s, %.3f cores of synthetic work each (%d iterations of %.2f ns every 20 ms), %d cores, GOMAXPROCS %d\n",
		r.Mode, limit, r.Offered, r.Rate, r.CostCores, r.Iters, r.SpinNS, r.Cores, r.GOMAXPROCS)
	if r.Error != "" {
		fmt.Fprintf(w, "  failed: %s\n", r.Error)
	}
	fmt.Fprintf(w, "  admitted %d, refused %d %v; server peak %d live calls; sipp %d successful, %d failed\n",
		r.Admitted, sum(r.Refused), r.Refused, r.Peak, r.SippSuccessful, r.SippFailed)
	fmt.Fprintf(w, "  machine %.0f%% busy before the calls (other processes; waited %.0fs)\n", 100*r.BusyBefore, r.WaitedS)
	fmt.Fprintf(w, "  hold %.1fs: server CPU %.1f%% of a core; synthetic ticks %d of %.0f due; machine %.0f%% busy, %.0f%% stolen, load average %.1f\n",
		r.HoldS, r.CPUTotal, r.Windows, r.WindowsWant, 100*r.MachineBusy, 100*r.Steal, r.Load1)
	if e := r.Estimate; e != nil {
		fmt.Fprintf(w, "  meter: %.4f cores per call (measured %.4f over %d samples), baseline %.3f cores\n", e.PerCall, e.Measured, e.Samples, e.Baseline)
	}
	verdict := "held"
	if !r.Held {
		verdict = "NOT held"
	}
	fmt.Fprintf(w, "  bot RTP at the media peer: %d streams, %d packets, |gap-20ms| p50 %.2f ms, p99 %.2f ms, max %.2f ms; p99 bound %.0f ms %s\n",
		r.Media.Streams, r.Media.Packets, r.Media.P50MS, r.Media.P99MS, r.Media.MaxMS, r.BoundMS, verdict)
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// admissionCounter counts the server's admission answers by outcome.
type admissionCounter struct {
	mu       sync.Mutex
	admitted int
	refused  map[string]int
}

func (c *admissionCounter) wrap(next conn.Admitter) conn.Admitter {
	return func() (conn.Admission, error) {
		a, err := next()
		c.mu.Lock()
		defer c.mu.Unlock()
		var r *conn.Refusal
		switch {
		case err == nil:
			c.admitted++
		case errors.As(err, &r):
			c.refused[string(r.Cause)]++
		default:
			c.refused["error"]++
		}
		return a, err
	}
}

func (c *admissionCounter) counts() (int, map[string]int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.refused))
	for k, v := range c.refused {
		out[k] = v
	}
	return c.admitted, out
}

// runAdmission runs one mode: its own server, sipp and media peer.
func runAdmission(run admissionRun, stderr io.Writer) admissionReport {
	rep := admissionReport{Date: time.Now().UTC().Format(time.RFC3339), Mode: run.Mode, Cores: runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0), Offered: run.Calls, Rate: run.Rate, CostCores: run.Cost, MaxCalls: run.MaxCalls,
		Refused: map[string]int{}}
	fail := func(format string, a ...any) admissionReport {
		rep.Error = fmt.Sprintf(format, a...)
		return rep
	}
	plan := planAdmission(run.Calls, run.Rate, run.Settle, run.Hold)
	rep.SpinNS = calibrateSpin()
	const rate = 8000
	model := &costModel{window: rate / 50, every: 20 * time.Millisecond, iters: spinIters(run.Cost, 20*time.Millisecond, rep.SpinNS)}
	rep.Iters = model.iters
	words := int(plan.Length/(200*time.Millisecond)) + 10
	agent := talker{greeting: strings.TrimSpace(strings.Repeat("load ", words)),
		tts: providertest.TTSConfig{Rate: rate, Paced: true, Chunk: 200 * time.Millisecond}, vad: model.vadModel()}
	cfg := serve.Config{MaxCalls: run.MaxCalls, DrainTimeout: time.Second, ClosingTimeout: time.Second, Log: zerolog.Nop()}
	var meter *admit.Meter
	if run.Mode == "measured" {
		m, err := admit.New(admit.Config{Cores: float64(runtime.GOMAXPROCS(0)), Ceiling: run.Ceiling})
		if err != nil {
			return fail("meter: %v", err)
		}
		meter, cfg.Meter = m, m
		rep.Ceiling = m.Config().Ceiling
	}
	srv, err := serve.New(cfg, agent)
	if err != nil {
		return fail("serve: %v", err)
	}
	counter := &admissionCounter{refused: map[string]int{}}
	sipSrv, err := sip.New(sip.Config{
		Signal: signal.Config{Listen: []signal.Listen{{Network: "udp", Addr: sipServerIP + ":0"}}, Ringing: "none"},
		Trunk: trunk.Config{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
			Rate: 100 * run.Rate, Burst: int(200*run.Rate) + 10, MaxDialogsPerSource: run.Calls + 100},
		SDP:    sdp.Config{Codecs: []sdp.Codec{sdp.PCMU, sdp.PCMA}},
		Ports:  rtp.PortsConfig{Addr: netip.MustParseAddr(sipServerIP), Min: 41000, Max: 43000},
		Rate:   rate,
		Admit:  counter.wrap(srv.Admit),
		OnCall: func(c *sip.Call) { srv.Start(c) },
		Log:    zerolog.Nop(),
	})
	if err != nil {
		return fail("sip: %v", err)
	}
	if err := sipSrv.Start(); err != nil {
		return fail("sip: %v", err)
	}
	srv.Attach("sip", sipSrv.Stats, sipSrv.Close)
	ln, err := net.Listen("tcp", sipServerIP+":0") // Serve runs the meter's sampler
	if err != nil {
		sipSrv.Close()
		return fail("listen: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	defer func() { cancel(); <-served }()

	dir, err := os.MkdirTemp("", "admission")
	if err != nil {
		return fail("%v", err)
	}
	defer os.RemoveAll(dir)
	scenario := filepath.Join(dir, "admission.xml")
	if err := os.WriteFile(scenario, []byte(admissionScenario), 0o644); err != nil {
		return fail("%v", err)
	}
	mediaPort, err := freeUDPPort("127.0.0.3")
	if err != nil {
		return fail("media port: %v", err)
	}
	sippPort, err := freeUDPPort(sippIP)
	if err != nil {
		return fail("sipp port: %v", err)
	}
	self, err := os.Executable()
	if err != nil {
		return fail("%v", err)
	}
	// The machine's load before the first call, over 2 s; with
	// --wait-quiet, sampled again until it is at most that share (for at
	// most 3 minutes), so both modes start on a machine of their own.
	waitFrom := time.Now()
	for {
		before := readMachineTimes()
		time.Sleep(2 * time.Second)
		rep.BusyBefore, _ = readMachineTimes().shares(before)
		if run.Quiet <= 0 || rep.BusyBefore <= run.Quiet || time.Since(waitFrom) > 3*time.Minute {
			break
		}
	}
	rep.WaitedS = time.Since(waitFrom).Seconds()
	// One stream starts the media peer's clock: the hold is a window of
	// time, whatever number of calls was admitted.
	mediaCmd := exec.Command(self, "sip-media", "--addr", "127.0.0.3:"+strconv.Itoa(mediaPort), "--calls", "1",
		"--warmup", plan.Warmup.String(), "--hold", run.Hold.String(), "--wait", "30s")
	mediaCmd.Stderr = stderr
	pipe, err := mediaCmd.StdoutPipe()
	if err != nil {
		return fail("%v", err)
	}
	if err := mediaCmd.Start(); err != nil {
		return fail("media peer: %v", err)
	}
	renice(mediaCmd, run.Nice, stderr)
	time.Sleep(300 * time.Millisecond) // the media peer binds its socket
	sipp := exec.Command("sipp", "-sf", scenario, "-i", sippIP, "-p", strconv.Itoa(sippPort),
		"-key", "mediaip", "127.0.0.3", "-key", "mediaport", strconv.Itoa(mediaPort),
		"-r", strconv.FormatFloat(run.Rate, 'f', -1, 64), "-l", strconv.Itoa(run.Calls), "-m", strconv.Itoa(run.Calls),
		"-d", strconv.FormatInt(plan.Length.Milliseconds(), 10), "-trace_stat", "-stf", filepath.Join(dir, "stat.csv"), "-fd", "1",
		"-nostdin", "-max_socket", "1000", "-timeout", fmt.Sprintf("%ds", int(plan.Timeout.Seconds())),
		sipSrv.Addrs()[0].Addr.String())
	sipp.Dir = dir
	var sippOut strings.Builder
	sipp.Stdout, sipp.Stderr = &sippOut, &sippOut
	if err := sipp.Start(); err != nil {
		_ = mediaCmd.Process.Kill()
		_ = mediaCmd.Wait()
		return fail("sipp: %v", err)
	}
	renice(sipp, run.Nice, stderr)

	stopPeak := make(chan struct{})
	peakDone := make(chan struct{})
	var peak int
	go func() {
		defer close(peakDone)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stopPeak:
				return
			case <-t.C:
				peak = max(peak, len(srv.Live()))
			}
		}
	}()
	var cpu0, cpu1 time.Duration
	var t0, t1 time.Time
	var w0, w1 uint64
	var m0, m1 machineTimes
	var liveSum, liveN float64 // the live count over the hold, for the ticks due
	sc := bufio.NewScanner(pipe)
	for sc.Scan() {
		switch line := sc.Text(); {
		case line == "hold-start":
			cpu0, t0, w0, m0 = cpuTime(), time.Now(), model.burned.Load(), readMachineTimes()
			liveSum, liveN = float64(len(srv.Live())), 1
		case line == "hold-end":
			cpu1, t1, w1, m1 = cpuTime(), time.Now(), model.burned.Load(), readMachineTimes()
			rep.Load1 = loadavg1()
			liveSum, liveN = liveSum+float64(len(srv.Live())), liveN+1
			if meter != nil {
				e := meter.Estimate()
				rep.Estimate = &e
			}
		case strings.HasPrefix(line, "{"):
			if err := json.Unmarshal([]byte(line), &rep.Media); err != nil {
				fmt.Fprintln(stderr, "brisvox-bench: media peer:", err)
			}
		}
	}
	mediaErr := mediaCmd.Wait()
	sippErr := sipp.Wait()
	close(stopPeak)
	<-peakDone
	rep.Peak = peak
	rep.Admitted, rep.Refused = counter.counts()
	if s, f, err := sippCounts(filepath.Join(dir, "stat.csv")); err == nil {
		rep.SippSuccessful, rep.SippFailed = s, f
	} else {
		fmt.Fprintln(stderr, "brisvox-bench: sipp statistics:", err)
	}
	if t1.IsZero() || mediaErr != nil || rep.Media.Error != "" {
		return fail("media peer: %v %s; sipp: %v\n%s", mediaErr, rep.Media.Error, sippErr, tail(sippOut.String(), 20))
	}
	wall := t1.Sub(t0)
	rep.HoldS = wall.Seconds()
	rep.CPUTotal = 100 * float64(cpu1-cpu0) / float64(wall)
	rep.Windows = w1 - w0
	rep.MachineBusy, rep.Steal = m1.shares(m0)
	rep.WindowsWant = math.Round(liveSum / liveN * wall.Seconds() * 50)
	if sippErr != nil || rep.SippFailed > 0 {
		rep.Error = fmt.Sprintf("sipp: %v, %d failed calls\n%s", sippErr, rep.SippFailed, tail(sippOut.String(), 20))
	}
	return rep
}

// freeUDPPort is a UDP port free on ip now (the kernel's pick, released
// for a child to bind).
func freeUDPPort(ip string) (int, error) {
	c, err := net.ListenPacket("udp", ip+":0")
	if err != nil {
		return 0, err
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port, nil
}

// loadavg1 is the one-minute load average (0 when unreadable).
func loadavg1() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}
