package signal

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.uber.org/goleak"
)

// testApp answers every INVITE with testSDP; its Media mirrors a hold
// (a=sendonly answered a=recvonly).
type testApp struct {
	hangupOnConfirm bool // Hangup as soon as the ACK came
	waitForCancel   bool // Invite returns only when its ctx ends

	mu    sync.Mutex
	ended []error
	acks  [][]byte
	ctxs  int
}

var _ Application = (*testApp)(nil)

func (a *testApp) Invite(ctx context.Context, inv *Invite) (Media, []byte, error) {
	if a.waitForCancel {
		<-ctx.Done()
		a.mu.Lock()
		a.ctxs++
		a.mu.Unlock()
		return nil, nil, ctx.Err()
	}
	return &testCall{app: a, d: inv.Dialog}, []byte(testSDP), nil
}

func (a *testApp) causes() []error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]error(nil), a.ended...)
}

type testCall struct {
	app *testApp
	d   *Dialog
}

var _ Media = (*testCall)(nil)

func (c *testCall) Reoffer(offer []byte) ([]byte, error) {
	if bytes.Contains(offer, []byte("a=sendonly")) {
		return []byte(testSDP + "a=recvonly\r\n"), nil
	}
	return []byte(testSDP), nil
}

func (c *testCall) Answer(a []byte) error {
	c.app.mu.Lock()
	c.app.acks = append(c.app.acks, a)
	c.app.mu.Unlock()
	return nil
}

func (c *testCall) Info(string, []byte) int { return 200 }

func (c *testCall) Confirmed() {
	if c.app.hangupOnConfirm {
		c.d.Hangup(nil)
	}
}

func (c *testCall) Ended(cause error) {
	c.app.mu.Lock()
	c.app.ended = append(c.app.ended, cause)
	c.app.mu.Unlock()
}

// fds counts this process's open file descriptors.
func fds(t *testing.T) int {
	t.Helper()
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(es)
}

// freePort is a port free on 127.0.0.1 for UDP and TCP at this moment.
func freePort(t *testing.T) int {
	t.Helper()
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		pc, err := net.ListenPacket("udp", "127.0.0.1:"+strconv.Itoa(port))
		if err == nil {
			_ = pc.Close()
			return port
		}
	}
	t.Fatal("no free port")
	return 0
}

// freeMediaPort is a port for sipp's media (-mp), free on 127.0.0.1 with
// the three after it (sipp binds audio and video RTP and RTCP from it).
// It is above the kernel's ephemeral range (32768-60999 by default), so no
// socket bound to port 0 elsewhere can take it between this check and
// sipp's bind: CI's -race pass saw sipp fail "Unable to bind audio RTP
// socket ... Address already in use" on a port freePort had found free.
func freeMediaPort(t *testing.T) int {
	t.Helper()
	const lo, hi = 61000, 65532
	start := lo + (os.Getpid()*4)%(hi-lo)
	for i := 0; i < (hi-lo)/4; i++ {
		port := lo + (start-lo+i*4)%(hi-lo)
		ok := true
		for k := range 4 {
			pc, err := net.ListenPacket("udp", "127.0.0.1:"+strconv.Itoa(port+k))
			if err != nil {
				ok = false
				break
			}
			_ = pc.Close()
		}
		if ok {
			return port
		}
	}
	t.Fatal("no free media port above the ephemeral range")
	return 0
}

// sippRun is one sipp call against addr; it returns sipp's exit code and
// its message trace.
func sippRun(t *testing.T, addr, scenario, transport string, timeout time.Duration, calls int) (int, string) {
	t.Helper()
	dir := t.TempDir()
	mode := "u1"
	if transport == "tcp" {
		mode = "t1"
	}
	args := []string{addr,
		"-sf", filepath.Join("testdata", "sipp", scenario),
		"-m", strconv.Itoa(calls), "-t", mode, "-i", localIP(addr),
		"-p", strconv.Itoa(freePort(t)), "-mp", strconv.Itoa(freeMediaPort(t)),
		"-timeout", strconv.Itoa(int(timeout/time.Second)) + "s", "-timeout_error",
		"-trace_err", "-error_file", filepath.Join(dir, "err.log"),
		"-trace_msg", "-message_file", filepath.Join(dir, "msg.log"),
		"-nostdin",
	}
	if calls > 1 {
		args = append(args, "-r", strconv.Itoa(calls), "-l", strconv.Itoa(calls))
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout+30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sipp", args...)
	cmd.Dir = "."
	out, err := cmd.CombinedOutput()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("sipp: %v", err)
	}
	trace, _ := os.ReadFile(filepath.Join(dir, "msg.log"))
	if code != 0 {
		errs, _ := os.ReadFile(filepath.Join(dir, "err.log"))
		t.Logf("sipp %s exited %d\nerrors:\n%s\nstdout tail:\n%s", scenario, code, errs, tailOf(out, 2000))
	}
	return code, string(trace)
}

// localIP is sipp's local address for a target: loopback of its family.
func localIP(target string) string {
	if strings.HasPrefix(target, "[") {
		return "::1"
	}
	return "127.0.0.1"
}

func tailOf(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// received counts the messages sipp received whose first line starts
// with prefix.
func received(trace, prefix string) int {
	n := 0
	for _, block := range strings.Split(trace, "message received") {
		_, rest, ok := strings.Cut(block, ":\n")
		if !ok {
			continue
		}
		if strings.HasPrefix(strings.TrimLeft(rest, "\r\n "), prefix) {
			n++
		}
	}
	return n
}

// TestSipp runs sipp (the independent peer) through each scenario of
// testdata/sipp against a real Server on loopback, and checks how each
// call ended, and that no goroutine and no socket is left.
func TestSipp(t *testing.T) {
	if testing.Short() {
		t.Skip("loopback with sipp: skipped under -short")
	}
	needSipp(t)
	cases := []struct {
		name      string
		scenario  string
		transport string
		cfg       func(*Config)
		hangup    bool // the app hangs up once confirmed
		waitCanc  bool // the app waits for the CANCEL
		// calls is the number of concurrent calls (default 1).
		calls int
		// during runs while sipp's call is up.
		during    func(t *testing.T, s *Server)
		timeout   time.Duration
		wantCause error // the one Ended; nil: none expected
		check     func(t *testing.T, s *Server, app *testApp, trace string)
	}{
		{name: "basic udp", scenario: "basic.xml", transport: "udp", wantCause: ErrRemoteBye},
		{name: "basic tcp", scenario: "basic.xml", transport: "tcp", wantCause: ErrRemoteBye},
		{name: "fifty calls at once", scenario: "basic.xml", transport: "udp", calls: 50, wantCause: ErrRemoteBye},
		{name: "basic ipv6", scenario: "basic.xml", transport: "udp", wantCause: ErrRemoteBye,
			cfg: func(c *Config) { c.Listen = []Listen{{Network: "udp", Addr: "[::1]:0"}} }},
		{name: "bye from us", scenario: "bye_from_us.xml", transport: "udp", hangup: true, wantCause: ErrLocalHangup},
		{name: "bye from us ipv6 tcp", scenario: "bye_from_us.xml", transport: "tcp", hangup: true, wantCause: ErrLocalHangup,
			cfg: func(c *Config) { c.Listen = []Listen{{Network: "tcp", Addr: "[::1]:0"}} }},
		{name: "close with a call up", scenario: "bye_from_us.xml", transport: "udp", wantCause: ErrServerClosed,
			during: func(t *testing.T, s *Server) {
				deadline := time.Now().Add(10 * time.Second)
				for time.Now().Before(deadline) {
					if ds := s.Dialogs(); len(ds) == 1 && ds[0].State() == StateConfirmed {
						s.Close()
						return
					}
					time.Sleep(10 * time.Millisecond)
				}
				t.Error("no confirmed dialog")
			}},
		{name: "cancel", scenario: "cancel.xml", transport: "udp", waitCanc: true,
			check: func(t *testing.T, s *Server, app *testApp, trace string) {
				if app.ctxs != 1 {
					t.Errorf("%d Invite contexts ended, want 1", app.ctxs)
				}
			}},
		{name: "no ack", scenario: "no_ack.xml", transport: "udp", wantCause: ErrAckTimeout,
			cfg: func(c *Config) { c.T1, c.T2 = 100*time.Millisecond, 400*time.Millisecond },
			check: func(t *testing.T, s *Server, app *testApp, trace string) {
				// 0.1, 0.3, 0.7, then every 0.4 s to 6.3 s: 17 again, 18 in
				// all (the BYE at 6.4 s leaves 100 ms of slack). Were sipgo
				// retransmitting too (0.5 s, then every 4 s) there would
				// be 20.
				n := received(trace, "SIP/2.0 200")
				t.Logf("sipp received %d 200s", n)
				if n < 17 || n > 18 {
					t.Errorf("sipp received %d 200s, want 18 (the first and 17 retransmissions)", n)
				}
				if n := received(trace, "BYE"); n != 1 {
					t.Errorf("sipp received %d BYEs, want 1", n)
				}
			}},
		{name: "hold and back", scenario: "hold.xml", transport: "udp", wantCause: ErrRemoteBye},
		{name: "late offer", scenario: "late_offer.xml", transport: "udp", wantCause: ErrRemoteBye,
			check: func(t *testing.T, s *Server, app *testApp, trace string) {
				if len(app.acks) != 1 || !bytes.Contains(app.acks[0], []byte("m=audio")) {
					t.Errorf("answers from the ACK: %q", app.acks)
				}
			}},
		{name: "session expires", scenario: "session_expires.xml", transport: "udp", timeout: 90 * time.Second, wantCause: ErrSessionExpired},
		{name: "require 100rel", scenario: "require_100rel.xml", transport: "udp"},
		{name: "below min-se", scenario: "min_se.xml", transport: "udp"},
		{name: "refer accepted", scenario: "refer.xml", transport: "udp", wantCause: ErrLocalHangup,
			during: referDuring(0),
			check: func(t *testing.T, s *Server, _ *testApp, trace string) {
				if n := received(trace, "REFER"); n != 1 {
					t.Errorf("sipp got %d REFERs", n)
				}
				if got := s.Stats().Refers; got["progress"] != 1 || got["succeeded"] != 1 {
					t.Errorf("refer counters %v", got)
				}
			}},
		{name: "refer busy tcp", scenario: "refer_busy.xml", transport: "tcp", wantCause: ErrRemoteBye,
			during: referDuring(486),
			check: func(t *testing.T, s *Server, _ *testApp, trace string) {
				if n := received(trace, "BYE"); n != 0 {
					t.Errorf("sipp got %d BYEs: a failed transfer ended the call", n)
				}
				if got := s.Stats().Refers; got["progress"] != 1 || got["failed"] != 1 {
					t.Errorf("refer counters %v", got)
				}
			}},
		{name: "options", scenario: "options.xml", transport: "udp"},
		{name: "options tcp", scenario: "options.xml", transport: "tcp"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ignore := goleak.IgnoreCurrent()
			fd0 := fds(t)
			cfg := Config{
				Listen: []Listen{{Network: "udp", Addr: "127.0.0.1:0"}, {Network: "tcp", Addr: "127.0.0.1:0"}},
				Log:    zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.InfoLevel),
			}
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			app := &testApp{hangupOnConfirm: tc.hangup, waitForCancel: tc.waitCanc}
			s, err := New(cfg, app)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Start(); err != nil {
				t.Fatal(err)
			}
			var addr string
			for _, a := range s.Addrs() {
				if a.Network == tc.transport {
					addr = a.Addr.String()
				}
			}
			timeout := tc.timeout
			if timeout == 0 {
				timeout = 20 * time.Second
			}
			var wg sync.WaitGroup
			if tc.during != nil {
				wg.Go(func() { tc.during(t, s) })
			}
			calls := max(tc.calls, 1)
			code, trace := sippRun(t, addr, tc.scenario, tc.transport, timeout, calls)
			wg.Wait()
			if code != 0 {
				t.Errorf("sipp exited %d", code)
			}
			// The dialog ends on its own (BYE answered, timers): give it
			// the time the BYE's transaction takes.
			deadline := time.Now().Add(5 * time.Second)
			for len(s.Dialogs()) > 0 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if n := len(s.Dialogs()); n != 0 {
				t.Errorf("%d dialogs left after the call", n)
			}
			s.Close()
			causes := app.causes()
			switch {
			case tc.wantCause == nil && len(causes) != 0:
				t.Errorf("Ended %v, want no call", causes)
			case tc.wantCause != nil && len(causes) != calls:
				t.Errorf("Ended %d times, want %d", len(causes), calls)
			case tc.wantCause != nil:
				for _, c := range causes {
					if !errors.Is(c, tc.wantCause) {
						t.Errorf("Ended with %v, want %v", c, tc.wantCause)
					}
				}
			}
			if tc.check != nil {
				tc.check(t, s, app, trace)
			}
			if st := s.Stats(); st.Panics != 0 {
				t.Errorf("%d panics", st.Panics)
			}
			goleak.VerifyNone(t, ignore)
			if fd1 := fds(t); fd1 != fd0 {
				t.Errorf("%d file descriptors after, %d before", fd1, fd0)
			}
		})
	}
}

// referDuring transfers sipp's call once confirmed: on success it hangs
// up (the caller of Refer does), on a failure with wantCode the call
// goes on (sipp hangs up).
func referDuring(wantCode int) func(t *testing.T, s *Server) {
	return func(t *testing.T, s *Server) {
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if ds := s.Dialogs(); len(ds) == 1 && ds[0].State() == StateConfirmed {
				err := ds[0].Refer(context.Background(), "sip:desk@127.0.0.1:5099")
				var re *ReferError
				switch {
				case wantCode == 0 && err == nil:
					ds[0].Hangup(nil)
				case wantCode != 0 && errors.As(err, &re) && re.Code == wantCode && re.Stage == ReferStageNotify:
				default:
					t.Errorf("Refer = %v, want code %d", err, wantCode)
					ds[0].Hangup(nil)
				}
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Error("no confirmed dialog")
	}
}
