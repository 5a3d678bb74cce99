package main

import (
	"bufio"
	"context"
	_ "embed"
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
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/brisvox/brisvox/actors/vad"
	"github.com/brisvox/brisvox/cmd/internal/serve"
	"github.com/brisvox/brisvox/media"
	"github.com/brisvox/brisvox/media/silero"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/sip"
	"github.com/brisvox/brisvox/sip/rtp"
	"github.com/brisvox/brisvox/sip/sdp"
	"github.com/brisvox/brisvox/sip/signal"
	"github.com/brisvox/brisvox/sip/trunk"
	"github.com/rs/zerolog"
)

// loadScenario is sipp's call: a G.711 INVITE whose SDP names the media
// peer, a pause of -d, a BYE.
//
//go:embed scenarios/load.xml
var loadScenario []byte

// The load's addresses: the server, sipp's signalling and the media peer
// each on their own loopback address.
const (
	sipServerIP = "127.0.0.1"
	sippIP      = "127.0.0.2"
	mediaPeer   = "127.0.0.3:40000"
)

// sipLoadReport is sip-load's result.
type sipLoadReport struct {
	Mode       string  `json:"mode"`
	Silero     bool    `json:"silero_vad"`
	Calls      int     `json:"calls"`
	Rate       float64 `json:"calls_per_second"`
	HoldS      float64 `json:"hold_s"`
	Cores      int     `json:"cores"`
	GOMAXPROCS int     `json:"gomaxprocs"`
	// Successful and Failed are sipp's call counts.
	Successful int `json:"sipp_successful_calls"`
	Failed     int `json:"sipp_failed_calls"`
	// Peak is the most calls live in the server at once.
	Peak       int     `json:"server_peak_calls"`
	CPUTotal   float64 `json:"cpu_total_pct_of_core"`
	CPUPerCall float64 `json:"cpu_per_call_pct_of_core"`
	RSSBaseMB  float64 `json:"server_rss_before_mb"`
	RSSHoldMB  float64 `json:"server_rss_hold_mb"`
	RSSPerCall float64 `json:"server_rss_per_call_kb"`
	// InviteP50MS.. are sipp's INVITE to 200 OK times (its response time
	// "invite", in ms: sipp measures them in whole milliseconds).
	InviteP50MS float64           `json:"invite_to_200_p50_ms"`
	InviteP99MS float64           `json:"invite_to_200_p99_ms"`
	InviteMaxMS float64           `json:"invite_to_200_max_ms"`
	Invites     int               `json:"invites_timed"`
	Media       sipMediaReport    `json:"media"`
	Server      map[string]uint64 `json:"sip_counters,omitempty"`
}

// sipLoad drives sipp against the SIP transport with the load agent (mock
// providers, the energy VAD, a greeting that keeps the bot speaking) and
// reports what the goals ask: calls held or placed per second,
// failures, CPU and RSS per call, INVITE to 200 times and the outbound
// RTP timing at the media peer.
func sipLoad(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sip-load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	calls := fs.Int("calls", 500, "hold mode: concurrent calls held")
	rate := fs.Float64("rate", 50, "new calls per second (the ramp in hold mode)")
	hold := fs.Duration("hold", 60*time.Second, "the measured time")
	warmup := fs.Duration("warmup", 5*time.Second, "hold mode: time after the last call connected before measuring")
	churn := fs.Bool("churn", false, "churn mode: --rate new calls per second for --hold, each --call-length long")
	callLength := fs.Duration("call-length", 2*time.Second, "churn mode: how long each call lasts")
	niceChildren := fs.Int("nice", 10, "nice value of sipp and the media peer (0: same priority as the server)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	useSilero := fs.Bool("silero", false, "every call's VAD is the Silero model (8 kHz, on the shared inference pool; needs .native/env)")
	if err := fs.Parse(args); err != nil || *calls <= 0 || *rate <= 0 {
		return 2
	}
	if _, err := exec.LookPath("sipp"); err != nil {
		fmt.Fprintln(stderr, "brisvox-bench: sipp is not installed (go tool task setup installs sip-tester)")
		return 1
	}
	rep := sipLoadReport{Mode: "hold", Calls: *calls, Rate: *rate, Cores: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0)}
	total, concurrent := *calls, *calls
	// In hold mode every call lasts the ramp, the warm-up, the hold and
	// slack; the bot speaks all of it.
	length := time.Duration(float64(*calls)/(*rate)*float64(time.Second)) + *warmup + *hold + 10*time.Second
	if *churn {
		rep.Mode = "churn"
		total = int(*rate * hold.Seconds())
		concurrent = int(math.Ceil(*rate*callLength.Seconds())) + int(*rate) // slack for BYE round trips
		length = *callLength
		rep.Calls = total
	}
	words := int(length/(200*time.Millisecond)) + 10
	text := strings.TrimSpace(strings.Repeat("load ", words))

	agent := talker{greeting: text, tts: providertest.TTSConfig{Rate: 8000, Paced: true, Chunk: 200 * time.Millisecond}}
	if *useSilero {
		pool, err := silero.NewPool(silero.PoolConfig{SampleRate: silero.Rate8k})
		if err != nil {
			fmt.Fprintln(stderr, "brisvox-bench: silero:", err)
			return 1
		}
		defer pool.Close()
		agent.vad = &vad.Model{
			NewScorer: func() (vad.Scorer, error) { return pool.NewScorer(0), nil },
			NewGate: func() vad.Gate {
				g, _ := media.NewSpeechGate(media.SpeechGateConfig{}) // the defaults are valid
				return g
			},
		}
		rep.Silero = true
	}
	srv, err := serve.New(serve.Config{MaxCalls: concurrent + 50, DrainTimeout: time.Second, ClosingTimeout: time.Second, Log: zerolog.Nop()}, agent)
	if err != nil {
		fmt.Fprintln(stderr, "brisvox-bench:", err)
		return 1
	}
	var peak int
	var sipSrv *sip.Server
	sipSrv, err = sip.New(sip.Config{
		Signal: signal.Config{Listen: []signal.Listen{{Network: "udp", Addr: sipServerIP + ":0"}}, Ringing: "none"},
		Trunk: trunk.Config{
			Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
			// One source (sipp) signals every call.
			Rate: 100 * (*rate), Burst: int(200 * (*rate)), MaxDialogsPerSource: concurrent + 100,
		},
		SDP:    sdp.Config{Codecs: []sdp.Codec{sdp.PCMU, sdp.PCMA}},
		Ports:  rtp.PortsConfig{Addr: netip.MustParseAddr(sipServerIP), Min: 20000, Max: 40000},
		Rate:   8000,
		Admit:  srv.Admit,
		OnCall: func(c *sip.Call) { srv.Start(c) },
		Log:    zerolog.Nop(),
	})
	if err != nil {
		fmt.Fprintln(stderr, "brisvox-bench:", err)
		return 1
	}
	if err := sipSrv.Start(); err != nil {
		fmt.Fprintln(stderr, "brisvox-bench:", err)
		return 1
	}
	srv.Attach("sip", sipSrv.Stats, sipSrv.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0") // /stats and /metrics while it runs
	if err != nil {
		sipSrv.Close()
		fmt.Fprintln(stderr, "brisvox-bench:", err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	defer func() { cancel(); <-served }()
	sipAddr := sipSrv.Addrs()[0].Addr

	dir, err := os.MkdirTemp("", "sip-load")
	if err != nil {
		fmt.Fprintln(stderr, "brisvox-bench:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	scenario := filepath.Join(dir, "load.xml")
	if err := os.WriteFile(scenario, loadScenario, 0o644); err != nil {
		fmt.Fprintln(stderr, "brisvox-bench:", err)
		return 1
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(stderr, "brisvox-bench:", err)
		return 1
	}
	mediaWait := length + 2*time.Minute
	mediaCalls := *calls
	mediaHold := *hold
	if *churn {
		mediaCalls, mediaHold = 1, *hold
	}
	media := exec.Command(self, "sip-media", "--addr", mediaPeer, "--calls", strconv.Itoa(mediaCalls),
		"--warmup", warmup.String(), "--hold", mediaHold.String(), "--wait", mediaWait.String())
	media.Stderr = stderr
	pipe, err := media.StdoutPipe()
	if err != nil {
		fmt.Fprintln(stderr, "brisvox-bench:", err)
		return 1
	}
	if err := media.Start(); err != nil {
		fmt.Fprintln(stderr, "brisvox-bench:", err)
		return 1
	}
	renice(media, *niceChildren, stderr)
	rep.RSSBaseMB = rssMB()
	time.Sleep(300 * time.Millisecond) // the media peer binds its socket
	sipp := exec.Command("sipp", "-sf", scenario, "-i", sippIP, "-key", "mediaip", strings.Split(mediaPeer, ":")[0],
		"-key", "mediaport", strings.Split(mediaPeer, ":")[1], "-r", strconv.FormatFloat(*rate, 'f', -1, 64),
		"-l", strconv.Itoa(concurrent), "-m", strconv.Itoa(total), "-d", strconv.FormatInt(length.Milliseconds(), 10),
		"-trace_rtt", "-rtt_freq", "1", "-trace_stat", "-stf", filepath.Join(dir, "stat.csv"), "-fd", "1",
		"-nostdin", "-max_socket", "10000", "-timeout", fmt.Sprintf("%ds", int((length+time.Duration(float64(total) / *rate * float64(time.Second))+2*time.Minute).Seconds())),
		sipAddr.String())
	sipp.Dir = dir
	var sippOut strings.Builder
	sipp.Stdout, sipp.Stderr = &sippOut, &sippOut
	if err := sipp.Start(); err != nil {
		fmt.Fprintln(stderr, "brisvox-bench: sipp:", err)
		return 1
	}
	renice(sipp, *niceChildren, stderr)
	stopPeak := make(chan struct{})
	peakDone := make(chan struct{})
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
	sc := bufio.NewScanner(pipe)
	for sc.Scan() {
		switch line := sc.Text(); {
		case line == "hold-start":
			cpu0, t0 = cpuTime(), time.Now()
		case line == "hold-end":
			cpu1, t1 = cpuTime(), time.Now()
			rep.RSSHoldMB = rssMB()
			rep.Server = sipSrv.Stats()
		case strings.HasPrefix(line, "{"):
			if err := json.Unmarshal([]byte(line), &rep.Media); err != nil {
				fmt.Fprintln(stderr, "brisvox-bench: media peer:", err)
			}
		}
	}
	mediaErr := media.Wait()
	sippErr := sipp.Wait()
	close(stopPeak)
	<-peakDone
	rep.Peak = peak
	if s, f, err := sippCounts(filepath.Join(dir, "stat.csv")); err == nil {
		rep.Successful, rep.Failed = s, f
	} else {
		fmt.Fprintln(stderr, "brisvox-bench: sipp statistics:", err)
	}
	if ms, err := sippRTTs(dir); err == nil && len(ms) > 0 {
		slices.Sort(ms)
		rep.Invites = len(ms)
		rep.InviteP50MS, rep.InviteP99MS, rep.InviteMaxMS = ms[len(ms)/2], ms[len(ms)*99/100], ms[len(ms)-1]
	} else {
		fmt.Fprintln(stderr, "brisvox-bench: sipp response times:", err)
	}
	if t1.IsZero() || mediaErr != nil || rep.Media.Error != "" {
		fmt.Fprintf(stderr, "brisvox-bench: media peer failed: %v %s\nsipp: %v\n%s\n", mediaErr, rep.Media.Error, sippErr, tail(sippOut.String(), 40))
		return 1
	}
	wall := t1.Sub(t0)
	rep.HoldS = wall.Seconds()
	rep.CPUTotal = 100 * float64(cpu1-cpu0) / float64(wall)
	held := *calls
	if *churn {
		held = max(1, int(*rate*callLength.Seconds()))
	}
	rep.CPUPerCall = rep.CPUTotal / float64(held)
	rep.RSSPerCall = (rep.RSSHoldMB - rep.RSSBaseMB) * 1024 / float64(held)
	if sippErr != nil && !errors.Is(sippErr, context.Canceled) {
		fmt.Fprintf(stderr, "brisvox-bench: sipp: %v\n%s\n", sippErr, tail(sippOut.String(), 40))
	}
	if *asJSON {
		b, _ := json.MarshalIndent(rep, "", "  ")
		fmt.Fprintln(stdout, string(b))
	} else {
		fmt.Fprintf(stdout, "sip-load %s: %d calls, %.0f calls/s, Silero VAD %v, %d cores, GOMAXPROCS %d, hold %.1fs\n", rep.Mode, rep.Calls, rep.Rate, rep.Silero, rep.Cores, rep.GOMAXPROCS, rep.HoldS)
		fmt.Fprintf(stdout, "sipp: %d successful, %d failed; server peak %d live calls\n", rep.Successful, rep.Failed, rep.Peak)
		fmt.Fprintf(stdout, "server CPU: %.1f%% of a core in all, %.3f%% per call; RSS %.0f MB before, %.0f MB at the hold (%.0f KB per call)\n", rep.CPUTotal, rep.CPUPerCall, rep.RSSBaseMB, rep.RSSHoldMB, rep.RSSPerCall)
		fmt.Fprintf(stdout, "INVITE to 200 (sipp, %d calls): p50 %.0f ms, p99 %.0f ms, max %.0f ms\n", rep.Invites, rep.InviteP50MS, rep.InviteP99MS, rep.InviteMaxMS)
		fmt.Fprintf(stdout, "outbound RTP at the media peer: %d streams, %d packets, |gap-20ms| p50 %.2f ms, p99 %.2f ms, max %.2f ms; %d streams short; media peer CPU %.1f%%\n",
			rep.Media.Streams, rep.Media.Packets, rep.Media.P50MS, rep.Media.P99MS, rep.Media.MaxMS, rep.Media.Short, rep.Media.CPU)
	}
	if rep.Failed > 0 || sippErr != nil {
		return 1
	}
	return 0
}

// renice lowers a child's priority: the load generators yield to the
// server, as if they ran on another machine.
func renice(c *exec.Cmd, n int, stderr io.Writer) {
	if n <= 0 {
		return
	}
	if err := syscall.Setpriority(syscall.PRIO_PROCESS, c.Process.Pid, n); err != nil {
		fmt.Fprintln(stderr, "brisvox-bench: nice:", err)
	}
}

// rssMB is the process's resident set now (VmRSS).
func rssMB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			return kb / 1024
		}
	}
	return 0
}

// sippCounts reads the last line of sipp's statistics file: successful
// and failed calls (cumulative columns).
func sippCounts(path string) (ok, failed int, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, err
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) < 2 {
		return 0, 0, fmt.Errorf("%s: no statistics", path)
	}
	head := strings.Split(lines[0], ";")
	last := strings.Split(lines[len(lines)-1], ";")
	col := func(name string) (int, error) {
		for i, h := range head {
			if h == name && i < len(last) {
				return strconv.Atoi(strings.TrimSpace(last[i]))
			}
		}
		return 0, fmt.Errorf("%s: no column %s", path, name)
	}
	if ok, err = col("SuccessfulCall(C)"); err != nil {
		return 0, 0, err
	}
	failed, err = col("FailedCall(C)")
	return ok, failed, err
}

// sippRTTs reads sipp's response times file (-trace_rtt): one line per
// measured response, "date_ms;response_time_ms;rtd_no".
func sippRTTs(dir string) ([]float64, error) {
	files, _ := filepath.Glob(filepath.Join(dir, "*_rtt.csv"))
	if len(files) == 0 {
		return nil, fmt.Errorf("no rtt file in %s", dir)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		return nil, err
	}
	var out []float64
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Split(strings.TrimSpace(line), ";")
		if len(f) < 2 {
			continue
		}
		v, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			continue // the header
		}
		out = append(out, v)
	}
	return out, nil
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
