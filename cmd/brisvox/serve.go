package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/brisvox/brisvox/cmd/internal/admit"
	"github.com/brisvox/brisvox/cmd/internal/agentbuild"
	"github.com/brisvox/brisvox/cmd/internal/agentfile"
	"github.com/brisvox/brisvox/cmd/internal/gate"
	"github.com/brisvox/brisvox/cmd/internal/serve"
	"github.com/brisvox/brisvox/media/carrier/pcmws"
	"github.com/brisvox/brisvox/media/carrier/twilio"
	"github.com/brisvox/brisvox/media/silero"
	"github.com/brisvox/brisvox/media/webrtc"
	"github.com/brisvox/brisvox/sip"
	"github.com/brisvox/brisvox/sip/validate"
	"github.com/rs/zerolog"
)

// serveFlags are `brisvox serve`'s options.
type serveFlags struct {
	agent    string
	addr     string
	maxCalls int
	drain    time.Duration
	logLevel string
	// operatorTokenEnv names the variable holding the operator API's
	// token; empty: no operator API.
	operatorTokenEnv string
	// logContent logs transcripts and tool arguments (debug only).
	logContent bool
	// sipAddr, when set, replaces the SIP udp and tcp listen addresses of
	// the agent file (tests: 127.0.0.1:0).
	sipAddr string
	// recordsDir, when set, replaces the agent file's [records] dir (a
	// test's or a bench child's own directory).
	recordsDir string
	// admission is "fixed" (the call limit alone) or "measured" (the
	// limit and the measured cost per call, under cpuCeiling of the
	// cores); each replaces the agent file's [serve] setting only when
	// the command line gave it (admissionSet, ceilingSet).
	admission                string
	cpuCeiling               float64
	admissionSet, ceilingSet bool
	// fleet joins the node to the others (serve_fleet.go).
	fleet fleetFlags
	// force carries each signal after the first (not a flag): each one
	// cuts the drain short (serve.Server.Force).
	force <-chan struct{}
}

// serveCommand serves the agent of an agent file until SIGTERM or SIGINT.
func serveCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f serveFlags
	fs.StringVar(&f.agent, "agent", "", "the agent file (TOML or YAML; see docs/CONFIG.md)")
	fs.StringVar(&f.addr, "addr", "localhost:8000", "the address of the page, the signaling and the websockets")
	fs.IntVar(&f.maxCalls, "max-calls", 0, "calls served at once; more are refused (HTTP 503); default: the agent's capacity, at most 20")
	fs.DurationVar(&f.drain, "drain", 30*time.Second, "on SIGTERM, how long live calls may go on before they are ended")
	fs.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error (JSON lines on stderr)")
	fs.StringVar(&f.operatorTokenEnv, "operator-token-env", "", "the environment variable holding the operator API's bearer token (at least 16 characters); unset: no operator API")
	fs.StringVar(&f.sipAddr, "sip-addr", "", "replace the agent file's SIP udp and tcp listen addresses with this HOST:PORT")
	fs.StringVar(&f.recordsDir, "records-dir", "", "replace the agent file's [records] dir: where the call records, their journals and recordings are kept (docs/RECORDS.md)")
	f.admissionFlags(fs)
	f.fleet.register(fs)
	fs.BoolVar(&f.logContent, "log-content", false, "for debugging only: log what callers and the bot said and tool arguments (needs --log-level debug)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: brisvox serve --agent FILE [--addr HOST:PORT] [--max-calls N] [--drain 30s] [--log-level info] [--operator-token-env NAME] [--log-content] [--sip-addr HOST:PORT] [--records-dir DIR] [--admission fixed|measured] [--cpu-ceiling 0.75] [--node NAME] [--cluster-addr HOST:PORT [--cluster-provider automanaged|kubernetes] [--seeds HOST:PORT,...] [--cluster-advertise HOST:PORT]]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	f.admissionGiven(fs)
	if f.agent == "" || fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	if f.admission != "fixed" && f.admission != "measured" {
		fmt.Fprintf(stderr, "brisvox serve: --admission: %q: want fixed or measured\n", f.admission)
		return 2
	}
	if !(f.cpuCeiling > 0 && f.cpuCeiling <= 1) {
		fmt.Fprintf(stderr, "brisvox serve: --cpu-ceiling: %v: want a share of the cores in (0, 1], e.g. 0.75\n", f.cpuCeiling)
		return 2
	}
	if f.sipAddr != "" {
		if _, err := netip.ParseAddrPort(f.sipAddr); err != nil {
			fmt.Fprintf(stderr, "brisvox serve: --sip-addr: %q is not an IP address and port\n", f.sipAddr)
			return 2
		}
	}
	if err := f.fleet.check(f.operatorTokenEnv != "", f.fleet.nodeName()); err != nil {
		fmt.Fprintf(stderr, "brisvox serve: %v\n", err)
		return 2
	}
	level, err := zerolog.ParseLevel(f.logLevel)
	if err != nil {
		fmt.Fprintf(stderr, "brisvox serve: --log-level: %v\n", err)
		return 2
	}
	if f.logContent && level > zerolog.DebugLevel {
		fmt.Fprintln(stderr, "brisvox serve: --log-content logs at debug level: add --log-level debug")
		return 2
	}
	log := zerolog.New(stderr).Level(level).With().Timestamp().Logger()
	// sipgo writes a few lines to slog's default logger, past the
	// loggers it is given, with addresses in them: the process's default
	// keeps only their level and fixed message, like sipgo's own.
	slog.SetDefault(slog.New(validate.NewSlogHandler(log)))
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		fmt.Fprintf(stderr, "brisvox serve: %v\n", err)
		return 1
	}
	// The first SIGTERM or Ctrl-C starts the drain; the next ones cut it
	// short (the closing line at once, then a hang-up at once).
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, os.Interrupt)
	defer signal.Stop(sigs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	force := make(chan struct{}, 2)
	f.force = force
	done := make(chan struct{})
	var relay sync.WaitGroup
	relay.Go(func() {
		first := true
		for {
			select {
			case <-done:
				return
			case <-sigs:
				if first {
					first = false
					fmt.Fprintln(stdout, "brisvox: stopping: draining the live calls (Ctrl-C again to end them now)")
					cancel()
					continue
				}
				select {
				case force <- struct{}{}:
				default:
				}
			}
		}
	})
	code := runServe(ctx, f, ln, stdout, stderr, log)
	close(done)
	relay.Wait()
	return code
}

// admissionFlags registers --admission and --cpu-ceiling on fs.
func (f *serveFlags) admissionFlags(fs *flag.FlagSet) {
	fs.StringVar(&f.admission, "admission", "fixed", "fixed (the call limit alone) or measured (also refuse a call while the measured CPU cost of one more would pass the CPU ceiling); given, it replaces the agent file's [serve] admission")
	fs.Float64Var(&f.cpuCeiling, "cpu-ceiling", admit.DefaultCeiling, "under measured admission: the share of the cores (GOMAXPROCS) the estimated load may reach, in (0, 1]; given, it replaces the agent file's [serve] cpu_ceiling")
}

// admissionGiven records which admission flags the command line gave
// (fs parsed): only those replace the agent file's settings.
func (f *serveFlags) admissionGiven(fs *flag.FlagSet) {
	fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "admission":
			f.admissionSet = true
		case "cpu-ceiling":
			f.ceilingSet = true
		}
	})
}

// admissionOf is the admission mode and CPU ceiling to serve with: the
// agent file's [serve] admission and cpu_ceiling (their defaults fixed
// and admit.DefaultCeiling), each replaced by its flag when given.
func (f serveFlags) admissionOf(s agentfile.Serve) (mode string, ceiling float64) {
	mode, ceiling = s.Admission.V, s.CPUCeiling.V
	if f.admissionSet {
		mode = f.admission
	}
	if f.ceilingSet {
		ceiling = f.cpuCeiling
	}
	return mode, ceiling
}

// runServe serves on ln until ctx ends. The agent file is checked first:
// any diagnostic refuses to serve (fail closed).
func runServe(ctx context.Context, f serveFlags, ln net.Listener, stdout, stderr io.Writer, log zerolog.Logger) int {
	defer ln.Close()
	operatorToken := ""
	if name := f.operatorTokenEnv; name != "" {
		// Checked first: a server asked for an operator API it cannot
		// have is not started at all.
		token, ok := os.LookupEnv(name)
		switch {
		case !ok:
			fmt.Fprintf(stderr, "brisvox serve: --operator-token-env: %s is not set; not serving\n", name)
			return 1
		case len(token) < serve.MinOperatorToken:
			fmt.Fprintf(stderr, "brisvox serve: --operator-token-env: %s holds %d characters, want at least %d; not serving\n", name, len(token), serve.MinOperatorToken)
			return 1
		}
		operatorToken = token
	}
	a, diags := loadAgent(f.agent, nil, agentbuild.Options{Log: log})
	if len(diags) > 0 {
		for _, d := range diags {
			fmt.Fprintln(stderr, d.String())
		}
		fmt.Fprintf(stderr, "brisvox serve: %s has %d problem(s); not serving (brisvox check %s)\n", f.agent, len(diags), f.agent)
		return 1
	}
	defer a.Close()
	file := a.File()
	if ds := agentbuild.Exposure(file, ln.Addr().String(), sipListens(file, f.sipAddr), os.LookupEnv); len(ds) > 0 {
		for _, d := range ds {
			fmt.Fprintln(stderr, d.String())
		}
		fmt.Fprintf(stderr, "brisvox serve: %s would expose %d endpoint(s) without authentication; not serving\n", f.agent, len(ds))
		return 1
	}
	maxCalls, err := callLimit(a, f.maxCalls, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "brisvox serve: %v; not serving\n", err)
		return 1
	}
	applyMemory(file.Serve, log)
	openCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	err = a.Open(openCtx)
	cancel()
	if err != nil {
		fmt.Fprintf(stderr, "brisvox serve: %v\n", err)
		return 1
	}
	if f.logContent {
		log.Warn().Msg("--log-content: transcripts and tool arguments go to the log; for debugging only")
	}
	cfg := serve.Config{MaxCalls: maxCalls, DrainTimeout: f.drain, Log: log, LogContent: f.logContent, Node: f.fleet.nodeName()}
	if f.recordsDir != "" {
		file.Records.Dir.V = f.recordsDir
	}
	kept, err := openKept(ctx, file, cfg.Node, os.LookupEnv, log)
	if err != nil {
		fmt.Fprintf(stderr, "brisvox serve: %v; not serving\n", err)
		return 1
	}
	// After Serve (deferred before it returns): every call has ended, so
	// the records service drains its queue into the journal.
	defer kept.close(context.Background())
	kept.wire(&cfg)
	if mode, ceiling := f.admissionOf(file.Serve); mode == "measured" {
		m, err := admit.New(admit.Config{Cores: float64(runtime.GOMAXPROCS(0)), Ceiling: ceiling})
		if err != nil {
			fmt.Fprintf(stderr, "brisvox serve: measured admission: %v\n", err)
			return 1
		}
		cfg.Meter = m
	}
	srv, err := serve.New(cfg, a)
	if err != nil {
		fmt.Fprintf(stderr, "brisvox serve: %v\n", err)
		return 1
	}
	sipSrv, err := mountTransports(srv, a.File(), log, f.sipAddr)
	if err != nil {
		fmt.Fprintf(stderr, "brisvox serve: %v\n", err)
		return 1
	}
	if err := poolMetrics(srv, a); err != nil {
		fmt.Fprintf(stderr, "brisvox serve: metrics: %v\n", err)
		return 1
	}
	if err := kept.metrics(srv); err != nil {
		fmt.Fprintf(stderr, "brisvox serve: metrics: %v\n", err)
		return 1
	}
	if kept != nil && kept.svc != nil {
		fmt.Fprintf(stdout, "brisvox: keeping call records in %s (%s)\n", kept.dir, kept.backend)
	}
	if operatorToken != "" {
		if err := srv.EnableOperator(operatorToken); err != nil {
			fmt.Fprintf(stderr, "brisvox serve: --operator-token-env %s: %v; not serving\n", f.operatorTokenEnv, err)
			return 1
		}
	}
	if sipSrv != nil && len(sipSrv.Trunks()) > 0 {
		// Outbound calls are placed through the operator API only.
		if operatorToken == "" {
			log.Warn().Msg("the agent file has SIP trunks but no operator API (--operator-token-env): no outbound calls can be placed")
		} else if err := srv.EnableDial(operatorToken, sipDialer{srv: srv, sip: sipSrv}); err != nil {
			fmt.Fprintf(stderr, "brisvox serve: outbound calls: %v; not serving\n", err)
			return 1
		}
	}
	fl, err := f.fleet.startFleet(srv, log, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "brisvox serve: %v; not serving\n", err)
		return 1
	}
	if fl != nil {
		// After Serve: the others see this node's drain to its end.
		defer fl.Stop()
	}
	fmt.Fprintf(stdout, "brisvox: serving agent %q on http://%s/ (Ctrl-C to stop)\n", a.Name(), ln.Addr())
	if sipSrv != nil {
		for _, addr := range sipSrv.Addrs() {
			fmt.Fprintf(stdout, "brisvox: SIP on %s %s\n", addr.Network, addr.Addr)
		}
	}
	forced := make(chan struct{})
	var forcer sync.WaitGroup
	forcer.Go(func() {
		for {
			select {
			case <-forced:
				return
			case <-f.force:
				srv.Force()
			}
		}
	})
	err = srv.Serve(ctx, ln)
	close(forced)
	forcer.Wait()
	if err != nil && !errors.Is(err, net.ErrClosed) {
		fmt.Fprintf(stderr, "brisvox serve: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, "brisvox: stopped")
	return 0
}

// poolMetrics exports the Silero pools' queue depth and window counts,
// one series per sample rate.
func poolMetrics(srv *serve.Server, a *agentbuild.Agent) error {
	for rate := range a.VADPoolStats() {
		stat := func(pick func(silero.PoolStats) uint64) func() float64 {
			return func() float64 { return float64(pick(a.VADPoolStats()[rate])) }
		}
		labels := map[string]string{"rate": strconv.Itoa(rate)}
		err := srv.GaugeFunc("brisvox_vad_pool_queue_depth", "Windows waiting in the Silero VAD pool's queue.", labels,
			func() float64 { return float64(a.VADPoolStats()[rate].Queued) })
		if err != nil {
			return err
		}
		for result, pick := range map[string]func(silero.PoolStats) uint64{
			"completed": func(s silero.PoolStats) uint64 { return s.Completed },
			"refused":   func(s silero.PoolStats) uint64 { return s.Refused },
			"timed_out": func(s silero.PoolStats) uint64 { return s.TimedOut },
			"failed":    func(s silero.PoolStats) uint64 { return s.Failed },
		} {
			l := map[string]string{"rate": labels["rate"], "result": result}
			if err := srv.CounterFunc("brisvox_vad_pool_windows_total", "Windows of the Silero VAD pool, by result: completed, refused (queue full), timed_out, failed.", l, stat(pick)); err != nil {
				return err
			}
		}
	}
	return nil
}

// mountTransports opens the transports the agent file enables.
func mountTransports(srv *serve.Server, f *agentfile.File, log zerolog.Logger, sipAddr string) (*sip.Server, error) {
	t := f.Transports
	gateOf := func(name string, acc agentfile.Access) (*gate.Gate, error) {
		return endpointGate(srv, name, f.Serve, acc, log)
	}
	if t.WebRTC.Enabled.V {
		cfg := webrtc.Config{
			IncludeLoopback: t.WebRTC.IncludeLoopback.V,
			OnCall:          func(c *webrtc.Call) { srv.Start(c) },
			Admit:           srv.Admit,
			Logger:          log,
		}
		for _, v := range t.WebRTC.Interfaces {
			cfg.Interfaces = append(cfg.Interfaces, v.V)
		}
		for _, v := range t.WebRTC.STUN {
			cfg.STUNServers = append(cfg.STUNServers, v.V)
		}
		for _, v := range t.WebRTC.AllowedOrigins {
			cfg.AllowedOrigins = append(cfg.AllowedOrigins, v.V)
		}
		w, err := webrtc.New(cfg)
		if err != nil {
			return nil, fmt.Errorf("webrtc: %w", err)
		}
		g, err := gateOf("webrtc", t.WebRTC.Access)
		if err != nil {
			return nil, err
		}
		// The offer makes a call (and spends): it passes the gate. The
		// call's websocket needs the call's unguessable id, which only
		// the offer's answer carries.
		h := http.StripPrefix("/webrtc", w.Handler())
		srv.Handle("/webrtc/", h, "webrtc", w.Stats, func() { _ = w.Close() })
		srv.Handle("POST /webrtc/offer", g.Wrap(h), "", nil, nil)
	}
	if t.Twilio.Enabled.V {
		tc := twilio.Config{OnCall: func(c *twilio.Call) { srv.Start(c) }, Admit: srv.Admit, Logger: log, PublicURL: t.Twilio.PublicURL.V}
		if n := t.Twilio.AuthTokenEnv.V; n != "" {
			tc.AuthToken = os.Getenv(n) // Exposure checked it is set
		}
		h, err := twilio.New(tc)
		if err != nil {
			return nil, fmt.Errorf("twilio: %w", err)
		}
		g, err := gateOf("twilio", agentfile.Access{})
		if err != nil {
			return nil, err
		}
		guard(srv, t.Twilio.Path.V, g, h, "twilio", h.Stats, h.Close)
	}
	if t.PCM.Enabled.V {
		pc := pcmws.Config{OnCall: func(c *pcmws.Call) { srv.Start(c) }, Admit: srv.Admit, Logger: log}
		for _, o := range t.PCM.AllowedOrigins {
			pc.AllowedOrigins = append(pc.AllowedOrigins, o.V)
		}
		h, err := pcmws.New(pc)
		if err != nil {
			return nil, fmt.Errorf("pcm: %w", err)
		}
		g, err := gateOf("pcm", t.PCM.Access)
		if err != nil {
			return nil, err
		}
		guard(srv, t.PCM.Path.V, g, h, "pcm", h.Stats, h.Close)
	}
	if !t.SIP.Enabled.V {
		return nil, nil
	}
	st := t.SIP
	if sipAddr != "" {
		st.UDP.V, st.TCP.V = sipAddr, sipAddr
	}
	s, err := mountSIP(srv, st, log)
	if err != nil {
		return nil, fmt.Errorf("sip: %w", err)
	}
	return s, nil
}

// sipListens are the SIP listen addresses serve will open: the file's, or
// --sip-addr's for udp and tcp.
func sipListens(f *agentfile.File, sipAddr string) []string {
	if !f.Transports.SIP.Enabled.V {
		return nil
	}
	var out []string
	for network, addr := range f.Transports.SIP.Listens() {
		if sipAddr != "" && network != "tls" {
			addr = sipAddr
		}
		out = append(out, addr)
	}
	return out
}
