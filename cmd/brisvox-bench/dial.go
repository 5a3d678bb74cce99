package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/sip"
	"github.com/brisvox/brisvox/sip/rtp"
	"github.com/brisvox/brisvox/sip/sdp"
	"github.com/brisvox/brisvox/sip/signal"
	"github.com/brisvox/brisvox/sip/trunk"
	"github.com/rs/zerolog"
)

// brisvox-bench dial [--rate 20] [--duration 60s] [--trunk-addr 127.0.0.5:5070] [--answer-hold 2s] [--json]
//
// dial places --rate outbound calls a second for --duration through
// sip.Server.Dial (a trunk to the far end, the trunk's own limits above
// the rate), the far end a sipp uas in a child process on loopback that
// answers each INVITE (200 with SDP, echoing our RTP back), waits
// --answer-hold and sends BYE. Each answered call sends 20 ms frames of
// silence until the far end's BYE ends it (ReadFrame fails), then is
// closed. It reports the calls attempted, answered and failed by
// outcome (the signalling's typed outcomes, limited, refused), the setup
// time (Dial called to Dial returned answered: the INVITE sent, the 200
// taken, the ACK sent, the media started) p50/p99/max, the most calls
// live at once, sipp's own count, and the goroutines left once the
// server closed.

// dialScenario is the far end: answer, hold (sipp's -d), BYE.
const dialScenario = `<?xml version="1.0" encoding="ISO-8859-1" ?>
<!DOCTYPE scenario SYSTEM "sipp.dtd">
<scenario name="brisvox dial far end: answer, wait, BYE">
  <recv request="INVITE" crlf="true">
    <action>
      <ereg regexp=".*" search_in="hdr" header="From:" assign_to="remote_from"/>
      <ereg regexp=".*" search_in="hdr" header="To:" assign_to="local_to"/>
      <ereg regexp="&lt;(sip:[^&gt;]*)&gt;" search_in="hdr" header="Contact:" assign_to="trash,remote_contact"/>
    </action>
  </recv>
  <send>
    <![CDATA[
SIP/2.0 100 Trying
[last_Via:]
[last_From:]
[last_To:]
[last_Call-ID:]
[last_CSeq:]
Content-Length: 0

    ]]>
  </send>
  <send retrans="500">
    <![CDATA[
SIP/2.0 200 OK
[last_Via:]
[last_From:]
[last_To:];tag=[pid]SIPpTag01[call_number]
[last_Call-ID:]
[last_CSeq:]
Contact: <sip:[local_ip]:[local_port];transport=[transport]>
Content-Type: application/sdp
Content-Length: [len]

v=0
o=user1 53655765 2353687637 IN IP[local_ip_type] [local_ip]
s=-
c=IN IP[media_ip_type] [media_ip]
t=0 0
m=audio [media_port] RTP/AVP 0
a=rtpmap:0 PCMU/8000

    ]]>
  </send>
  <recv request="ACK" crlf="true"/>
  <pause/>
  <send retrans="500">
    <![CDATA[
BYE [$remote_contact] SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: [$local_to];tag=[pid]SIPpTag01[call_number]
To: [$remote_from]
Call-ID: [call_id]
CSeq: 2 BYE
Contact: <sip:[local_ip]:[local_port];transport=[transport]>
Max-Forwards: 70
Content-Length: 0

    ]]>
  </send>
  <recv response="200" crlf="true"/>
  <Reference variables="trash"/>
</scenario>
`

// dialReport is the dial bench's result.
type dialReport struct {
	Date      string  `json:"date"`
	Cores     int     `json:"cores"`
	Rate      float64 `json:"calls_per_second"`
	DurationS float64 `json:"duration_s"`
	HoldS     float64 `json:"answer_hold_s"`
	Attempted int     `json:"attempted"`
	Answered  int     `json:"answered"`
	// Failed counts the dials that did not answer, by outcome: the
	// signalling's (busy, no_answer, unavailable, transport, ...),
	// limited (the trunk's limits), refused (admission), error.
	Failed map[string]int `json:"failed"`
	// Ended counts how the answered calls ended: bye (ReadFrame failed
	// after the far end's BYE) or timeout (still live at the bound).
	Ended map[string]int `json:"ended"`
	// SetupP50MS..: Dial called to Dial returned answered.
	SetupP50MS float64 `json:"setup_p50_ms"`
	SetupP99MS float64 `json:"setup_p99_ms"`
	SetupMaxMS float64 `json:"setup_max_ms"`
	LiveMax    int     `json:"calls_live_max"`
	// SippSuccessful and SippFailed are the far end's calls.
	SippSuccessful int `json:"sipp_successful_calls"`
	SippFailed     int `json:"sipp_failed_calls"`
	// OfferLagMaxMS is how late the bench placed its latest dial against
	// the rate's schedule (a sign the bench itself was starved).
	OfferLagMaxMS float64 `json:"offer_lag_max_ms"`
	// GoroutinesBefore and GoroutinesAfter: before the server started,
	// and after it closed and every call ended.
	GoroutinesBefore int               `json:"goroutines_before"`
	GoroutinesAfter  int               `json:"goroutines_after"`
	Server           map[string]uint64 `json:"sip_counters,omitempty"`
	Error            string            `json:"error,omitempty"`
}

// dialSlot is the bench's admission: every dial may go (the trunk's
// limits are what is measured).
type dialSlot struct{}

func (dialSlot) Release() {}

func dial(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dial", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rate := fs.Float64("rate", 20, "outbound calls placed per second")
	duration := fs.Duration("duration", 60*time.Second, "how long calls are placed")
	trunkAddr := fs.String("trunk-addr", "", "the far end's (sipp uas) host:port on loopback; \"\" a free port on 127.0.0.5")
	answerHold := fs.Duration("answer-hold", 2*time.Second, "how long the far end holds each answered call before its BYE")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := fs.Parse(args); err != nil || !(*rate > 0) || *duration <= 0 || *answerHold < 0 {
		return 2
	}
	if _, err := exec.LookPath("sipp"); err != nil {
		fmt.Fprintln(stderr, "brisvox-bench: sipp is not installed (go tool task setup installs sip-tester)")
		return 1
	}
	addr, err := farEndAddr(*trunkAddr)
	if err != nil {
		fmt.Fprintln(stderr, "brisvox-bench: --trunk-addr:", err)
		return 2
	}
	rep := runDial(*rate, *duration, *answerHold, addr, stderr)
	if *asJSON {
		b, _ := json.MarshalIndent(rep, "", "  ")
		fmt.Fprintln(stdout, string(b))
	} else {
		printDial(stdout, rep)
	}
	if rep.Error != "" || rep.Answered != rep.Attempted {
		return 1
	}
	return 0
}

// farEndAddr checks --trunk-addr (a loopback host:port) or picks one.
func farEndAddr(s string) (netip.AddrPort, error) {
	if s == "" {
		p, err := freeUDPPort("127.0.0.5")
		if err != nil {
			return netip.AddrPort{}, err
		}
		return netip.AddrPortFrom(netip.MustParseAddr("127.0.0.5"), uint16(p)), nil
	}
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		return netip.AddrPort{}, err
	}
	if !ap.Addr().IsLoopback() || ap.Port() == 0 {
		return netip.AddrPort{}, fmt.Errorf("%s: want a loopback address and a port", s)
	}
	return ap, nil
}

func printDial(w io.Writer, r dialReport) {
	fmt.Fprintf(w, "dial: %g calls/s for %.0fs through sip.Server.Dial to a sipp uas (answers, holds %.1fs, BYE), %d cores\n",
		r.Rate, r.DurationS, r.HoldS, r.Cores)
	if r.Error != "" {
		fmt.Fprintf(w, "  failed: %s\n", r.Error)
	}
	fmt.Fprintf(w, "  attempted %d, answered %d, failed %d %v; answered calls ended %v\n",
		r.Attempted, r.Answered, sum(r.Failed), r.Failed, r.Ended)
	fmt.Fprintf(w, "  setup (Dial to answered): p50 %.2f ms, p99 %.2f ms, max %.2f ms; calls live max %d; latest dial %.1f ms behind the rate\n",
		r.SetupP50MS, r.SetupP99MS, r.SetupMaxMS, r.LiveMax, r.OfferLagMaxMS)
	fmt.Fprintf(w, "  sipp uas: %d successful, %d failed; goroutines %d before, %d after\n",
		r.SippSuccessful, r.SippFailed, r.GoroutinesBefore, r.GoroutinesAfter)
}

// dialOutcome names why a dial failed.
func dialOutcome(err error) string {
	var de *signal.DialError
	var rf *conn.Refusal
	switch {
	case errors.As(err, &de):
		return string(de.Outcome)
	case errors.Is(err, sip.ErrDialLimited):
		return "limited"
	case errors.As(err, &rf):
		return "refused_" + string(rf.Cause)
	case errors.Is(err, signal.ErrBadAnswer):
		return "bad_answer"
	case errors.Is(err, sip.ErrInvalidDial):
		return "invalid"
	default:
		return "error"
	}
}

// quantileMS is the q-quantile of sorted durations, in ms (the
// element at index len*q, as measureGaps takes it).
func quantileMS(sorted []time.Duration, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := min(int(float64(len(sorted))*q), len(sorted)-1)
	return float64(sorted[i].Microseconds()) / 1000
}

// dialTally gathers the dials' results; safe for concurrent use.
type dialTally struct {
	mu       sync.Mutex
	setups   []time.Duration
	failed   map[string]int
	ended    map[string]int
	live     int
	liveMax  int
	answered int
}

func (t *dialTally) fail(outcome string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.failed[outcome]++
}

func (t *dialTally) answer(setup time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.answered++
	t.setups = append(t.setups, setup)
	t.live++
	t.liveMax = max(t.liveMax, t.live)
}

func (t *dialTally) end(how string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.live--
	t.ended[how]++
}

// runDial runs the far end and the dials.
func runDial(rate float64, duration, hold time.Duration, far netip.AddrPort, stderr io.Writer) dialReport {
	total := int(rate * duration.Seconds())
	rep := dialReport{Date: time.Now().UTC().Format(time.RFC3339), Cores: runtime.NumCPU(), Rate: rate,
		DurationS: duration.Seconds(), HoldS: hold.Seconds()}
	fail := func(format string, a ...any) dialReport {
		rep.Error = fmt.Sprintf(format, a...)
		return rep
	}
	rep.GoroutinesBefore = runtime.NumGoroutine()
	dir, err := os.MkdirTemp("", "dial")
	if err != nil {
		return fail("%v", err)
	}
	defer os.RemoveAll(dir)
	scenario := filepath.Join(dir, "far.xml")
	if err := os.WriteFile(scenario, []byte(dialScenario), 0o644); err != nil {
		return fail("%v", err)
	}
	mediaPort, err := freeUDPPort(far.Addr().String())
	if err != nil {
		return fail("far end media port: %v", err)
	}
	// Every call ends by itself (its BYE hold after the answer); the
	// bound is for a far end that stops answering.
	bound := duration + hold + 60*time.Second
	ctx, cancel := context.WithTimeout(context.Background(), bound+30*time.Second)
	defer cancel()
	sipp := exec.CommandContext(ctx, "sipp", "-sf", scenario, "-i", far.Addr().String(), "-p", strconv.Itoa(int(far.Port())),
		"-mi", far.Addr().String(), "-mp", strconv.Itoa(mediaPort), "-rtp_echo", "-d", strconv.FormatInt(hold.Milliseconds(), 10),
		"-m", strconv.Itoa(total), "-l", strconv.Itoa(total), "-trace_stat", "-stf", filepath.Join(dir, "stat.csv"), "-fd", "1",
		"-nostdin", "-max_socket", "1000", "-timeout", fmt.Sprintf("%ds", int(bound.Seconds())), "-trace_err")
	sipp.Dir = dir
	var sippOut strings.Builder
	sipp.Stdout, sipp.Stderr = &sippOut, &sippOut
	if err := sipp.Start(); err != nil {
		return fail("sipp: %v", err)
	}
	sippDone := make(chan error, 1)
	go func() { sippDone <- sipp.Wait() }()

	srv, err := sip.New(sip.Config{
		Signal: signal.Config{Listen: []signal.Listen{{Network: "udp", Addr: sipServerIP + ":0"}}},
		// The far end is one source sending 100, 200 and BYE for every
		// call: the transport's own default flood limit (trunk: 20
		// messages a second per source, burst 40) silences it within
		// two seconds at 20 calls a second. brisvox serve's default
		// ([transports.sip] rate_limit 100, burst 200) is what a node
		// runs with, so the bench takes it (or 5 messages a call at a
		// higher rate).
		Trunk: trunk.Config{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
			Rate: max(100, 5*rate), Burst: int(2 * max(100, 5*rate))},
		SDP:   sdp.Config{Codecs: []sdp.Codec{sdp.PCMU, sdp.PCMA}},
		Ports: rtp.PortsConfig{Addr: netip.MustParseAddr(sipServerIP), Min: 43001, Max: 45000},
		Rate:  8000,
		Trunks: map[string]sip.TrunkConfig{"far": {Address: far.String(), From: "+15550000",
			CallsPerSecond: rate * 1.25, MaxCalls: max(100, int(2*rate*(hold.Seconds()+1)))}},
		Admit:  func() (conn.Admission, error) { return dialSlot{}, nil },
		OnCall: func(c *sip.Call) { _ = c.Close() }, // inbound calls are not the bench's
		Log:    zerolog.Nop(),
	})
	if err != nil {
		cancel()
		<-sippDone
		return fail("sip: %v", err)
	}
	if err := srv.Start(); err != nil {
		cancel()
		<-sippDone
		return fail("sip: %v", err)
	}
	time.Sleep(300 * time.Millisecond) // sipp binds its port
	select {
	case err := <-sippDone:
		srv.Close()
		return fail("sipp uas ended before the first call: %v\n%s", err, tail(sippOut.String(), 20))
	default:
	}

	tally := &dialTally{failed: map[string]int{}, ended: map[string]int{}}
	var wg sync.WaitGroup
	start := time.Now()
	var lagMax time.Duration
	for i := range total {
		due := start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
		if d := time.Until(due); d > 0 {
			time.Sleep(d)
		} else {
			lagMax = max(lagMax, -d)
		}
		rep.Attempted++
		wg.Go(func() { placeCall(ctx, srv, i, hold, tally) })
	}
	wg.Wait()
	rep.OfferLagMaxMS = float64(lagMax.Microseconds()) / 1000
	rep.Server = srv.Stats()
	srv.Close()
	var sippErr error
	select {
	case sippErr = <-sippDone:
	case <-time.After(30 * time.Second):
		cancel()
		sippErr = <-sippDone
	}
	// What the calls and the server owned is gone: wait for the last
	// goroutines to return (bounded).
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > rep.GoroutinesBefore && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	rep.GoroutinesAfter = runtime.NumGoroutine()

	tally.mu.Lock()
	rep.Answered, rep.Failed, rep.Ended, rep.LiveMax = tally.answered, tally.failed, tally.ended, tally.liveMax
	slices.Sort(tally.setups)
	rep.SetupP50MS, rep.SetupP99MS, rep.SetupMaxMS = quantileMS(tally.setups, 0.5), quantileMS(tally.setups, 0.99), quantileMS(tally.setups, 1)
	tally.mu.Unlock()
	if s, f, err := sippCounts(filepath.Join(dir, "stat.csv")); err == nil {
		rep.SippSuccessful, rep.SippFailed = s, f
	} else {
		fmt.Fprintln(stderr, "brisvox-bench: sipp statistics:", err)
	}
	if sippErr != nil {
		rep.Error = fmt.Sprintf("sipp uas: %v\n%s", sippErr, tail(sippOut.String(), 20))
	}
	return rep
}

// placeCall dials one call and, answered, sends silence until the far
// end's BYE ends it.
func placeCall(ctx context.Context, srv *sip.Server, i int, hold time.Duration, tally *dialTally) {
	t0 := time.Now()
	c, err := srv.Dial(ctx, sip.DialRequest{Trunk: "far", To: fmt.Sprintf("+1555%07d", i), RingTimeout: 10 * time.Second})
	if err != nil {
		tally.fail(dialOutcome(err))
		return
	}
	tally.answer(time.Since(t0))
	defer func() { _ = c.Close() }()
	// The far end hangs up after hold; the bound is for one that does not.
	callCtx, cancel := context.WithTimeout(ctx, hold+30*time.Second)
	defer cancel()
	out := &messages.OutputAudio{PCM: make([]int16, c.OutputRate()/50), Rate: c.OutputRate()}
	in := messages.NewPooledFrame(c.InputRate(), nil)
	for {
		// Reading paces the loop (a frame each 20 ms); each frame read
		// is answered with one of silence, as an agent's output would.
		if err := c.ReadFrame(callCtx, in); err != nil {
			if callCtx.Err() != nil {
				tally.end("timeout")
			} else {
				tally.end("bye")
			}
			return
		}
		_ = c.WriteFrame(out)
	}
}
