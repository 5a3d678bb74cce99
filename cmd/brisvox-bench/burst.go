package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/brisvox/brisvox/media"
	"github.com/brisvox/brisvox/media/g722"
	"github.com/brisvox/brisvox/media/webrtc/webrtctest"
	"github.com/coder/websocket"
)

// The burst's transports, in the order --transport all runs them.
var burstTransports = []string{"pcm", "twilio", "webrtc", "sip"}

// burstConfig is what one burst run needs.
type burstConfig struct {
	Brisvox   string
	Agent     string
	Transport string
	MaxCalls  int
	Conns     int
	Hold      time.Duration
	Settle    []time.Duration
	// Sources spreads the connections over this many loopback addresses
	// (127.0.0.2 and up), so that a per-source limit does not stand in
	// for the admission limit measured here.
	Sources int
	Log     io.Writer // the child's stderr lines, when set
	// SmapsDir, when set, receives a copy of the child's /proc/PID/smaps
	// at each memory sample but the peak's (at the burst's end instead),
	// to tell which mappings grew.
	SmapsDir string
	// Rounds repeats the burst on the same child, each after the last
	// one's settle samples: a pool that grew to its bound in the first
	// does not grow again, a leak does.
	Rounds int
	// OverCapacity serves a copy of the agent with [serve] over_capacity
	// = true, for a --max-calls above the agent's capacity.
	OverCapacity bool
	// Speech, when set, is a WAV file every PCM caller says at the start
	// of its hold instead of silence (a recognizer decoder is taken at
	// speech start).
	Speech string
}

// burstReport is one burst's result.
type burstReport struct {
	Date      string  `json:"date"`
	Transport string  `json:"transport"`
	Conns     int     `json:"conns"`
	Rounds    int     `json:"rounds"`
	MaxCalls  int     `json:"max_calls"`
	HoldS     float64 `json:"hold_s"`
	// Admitted held for the whole hold; Upgraded were answered (101,
	// 200 OK), Admitted and Closed together.
	Admitted int `json:"admitted"`
	Upgraded int `json:"upgraded"`
	// Refused were answered 503 before any upgrade; RetryAfter of them
	// carried a Retry-After; Causes counts their bodies (SIP: the reason
	// phrase).
	Refused    int            `json:"refused_503"`
	RetryAfter int            `json:"refused_with_retry_after"`
	Causes     map[string]int `json:"refusal_causes,omitempty"`
	// Closed were answered and then ended by the server before the hold
	// was over; CloseCodes counts "code reason" (SIP: "BYE").
	Closed     int            `json:"admitted_then_closed"`
	CloseCodes map[string]int `json:"close_codes,omitempty"`
	Failed     int            `json:"other_failures"`
	Failures   map[string]int `json:"failures,omitempty"`
	// Memory is the child's memory: before the burst, the peak during it
	// (each field's maximum over 200 ms samples), then at each settle
	// point after the last connection ended.
	Memory []memSample `json:"memory"`
	// Logs counts the child's log lines during the run, by level and
	// message.
	Logs map[string]int `json:"child_log_lines,omitempty"`
	// WallS is the burst from the barrier to the last connection's end.
	WallS float64 `json:"burst_wall_s"`
	// Error says why the run did not finish (the child did not serve).
	Error string `json:"error,omitempty"`
}

// memSample is the child's memory at one moment, in MB (2^20 bytes).
type memSample struct {
	At string `json:"at"`
	// VmRSS and VmHWM are /proc/PID/status's; Anon is the anonymous part
	// of the RSS (smaps_rollup), the memory that is not the binary's or
	// the libraries' file pages.
	VmRSS float64 `json:"vm_rss_mb"`
	VmHWM float64 `json:"vm_hwm_mb"`
	Anon  float64 `json:"rss_anon_mb"`
	// HeapInuse.. are the child's /metrics (the Go runtime's view);
	// GoSys is all the runtime got from the OS, HeapReleased what it gave
	// back of it.
	HeapInuse    float64 `json:"heap_inuse_mb"`
	HeapAlloc    float64 `json:"heap_alloc_mb"`
	HeapIdle     float64 `json:"heap_idle_mb"`
	HeapReleased float64 `json:"heap_released_mb"`
	StackInuse   float64 `json:"stack_inuse_mb"`
	GoSys        float64 `json:"go_sys_mb"`
	Goroutines   int     `json:"goroutines"`
	LiveCalls    int     `json:"live_calls"`
}

// outcome is how one connection of the burst went.
type outcome struct {
	kind   outcomeKind
	detail string // the close code, the refusal's cause or the failure
	retry  bool   // a refusal carried Retry-After
}

type outcomeKind uint8

const (
	outFailed outcomeKind = iota
	outAdmitted
	outRefused
	outClosed
)

// burst opens --conns connections at once against a brisvox serve child
// and reports how many were admitted, refused or closed, and the child's
// memory before, during and after.
func burst(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("burst", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg burstConfig
	fs.StringVar(&cfg.Brisvox, "brisvox", "", "the brisvox binary to serve with (go build -o first); required")
	fs.StringVar(&cfg.Agent, "agent", "examples/agents/local.toml", "the agent file the child serves")
	fs.StringVar(&cfg.Transport, "transport", "pcm", "pcm, twilio, webrtc, sip or all (each on a fresh child)")
	fs.IntVar(&cfg.MaxCalls, "max-calls", 20, "the child's --max-calls")
	fs.IntVar(&cfg.Conns, "conns", 200, "connections opened at once")
	fs.DurationVar(&cfg.Hold, "hold", 10*time.Second, "how long an admitted connection holds, streaming silence")
	fs.IntVar(&cfg.Sources, "sources", 200, "loopback source addresses the connections come from (127.0.0.2 and up, at most 250)")
	fs.IntVar(&cfg.Rounds, "rounds", 1, "bursts in a row on the same child (each followed by the settle samples)")
	fs.BoolVar(&cfg.OverCapacity, "over-capacity", false, "serve a copy of the agent with over_capacity = true in [serve] (a --max-calls above its capacity)")
	fs.StringVar(&cfg.Speech, "speech", "", "pcm only: a WAV file each admitted caller says first (then silence), to load the recognizer's decoders")
	settle := fs.String("settle", "5s,30s,60s", "memory samples after the burst ended, comma-separated")
	childLog := fs.String("child-log", "", "append the child's log lines to this file")
	fs.StringVar(&cfg.SmapsDir, "smaps-dir", "", "copy the child's /proc/PID/smaps here at each memory sample (TRANSPORT-AT.smaps)")
	asJSON := fs.Bool("json", false, "print the reports as a JSON array")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		return 2
	}
	for s := range strings.SplitSeq(*settle, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil || d < 0 || (len(cfg.Settle) > 0 && d < cfg.Settle[len(cfg.Settle)-1]) {
			fmt.Fprintf(stderr, "brisvox-bench: --settle: %q: want increasing durations\n", s)
			return 2
		}
		cfg.Settle = append(cfg.Settle, d)
	}
	transports := []string{cfg.Transport}
	if cfg.Transport == "all" {
		transports = burstTransports
	}
	switch {
	case cfg.Brisvox == "":
		fmt.Fprintln(stderr, "brisvox-bench: burst needs --brisvox PATH (go build -o bin/brisvox ./cmd/brisvox)")
		return 2
	case cfg.Conns <= 0 || cfg.MaxCalls <= 0 || cfg.Hold <= 0 || cfg.Sources <= 0 || cfg.Sources > 250 || cfg.Rounds <= 0:
		fmt.Fprintln(stderr, "brisvox-bench: burst: --conns, --max-calls, --hold, --rounds and --sources must be positive (--sources at most 250)")
		return 2
	case cfg.Speech != "" && cfg.Transport != "pcm":
		fmt.Fprintln(stderr, "brisvox-bench: burst: --speech is for --transport pcm")
		return 2
	case !slices.Contains(burstTransports, cfg.Transport) && cfg.Transport != "all":
		fmt.Fprintf(stderr, "brisvox-bench: burst: --transport %q: want pcm, twilio, webrtc, sip or all\n", cfg.Transport)
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
	var reps []burstReport
	code := 0
	for _, tr := range transports {
		c := cfg
		c.Transport = tr
		rep, err := runBurst(context.Background(), c)
		if err != nil {
			// The next transport still runs (the keyless agent cannot
			// serve Twilio's 8 kHz): the report says why this one did not.
			fmt.Fprintf(stderr, "brisvox-bench: burst %s: %v\n", tr, err)
			rep.Error, code = err.Error(), 1
		}
		reps = append(reps, rep)
		if !*asJSON && err == nil {
			printBurst(stdout, rep)
		}
	}
	if *asJSON {
		b, _ := json.MarshalIndent(reps, "", "  ")
		fmt.Fprintln(stdout, string(b))
	}
	return code
}

func printBurst(w io.Writer, r burstReport) {
	fmt.Fprintf(w, "burst %s: %d connections at once x %d round(s), --max-calls %d, hold %.1fs (%s)\n", r.Transport, r.Conns, r.Rounds, r.MaxCalls, r.HoldS, r.Date)
	fmt.Fprintf(w, "  admitted (held) %d, upgraded %d, refused 503 %d (%d with Retry-After), admitted then closed %d, other failures %d; burst %.1fs\n",
		r.Admitted, r.Upgraded, r.Refused, r.RetryAfter, r.Closed, r.Failed, r.WallS)
	for _, m := range []struct {
		name string
		v    map[string]int
	}{{"refusal causes", r.Causes}, {"close codes", r.CloseCodes}, {"failures", r.Failures}, {"child log lines", r.Logs}} {
		for _, k := range slices.Sorted(maps.Keys(m.v)) {
			fmt.Fprintf(w, "  %s: %q x%d\n", m.name, k, m.v[k])
		}
	}
	fmt.Fprintf(w, "  %-10s %7s %7s %7s %10s %10s %9s %9s %7s %7s %6s %5s\n", "memory MB", "VmRSS", "VmHWM", "anon", "heap_inuse", "heap_alloc", "heap_idle", "released", "stacks", "go_sys", "gorout", "calls")
	for _, m := range r.Memory {
		fmt.Fprintf(w, "  %-10s %7.1f %7.1f %7.1f %10.1f %10.1f %9.1f %9.1f %7.1f %7.1f %6d %5d\n", m.At, m.VmRSS, m.VmHWM, m.Anon, m.HeapInuse, m.HeapAlloc, m.HeapIdle, m.HeapReleased, m.StackInuse, m.GoSys, m.Goroutines, m.LiveCalls)
	}
}

// runBurst runs one transport's burst on a fresh child.
func runBurst(ctx context.Context, cfg burstConfig) (burstReport, error) {
	rep := burstReport{Date: time.Now().UTC().Format("2006-01-02"), Transport: cfg.Transport, Conns: cfg.Conns, Rounds: cfg.Rounds, MaxCalls: cfg.MaxCalls, HoldS: cfg.Hold.Seconds(),
		Causes: map[string]int{}, CloseCodes: map[string]int{}, Failures: map[string]int{}}
	agent := cfg.Agent
	if cfg.Transport == "twilio" || cfg.OverCapacity {
		dir, err := os.MkdirTemp("", "burst-agent")
		if err != nil {
			return rep, err
		}
		defer os.RemoveAll(dir)
		if agent, err = agentCopy(cfg.Agent, dir, cfg.Transport == "twilio", cfg.OverCapacity); err != nil {
			return rep, err
		}
	}
	ch, err := startChild(ctx, cfg.Brisvox, agent, cfg.MaxCalls, cfg.Transport == "sip", cfg.Log)
	if err != nil {
		return rep, err
	}
	defer ch.stop()
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	defer hc.CloseIdleConnections()
	before, err := ch.sample(hc, "before")
	if err != nil {
		return rep, err
	}
	rep.Memory = append(rep.Memory, before)
	ch.copySmaps(cfg, "before")
	ch.logs.reset() // the start-up's lines are not the burst's

	b := &burster{cfg: cfg, base: ch.base, sipAddr: ch.sipAddr, silence: g722Silence()}
	if cfg.Speech != "" {
		if b.speech, err = loadSpeech(cfg.Speech); err != nil {
			return rep, err
		}
	}
	for round := range cfg.Rounds {
		prefix := ""
		if cfg.Rounds > 1 {
			prefix = fmt.Sprintf("r%d ", round+1)
		}
		if err := b.round(ctx, ch, hc, prefix, &rep); err != nil {
			return rep, err
		}
	}
	rep.Logs = ch.logs.snapshot()
	return rep, nil
}

// round runs one burst on the child and adds its outcomes and memory rows
// (labelled with prefix) to rep.
func (b *burster) round(ctx context.Context, ch *child, hc *http.Client, prefix string, rep *burstReport) error {
	cfg := b.cfg
	// The peak: each field's maximum over samples every 200 ms from the
	// barrier to the last connection's end.
	peak := memSample{At: prefix + "peak"}
	sampling := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Go(func() {
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-sampling:
				return
			case <-tick.C:
			}
			if m, err := ch.sample(hc, ""); err == nil {
				peak = maxSample(peak, m)
			}
		}
	})
	start := make(chan struct{})
	outcomes := make([]outcome, cfg.Conns)
	var conns sync.WaitGroup
	for i := range cfg.Conns {
		conns.Go(func() { outcomes[i] = b.conn(ctx, i, start) })
	}
	began := time.Now()
	close(start)
	conns.Wait()
	ended := time.Now()
	rep.WallS = max(rep.WallS, ended.Sub(began).Seconds())
	ch.copySmaps(cfg, prefix+"end")
	close(sampling)
	sampler.Wait()
	if m, err := ch.sample(hc, ""); err == nil {
		peak = maxSample(peak, m)
	}
	rep.Memory = append(rep.Memory, peak)
	for _, d := range cfg.Settle {
		time.Sleep(time.Until(ended.Add(d)))
		m, err := ch.sample(hc, prefix+"+"+d.String())
		if err != nil {
			return err
		}
		rep.Memory = append(rep.Memory, m)
		ch.copySmaps(cfg, m.At)
	}
	for _, o := range outcomes {
		switch o.kind {
		case outAdmitted:
			rep.Admitted++
			rep.Upgraded++
		case outClosed:
			rep.Closed++
			rep.Upgraded++
			rep.CloseCodes[o.detail]++
		case outRefused:
			rep.Refused++
			rep.Causes[o.detail]++
			if o.retry {
				rep.RetryAfter++
			}
		default:
			rep.Failed++
			rep.Failures[o.detail]++
		}
	}
	return nil
}

// maxSample keeps each field's maximum.
func maxSample(a, b memSample) memSample {
	return memSample{At: a.At, VmRSS: max(a.VmRSS, b.VmRSS), VmHWM: max(a.VmHWM, b.VmHWM), Anon: max(a.Anon, b.Anon),
		HeapInuse: max(a.HeapInuse, b.HeapInuse), HeapAlloc: max(a.HeapAlloc, b.HeapAlloc), HeapIdle: max(a.HeapIdle, b.HeapIdle), HeapReleased: max(a.HeapReleased, b.HeapReleased),
		StackInuse: max(a.StackInuse, b.StackInuse), GoSys: max(a.GoSys, b.GoSys),
		Goroutines: max(a.Goroutines, b.Goroutines), LiveCalls: max(a.LiveCalls, b.LiveCalls)}
}

// agentCopy writes a copy of the agent file into dir with the Twilio
// transport enabled (twilio) and the call limit allowed above the agent's
// capacity (overCapacity). The agent's STT must hear 8 kHz for Twilio:
// the keyless agent's pocketsphinx does not, and the child refuses to
// serve it (the report says so).
func agentCopy(path, dir string, twilio, overCapacity bool) (string, error) {
	if ext := filepath.Ext(path); ext != ".toml" {
		return "", fmt.Errorf("%s: only a TOML agent file can be edited for --transport twilio or --over-capacity", path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	src := string(b)
	if twilio {
		var ok bool
		if src, ok = enableTwilio(src); !ok {
			return "", fmt.Errorf("%s: no [transports.twilio] table with enabled = false to turn on", path)
		}
	}
	if overCapacity {
		src = allowOverCapacity(src)
	}
	name := filepath.Join(dir, "burst-"+filepath.Base(path))
	return name, os.WriteFile(name, []byte(src), 0o600)
}

// allowOverCapacity sets over_capacity = true in [serve], adding the
// table at the end when there is none.
func allowOverCapacity(src string) string {
	lines := strings.Split(src, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) == "[serve]" {
			return strings.Join(slices.Insert(lines, i+1, "over_capacity = true"), "\n")
		}
	}
	return strings.TrimRight(src, "\n") + "\n\n[serve]\nover_capacity = true\n"
}

// enableTwilio turns `enabled = false` in [transports.twilio] on.
func enableTwilio(src string) (string, bool) {
	lines := strings.Split(src, "\n")
	in := false
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "[") {
			in = t == "[transports.twilio]"
			continue
		}
		if in && strings.HasPrefix(t, "enabled") {
			if k, v, ok := strings.Cut(t, "="); ok && strings.TrimSpace(k) == "enabled" {
				if strings.HasPrefix(strings.TrimSpace(v), "true") {
					return src, true
				}
				lines[i] = "enabled = true"
				return strings.Join(lines, "\n"), true
			}
		}
	}
	return src, false
}

// child is a brisvox serve process.
type child struct {
	cmd     *exec.Cmd
	base    string // http://127.0.0.1:PORT
	sipAddr string // its SIP UDP address, when asked for
	logs    *logTally
	readers sync.WaitGroup
	stopped sync.Once
	records string // its records directory, removed at stop
}

// startChild runs brisvox serve on loopback ports and waits until it
// serves (and, with wantSIP, until it said its SIP address).
func startChild(ctx context.Context, bin, agent string, maxCalls int, wantSIP bool, logTo io.Writer) (*child, error) {
	// The child keeps its call records (their cost is the engine's) in
	// a directory of its own, never beside the shared agent file.
	records, err := os.MkdirTemp("", "brisvox-bench-records-")
	if err != nil {
		return nil, err
	}
	served := false
	defer func() {
		if !served {
			_ = os.RemoveAll(records)
		}
	}()
	cmd := exec.CommandContext(ctx, bin, "serve", "--agent", agent, "--addr", "127.0.0.1:0", "--sip-addr", "127.0.0.1:0",
		"--max-calls", strconv.Itoa(maxCalls), "--drain", "5s", "--log-level", "info", "--records-dir", records)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlives the bench
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 20 * time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &child{cmd: cmd, logs: &logTally{counts: map[string]int{}}, records: records}
	// The addresses come as lines after the start: the HTTP one, then
	// the SIP ones when the agent serves SIP.
	serving, sip := make(chan string, 4), make(chan string, 4)
	c.readers.Go(func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			if _, rest, ok := strings.Cut(line, " on http://"); ok && strings.HasPrefix(line, "brisvox: serving agent") {
				serving <- "http://" + strings.TrimSuffix(strings.Fields(rest)[0], "/")
			}
			if rest, ok := strings.CutPrefix(line, "brisvox: SIP on udp "); ok {
				select {
				case sip <- strings.TrimSpace(rest):
				default:
				}
			}
		}
		close(serving)
	})
	c.readers.Go(func() { c.logs.read(stderr, logTo) })
	select {
	case base, ok := <-serving:
		if !ok {
			c.stop()
			return nil, fmt.Errorf("%s serve exited before serving:\n%s", bin, c.logs.last())
		}
		c.base = base
	case <-time.After(3 * time.Minute):
		c.stop()
		return nil, errors.New("the child did not serve within 3 minutes")
	}
	if wantSIP {
		select {
		case c.sipAddr = <-sip:
		case <-time.After(10 * time.Second): // its lines follow the serving line at once
			c.stop()
			return nil, errors.New("the child serves no SIP over UDP (the agent's [transports.sip])")
		}
	}
	served = true
	return c, nil
}

// stop ends the child (SIGTERM, then SIGKILL after WaitDelay) and waits
// for it and its readers.
func (c *child) stop() {
	c.stopped.Do(func() {
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { c.readers.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = c.cmd.Process.Kill()
			<-done
		}
		_ = c.cmd.Wait()
		_ = os.RemoveAll(c.records)
	})
}

// sample reads the child's memory now.
func (c *child) sample(hc *http.Client, at string) (memSample, error) {
	m := memSample{At: at}
	pid := c.cmd.Process.Pid
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return m, err
	}
	m.VmRSS, m.VmHWM = procKB(status, "VmRSS:")/1024, procKB(status, "VmHWM:")/1024
	if rollup, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid)); err == nil {
		m.Anon = procKB(rollup, "Anonymous:") / 1024
	}
	resp, err := hc.Get(c.base + "/metrics")
	if err != nil {
		return m, fmt.Errorf("metrics: %w", err)
	}
	defer resp.Body.Close()
	vals := promValues(resp.Body)
	const mb = 1 << 20
	m.HeapInuse, m.HeapIdle, m.HeapReleased = vals["go_memstats_heap_inuse_bytes"]/mb, vals["go_memstats_heap_idle_bytes"]/mb, vals["go_memstats_heap_released_bytes"]/mb
	m.HeapAlloc = vals["go_memstats_heap_alloc_bytes"] / mb
	m.StackInuse, m.GoSys = vals["go_memstats_stack_inuse_bytes"]/mb, vals["go_memstats_sys_bytes"]/mb
	m.Goroutines, m.LiveCalls = int(vals["go_goroutines"]), int(vals["brisvox_calls_active"])
	return m, nil
}

// copySmaps copies the child's smaps to cfg.SmapsDir, when set.
func (c *child) copySmaps(cfg burstConfig, at string) {
	if cfg.SmapsDir == "" {
		return
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", c.cmd.Process.Pid))
	if err == nil {
		_ = os.WriteFile(filepath.Join(cfg.SmapsDir, cfg.Transport+"-"+at+".smaps"), b, 0o644)
	}
}

// procKB is the value in kB of a /proc "Name:  123 kB" line.
func procKB(b []byte, name string) float64 {
	for line := range bytes.Lines(b) {
		if rest, ok := bytes.CutPrefix(line, []byte(name)); ok {
			f := bytes.Fields(rest)
			if len(f) > 0 {
				v, _ := strconv.ParseFloat(string(f[0]), 64)
				return v
			}
		}
	}
	return 0
}

// promValues reads a Prometheus text exposition: each series' value by
// its name without labels (the last series of a name wins; the ones read
// here have one).
func promValues(r io.Reader) map[string]float64 {
	vals := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		name, _, _ := strings.Cut(f[0], "{")
		if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
			vals[name] = v
		}
	}
	return vals
}

// logTally counts the child's JSON log lines by level and message.
type logTally struct {
	mu     sync.Mutex
	counts map[string]int
	tail   []string // the last lines, for an error
}

func (t *logTally) read(r io.Reader, copyTo io.Writer) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if copyTo != nil {
			_, _ = copyTo.Write(append(line, '\n'))
		}
		var l struct {
			Level   string `json:"level"`
			Message string `json:"message"`
		}
		key := "(not JSON)"
		if json.Unmarshal(line, &l) == nil {
			key = l.Level + " " + l.Message
		}
		t.mu.Lock()
		t.counts[key]++
		t.tail = append(t.tail, string(line))
		if len(t.tail) > 8 {
			t.tail = t.tail[1:]
		}
		t.mu.Unlock()
	}
}

func (t *logTally) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	clear(t.counts)
}

func (t *logTally) snapshot() map[string]int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return maps.Clone(t.counts)
}

func (t *logTally) last() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.tail, "\n")
}

// burster places the burst's connections.
type burster struct {
	cfg     burstConfig
	base    string
	sipAddr string
	silence []byte // 20 ms of G.722 silence
	speech  []byte // what each PCM caller says first (16 kHz PCM16), or nil
}

// source is connection i's loopback address.
func (b *burster) source(i int) net.IP {
	return net.IPv4(127, 0, 0, byte(2+i%b.cfg.Sources))
}

// conn runs connection i from the barrier to its end.
func (b *burster) conn(ctx context.Context, i int, start <-chan struct{}) outcome {
	ctx, cancel := context.WithTimeout(ctx, b.cfg.Hold+90*time.Second) // every connection ends
	defer cancel()
	switch b.cfg.Transport {
	case "pcm":
		return b.websocketConn(ctx, i, start, "/pcm?rate=16000", &pcmStreamer{speech: b.speech})
	case "twilio":
		return b.websocketConn(ctx, i, start, "/twilio", &twilioStreamer{})
	case "webrtc":
		return b.webrtcConn(ctx, i, start)
	default:
		return b.sipConn(ctx, i, start)
	}
}

// httpClient makes connection i's client: its own transport, dialing from
// its source address.
func (b *burster) httpClient(i int) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: b.source(i)}, Timeout: 30 * time.Second}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
}

// refusedOrFailed classifies an answer that was not an upgrade.
func refusedOrFailed(resp *http.Response, body []byte, err error) outcome {
	if resp == nil {
		return outcome{kind: outFailed, detail: errClass(err)}
	}
	if resp.StatusCode != http.StatusServiceUnavailable {
		return outcome{kind: outFailed, detail: "status " + strconv.Itoa(resp.StatusCode)}
	}
	cause := strings.TrimSpace(string(body))
	var refusal struct {
		Error string `json:"error"`
		Cause string `json:"cause"`
	}
	if json.Unmarshal(body, &refusal) == nil { // the JSON bodies: the cause, else the error
		switch {
		case refusal.Cause != "":
			cause = "cause " + refusal.Cause
		case refusal.Error != "":
			cause = refusal.Error
		}
	}
	if len(cause) > 120 {
		cause = cause[:120]
	}
	return outcome{kind: outRefused, detail: cause, retry: resp.Header.Get("Retry-After") != ""}
}

// errClass names an error without its addresses.
func errClass(err error) string {
	switch {
	case err == nil:
		return "none"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return "timeout"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "EOF"
	}
	s := err.Error()
	if _, code, ok := strings.Cut(s, "handshake response status code 101 but got "); ok && len(strings.Fields(code)) > 0 {
		return "websocket: status " + strings.Fields(code)[0] // coder/websocket's words
	}
	if len(s) > 100 {
		s = s[:100]
	}
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return 'N'
		}
		return r
	}, s)
}

// streamer is what a websocket transport's client sends.
type streamer interface {
	// open is sent once after the upgrade; frame every 20 ms; hangup at
	// the end (nil: a normal closure only).
	open() [][]byte
	frame() (websocket.MessageType, []byte)
	hangup() []byte
}

// pcmStreamer speaks media/carrier/pcmws: 20 ms frames of 16 kHz PCM16,
// the speech first when there is one (shared, read only), then silence.
type pcmStreamer struct {
	speech []byte
	at     int
}

func (*pcmStreamer) open() [][]byte { return nil }
func (p *pcmStreamer) frame() (websocket.MessageType, []byte) {
	f := make([]byte, 640)
	p.at += copy(f, p.speech[min(p.at, len(p.speech)):])
	return websocket.MessageBinary, f
}
func (*pcmStreamer) hangup() []byte { return []byte(`{"type":"hangup"}`) }

// loadSpeech reads a WAV file as 16 kHz PCM16 little-endian.
func loadSpeech(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	w, err := media.ReadWAV(f, 64<<20)
	if err != nil {
		return nil, err
	}
	pcm := w.Samples
	if w.Rate != 16000 {
		r, err := media.NewResampler(w.Rate, 16000, media.ResamplerConfig{})
		if err != nil {
			return nil, err
		}
		out := make([]int16, r.MaxOutLen(len(pcm)))
		n, _ := r.Process(out, pcm)
		pcm = out[:n]
	}
	b := make([]byte, 2*len(pcm))
	for i, v := range pcm {
		binary.LittleEndian.PutUint16(b[2*i:], uint16(v))
	}
	return b, nil
}

// twilioStreamer speaks Twilio Media Streams: connected, start, then a
// media message of 160 mu-law bytes of silence every 20 ms, then stop.
type twilioStreamer struct {
	sid   string
	chunk int
}

var mulawSilence = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xff}, 160))

func (t *twilioStreamer) open() [][]byte {
	t.sid = "MZ" + randHex(16)
	start, _ := json.Marshal(map[string]any{
		"event": "start", "sequenceNumber": "1", "streamSid": t.sid,
		"start": map[string]any{
			"streamSid": t.sid, "accountSid": "AC" + randHex(16), "callSid": "CA" + randHex(16),
			"tracks": []string{"inbound"}, "customParameters": map[string]string{},
			"mediaFormat": map[string]any{"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1},
		},
	})
	return [][]byte{[]byte(`{"event":"connected","protocol":"Call","version":"1.0.0"}`), start}
}

func (t *twilioStreamer) frame() (websocket.MessageType, []byte) {
	t.chunk++
	b, _ := json.Marshal(map[string]any{
		"event": "media", "sequenceNumber": strconv.Itoa(t.chunk + 1), "streamSid": t.sid,
		"media": map[string]string{"track": "inbound", "chunk": strconv.Itoa(t.chunk), "timestamp": strconv.Itoa((t.chunk - 1) * 20), "payload": mulawSilence},
	})
	return websocket.MessageText, b
}

func (t *twilioStreamer) hangup() []byte {
	b, _ := json.Marshal(map[string]any{"event": "stop", "sequenceNumber": strconv.Itoa(t.chunk + 2), "streamSid": t.sid, "stop": map[string]string{}})
	return b
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// websocketConn upgrades at path after the barrier, then holds: it
// streams silence in real time and reads what the server sends until the
// hold is over or the server closes.
func (b *burster) websocketConn(ctx context.Context, i int, start <-chan struct{}, path string, s streamer) outcome {
	hc := b.httpClient(i)
	defer hc.CloseIdleConnections()
	u := "ws" + strings.TrimPrefix(b.base, "http") + path
	<-start
	ws, resp, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPClient: hc})
	if err != nil {
		var body []byte
		if resp != nil && resp.Body != nil {
			body, _ = io.ReadAll(io.LimitReader(resp.Body, 1024))
			resp.Body.Close()
		}
		return refusedOrFailed(resp, body, err)
	}
	defer ws.CloseNow()
	ws.SetReadLimit(1 << 20)
	closed := make(chan error, 1)
	go func() { // waited for: closed is received on every path below
		for {
			if _, _, err := ws.Read(ctx); err != nil {
				closed <- err
				return
			}
		}
	}()
	early := func(err error) outcome {
		var ce websocket.CloseError
		if errors.As(err, &ce) {
			return outcome{kind: outClosed, detail: fmt.Sprintf("%d %s", ce.Code, ce.Reason)}
		}
		return outcome{kind: outClosed, detail: "no close frame: " + errClass(err)}
	}
	for _, m := range s.open() {
		if err := ws.Write(ctx, websocket.MessageText, m); err != nil {
			ws.CloseNow()
			return early(<-closed)
		}
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	end := time.After(b.cfg.Hold)
	for {
		select {
		case err := <-closed:
			return early(err)
		case <-end:
			if h := s.hangup(); h != nil {
				_ = ws.Write(ctx, websocket.MessageText, h)
			}
			_ = ws.Close(websocket.StatusNormalClosure, "")
			<-closed
			return outcome{kind: outAdmitted}
		case <-tick.C:
			typ, frame := s.frame()
			if err := ws.Write(ctx, typ, frame); err != nil {
				ws.CloseNow()
				return early(<-closed)
			}
		}
	}
}

// offerRecorder keeps the answer to the POST of the offer: its status,
// Retry-After and body.
type offerRecorder struct {
	next http.RoundTripper
	mu   sync.Mutex
	resp *http.Response
	body []byte
}

func (o *offerRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := o.next.RoundTrip(r)
	if err != nil || r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/offer") {
		return resp, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	o.mu.Lock()
	o.resp, o.body = resp, body
	o.mu.Unlock()
	return resp, err
}

// webrtcConn posts a real pion offer after the barrier; an answered call
// streams Opus silence (webrtctest's caller does) for the hold, then says
// bye.
func (b *burster) webrtcConn(ctx context.Context, i int, start <-chan struct{}) outcome {
	hc := b.httpClient(i)
	rec := &offerRecorder{next: hc.Transport}
	hc.Transport = rec
	defer hc.CloseIdleConnections()
	<-start
	c, err := webrtctest.Dial(ctx, b.base+"/webrtc", webrtctest.Options{
		ListenAddr: net.JoinHostPort(b.source(i).String(), "0"), HTTPClient: hc, ArrivalsOnly: true,
	})
	rec.mu.Lock()
	resp, body := rec.resp, rec.body
	rec.mu.Unlock()
	switch {
	case err != nil && resp != nil && resp.StatusCode == http.StatusOK:
		// Answered, then its websocket refused: the call was not started.
		return outcome{kind: outClosed, detail: "answered, then " + errClass(err)}
	case err != nil && resp != nil:
		return refusedOrFailed(resp, body, err)
	case err != nil:
		return outcome{kind: outFailed, detail: errClass(err)}
	}
	defer c.Close()
	connect, cancel := context.WithTimeout(ctx, 20*time.Second)
	err = c.WaitConnected(connect)
	cancel()
	if err != nil {
		return outcome{kind: outClosed, detail: "answered, never connected: " + errClass(err)}
	}
	end := time.After(b.cfg.Hold)
	for {
		select {
		case <-end:
			_ = c.Bye()
			return outcome{kind: outAdmitted}
		case <-c.Notify():
			for _, e := range c.Events() {
				if t, _ := e["type"].(string); t == "bye" || t == "error" {
					reason, _ := e["reason"].(string)
					return outcome{kind: outClosed, detail: strings.TrimSpace(t + " " + reason)}
				}
			}
		case <-ctx.Done():
			return outcome{kind: outFailed, detail: "timeout"}
		}
	}
}

// g722Silence is 20 ms of silence, G.722-encoded (160 bytes).
func g722Silence() []byte {
	out := make([]byte, 160)
	n := g722.NewEncoder().Encode(out, make([]int16, 320))
	return out[:n]
}

// sipMsg is a parsed SIP response or request: its first line, headers
// (lower-case names, the first of each) and body.
type sipMsg struct {
	request string // the method of a request; "" for a response
	status  int
	reason  string
	headers map[string]string
	body    string
}

// parseSIP parses a datagram; ok is false for anything else.
func parseSIP(b []byte) (sipMsg, bool) {
	head, body, _ := strings.Cut(string(b), "\r\n\r\n")
	lines := strings.Split(head, "\r\n")
	m := sipMsg{headers: map[string]string{}, body: body}
	first := strings.SplitN(lines[0], " ", 3)
	if len(first) < 2 {
		return m, false
	}
	if first[0] == "SIP/2.0" {
		code, err := strconv.Atoi(first[1])
		if err != nil {
			return m, false
		}
		m.status = code
		if len(first) == 3 {
			m.reason = first[2]
		}
	} else {
		m.request = first[0]
	}
	for _, l := range lines[1:] {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		k = strings.ToLower(strings.TrimSpace(k))
		if _, seen := m.headers[k]; !seen {
			m.headers[k] = strings.TrimSpace(v)
		}
	}
	return m, true
}

// sipDialog is one burst connection's SIP call.
type sipDialog struct {
	sig, rtp         *net.UDPConn
	server           *net.UDPAddr
	local            string // host:port of sig
	callID, fromTag  string
	toTag            string
	target           string // the Request-URI of requests in the dialog (the 2xx's Contact)
	inviteBranch     string
	inviteURI        string
	media            *net.UDPAddr
	seq              int
	lastInviteAnswer []byte // the ACK for a retransmitted final answer
}

func (d *sipDialog) request(method, uri, branch string, cseq int, withTo bool, extra, body string) []byte {
	to := "<" + d.inviteURI + ">"
	if withTo && d.toTag != "" {
		to += ";tag=" + d.toTag
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s SIP/2.0\r\n", method, uri)
	fmt.Fprintf(&b, "Via: SIP/2.0/UDP %s;branch=%s;rport\r\n", d.local, branch)
	fmt.Fprintf(&b, "Max-Forwards: 70\r\nFrom: <sip:burst@%s>;tag=%s\r\nTo: %s\r\n", d.sig.LocalAddr().(*net.UDPAddr).IP, d.fromTag, to)
	fmt.Fprintf(&b, "Call-ID: %s\r\nCSeq: %d %s\r\nContact: <sip:burst@%s>\r\n%s", d.callID, cseq, method, d.local, extra)
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s", len(body), body)
	return []byte(b.String())
}

// sipConn sends an INVITE offering G.722 after the barrier; an answered
// call streams G.722 silence over RTP for the hold, then sends BYE.
func (b *burster) sipConn(ctx context.Context, i int, start <-chan struct{}) outcome {
	if b.sipAddr == "" {
		return outcome{kind: outFailed, detail: "the child serves no SIP"}
	}
	server, err := net.ResolveUDPAddr("udp", b.sipAddr)
	if err != nil {
		return outcome{kind: outFailed, detail: errClass(err)}
	}
	ip := b.source(i)
	sig, err := net.ListenUDP("udp4", &net.UDPAddr{IP: ip})
	if err != nil {
		return outcome{kind: outFailed, detail: errClass(err)}
	}
	defer sig.Close()
	rtpConn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: ip})
	if err != nil {
		return outcome{kind: outFailed, detail: errClass(err)}
	}
	defer rtpConn.Close()
	d := &sipDialog{sig: sig, rtp: rtpConn, server: server, local: sig.LocalAddr().String(),
		callID: randHex(8) + "@burst", fromTag: randHex(4), inviteBranch: "z9hG4bK" + randHex(8),
		inviteURI: "sip:burst@" + b.sipAddr, seq: 1}
	sdpOffer := fmt.Sprintf("v=0\r\no=- %d 1 IN IP4 %s\r\ns=burst\r\nc=IN IP4 %s\r\nt=0 0\r\nm=audio %d RTP/AVP 9 101\r\n"+
		"a=rtpmap:9 G722/8000\r\na=rtpmap:101 telephone-event/8000\r\na=fmtp:101 0-15\r\na=ptime:20\r\na=sendrecv\r\n",
		i+1, ip, ip, rtpConn.LocalAddr().(*net.UDPAddr).Port)
	invite := d.request("INVITE", d.inviteURI, d.inviteBranch, 1, false, "Content-Type: application/sdp\r\n", sdpOffer)
	<-start
	answer, err := d.transact(ctx, invite, "INVITE")
	if err != nil {
		return outcome{kind: outFailed, detail: "INVITE: " + errClass(err)}
	}
	switch {
	case answer.status == http.StatusServiceUnavailable:
		return outcome{kind: outRefused, detail: "SIP 503 " + answer.reason, retry: answer.headers["retry-after"] != ""}
	case answer.status >= 300:
		return outcome{kind: outFailed, detail: fmt.Sprintf("SIP %d %s", answer.status, answer.reason)}
	}
	if err := d.answered(answer); err != nil {
		return outcome{kind: outFailed, detail: "200 OK: " + err.Error()}
	}
	return d.hold(ctx, b.cfg.Hold, b.silence)
}

// transact sends a request and retransmits it (UDP, timer A from 500 ms)
// until a final answer, which an INVITE's client acknowledges. Requests
// from the server in between (a BYE racing the answer) are answered 200.
func (d *sipDialog) transact(ctx context.Context, req []byte, method string) (sipMsg, error) {
	buf := make([]byte, 65535)
	interval, provisional := 500*time.Millisecond, false
	deadline := time.Now().Add(32 * time.Second) // timer B
	if _, err := d.sig.WriteToUDP(req, d.server); err != nil {
		return sipMsg{}, err
	}
	next := time.Now().Add(interval)
	for {
		if ctx.Err() != nil {
			return sipMsg{}, ctx.Err()
		}
		if time.Now().After(deadline) {
			return sipMsg{}, os.ErrDeadlineExceeded
		}
		_ = d.sig.SetReadDeadline(next)
		n, _, err := d.sig.ReadFromUDP(buf)
		if err != nil {
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				return sipMsg{}, err
			}
			if !provisional {
				_, _ = d.sig.WriteToUDP(req, d.server)
				interval = min(2*interval, 4*time.Second)
			}
			next = time.Now().Add(interval)
			continue
		}
		m, ok := parseSIP(buf[:n])
		if !ok {
			continue
		}
		if m.request != "" {
			d.reply(m, 200, "OK")
			continue
		}
		if !strings.HasSuffix(m.headers["cseq"], method) {
			continue // a retransmitted answer of an earlier request
		}
		if m.status < 200 {
			provisional = true
			next = time.Now().Add(4 * time.Second)
			continue
		}
		if method == "INVITE" {
			d.toTag = tagOf(m.headers["to"])
			if m.status >= 300 { // the non-2xx ACK: the INVITE's transaction
				d.lastInviteAnswer = d.request("ACK", d.inviteURI, d.inviteBranch, 1, true, "", "")
				_, _ = d.sig.WriteToUDP(d.lastInviteAnswer, d.server)
			}
		}
		return m, nil
	}
}

// reply answers a request from the server.
func (d *sipDialog) reply(m sipMsg, code int, reason string) {
	var b strings.Builder
	fmt.Fprintf(&b, "SIP/2.0 %d %s\r\n", code, reason)
	for _, h := range []string{"via", "from", "to", "call-id", "cseq"} {
		fmt.Fprintf(&b, "%s: %s\r\n", h, m.headers[h])
	}
	b.WriteString("Content-Length: 0\r\n\r\n")
	_, _ = d.sig.WriteToUDP([]byte(b.String()), d.server)
}

// tagOf is the tag parameter of a From or To value.
func tagOf(v string) string {
	_, tag, ok := strings.Cut(v, ";tag=")
	if !ok {
		return ""
	}
	tag, _, _ = strings.Cut(tag, ";")
	return strings.TrimSpace(tag)
}

// answerMedia is the RTP address of an SDP answer: its c= and first
// m=audio lines.
func answerMedia(body string) (*net.UDPAddr, error) {
	var host string
	var port int
	for l := range strings.SplitSeq(body, "\n") {
		l = strings.TrimSpace(l)
		if v, ok := strings.CutPrefix(l, "c=IN IP4 "); ok {
			host = v
		}
		if v, ok := strings.CutPrefix(l, "m=audio "); ok && port == 0 {
			if f := strings.Fields(v); len(f) > 0 {
				port, _ = strconv.Atoi(f[0])
			}
		}
	}
	ip := net.ParseIP(host)
	if ip == nil || port <= 0 || port > 65535 {
		return nil, errors.New("no media address in the answer")
	}
	return &net.UDPAddr{IP: ip, Port: port}, nil
}

// answered reads the 2xx's Contact and SDP and acknowledges it.
func (d *sipDialog) answered(m sipMsg) error {
	d.target = d.inviteURI
	if c := m.headers["contact"]; c != "" {
		if s, e := strings.Index(c, "<"), strings.Index(c, ">"); s >= 0 && e > s {
			d.target = c[s+1 : e]
		}
	}
	addr, err := answerMedia(m.body)
	if err != nil {
		return err
	}
	d.media = addr
	d.lastInviteAnswer = d.request("ACK", d.target, "z9hG4bK"+randHex(8), 1, true, "", "")
	_, err = d.sig.WriteToUDP(d.lastInviteAnswer, d.server)
	return err
}

// hold streams RTP for hold while answering the server's requests; a BYE
// from the server ends it early.
func (d *sipDialog) hold(ctx context.Context, hold time.Duration, payload []byte) outcome {
	bye := make(chan sipMsg, 1)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { // the signalling socket until stop
		buf := make([]byte, 65535)
		for {
			select {
			case <-stop:
				return
			default:
			}
			_ = d.sig.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
			n, _, err := d.sig.ReadFromUDP(buf)
			if err != nil {
				continue
			}
			m, ok := parseSIP(buf[:n])
			switch {
			case !ok:
			case m.request == "BYE":
				d.reply(m, 200, "OK")
				select {
				case bye <- m:
				default:
				}
			case m.request != "":
				d.reply(m, 200, "OK")
			case strings.HasSuffix(m.headers["cseq"], "INVITE") && m.status >= 200:
				_, _ = d.sig.WriteToUDP(d.lastInviteAnswer, d.server) // the 2xx again: ACK again
			}
		}
	})
	pkt := make([]byte, 12+len(payload))
	pkt[0], pkt[1] = 0x80, 9 // RTP version 2, PT 9 (G.722)
	ssrc := make([]byte, 4)
	_, _ = rand.Read(ssrc)
	copy(pkt[8:], ssrc)
	copy(pkt[12:], payload)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	end := time.After(hold)
	var seq uint16
	var ts uint32
	result := outcome{kind: outAdmitted}
loop:
	for {
		select {
		case <-bye:
			result = outcome{kind: outClosed, detail: "BYE from the server"}
			break loop
		case <-ctx.Done():
			result = outcome{kind: outFailed, detail: "timeout"}
			break loop
		case <-end:
			break loop
		case <-tick.C:
			pkt[2], pkt[3] = byte(seq>>8), byte(seq)
			pkt[4], pkt[5], pkt[6], pkt[7] = byte(ts>>24), byte(ts>>16), byte(ts>>8), byte(ts)
			if seq == 0 {
				pkt[1] |= 0x80 // the marker on the first packet
			} else {
				pkt[1] &^= 0x80
			}
			_, _ = d.rtp.WriteToUDP(pkt, d.media)
			seq++
			ts += 160 // G.722's RTP clock is 8 kHz
		}
	}
	close(stop)
	wg.Wait()
	if result.kind != outAdmitted {
		return result
	}
	d.seq++
	if _, err := d.transact(ctx, d.request("BYE", d.target, "z9hG4bK"+randHex(8), d.seq, true, "", ""), "BYE"); err != nil {
		return outcome{kind: outFailed, detail: "BYE: " + errClass(err)}
	}
	return result
}

// openChildLog opens the --child-log file of a command that serves a
// brisvox child, for appending ("" gives nil: the child's log goes
// nowhere).
func openChildLog(path string) (*os.File, error) {
	if path == "" {
		return nil, nil
	}
	return os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
}
