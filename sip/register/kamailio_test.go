package register

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/brisvox/brisvox/sip/signal"
	"github.com/emiago/sipgo/sip"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"
)

// Loopback addresses of TestKamailioRegistrar, apart from those of
// cmd/brisvox's dispatcher test (127.0.0.1-4), which may run at the
// same time.
const (
	kamHost    = "127.0.0.6" // kamailio, the registrar
	uaHost     = "127.0.0.7" // our listener, which registers
	callerHost = "127.0.0.8" // who sends requests to the AOR
)

// TestKamailioRegistrar registers against Debian's kamailio
// (testdata/kamailio/registrar.cfg: registrar and usrloc in memory,
// digest against a password in the cfg) and proves the binding is real:
//   - the Client registers through a signal.Server on 127.0.0.7 (401
//     answered, then 200 with kamailio's granted 3600 s);
//   - an OPTIONS to the AOR sent by another signal.Server (127.0.0.8) to
//     kamailio is relayed by lookup("location") to our listener, which
//     answers it 200;
//   - Close unregisters (200), and the same OPTIONS gets kamailio's 404
//     without reaching our listener;
//   - a wrong password is challenged again at each answer: "failed"
//     after MaxAuthAttempts answers (3 requests), no unregister.
//
// Mutation caught (seen failing): Close without the unregister (the
// binding stays: the last OPTIONS is answered 200 by our listener).
// Real processes on loopback: skipped under -short.
func TestKamailioRegistrar(t *testing.T) {
	if testing.Short() {
		t.Skip("kamailio and two SIP listeners on loopback")
	}
	for _, p := range []string{"kamailio"} {
		if _, err := exec.LookPath(p); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not installed (go tool task setup installs it)", p)
			}
			t.Skipf("%s is not installed: go tool task setup", p)
		}
	}
	// Cleanups run last first: this check after kamailio and the
	// listeners are stopped.
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) })
	dir := t.TempDir()
	kam := startRegistrarKamailio(t, dir)
	ua := startSignal(t, uaHost)
	caller := startSignal(t, callerHost)
	// kamailio answers an OPTIONS without a user itself: it is up.
	waitUp(t, caller, "sip:"+kam)

	host, port := ua.ListenContact("udp")
	cfg := Config{
		Trunk: "kamailio", Registrar: "sip:" + kam, AOR: "alice@" + kamHost,
		Contact: "sip:alice@" + net.JoinHostPort(host, strconv.Itoa(port)),
		Auth:    &Credentials{User: "alice", Password: "kamailio-secret"},
		Expires: time.Hour, Seed: 17, Log: zerolog.Nop(),
	}
	c, err := New(cfg, ua)
	if err != nil {
		t.Fatal(err)
	}
	c.Start()
	defer c.Close()
	var st Status
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if st = c.State(); st.State == StateRegistered {
			break
		}
	}
	if st.State != StateRegistered || st.Code != 200 || st.Expires != time.Hour {
		t.Fatalf("status %+v, stats %v, want registered (200, 1h)", st, c.Stats())
	}
	if s := c.Stats(); s["challenges"] != 1 || s["registered"] != 1 || s["requests"] != 2 {
		t.Errorf("stats %v, want one challenge answered, one registration in two requests", s)
	}

	aor := "sip:alice@" + kam
	if code := options(t, caller, aor); code != 200 {
		t.Errorf("OPTIONS to the registered AOR: %d, want 200 from our listener", code)
	}
	if n := optionsAnswered(ua); n != 1 {
		t.Errorf("our listener answered %d OPTIONS, want 1 (relayed by kamailio)", n)
	}

	c.Close()
	if st := c.State(); st.State != StateUnregistered || st.Code != 200 {
		t.Errorf("after Close: %+v, want unregistered (200)", st)
	}
	if code := options(t, caller, aor); code != 404 {
		t.Errorf("OPTIONS after the unregister: %d, want kamailio's 404", code)
	}
	if n := optionsAnswered(ua); n != 1 {
		t.Errorf("our listener answered %d OPTIONS, want still 1", n)
	}

	// A wrong password: kamailio challenges each answer again; the client
	// stops after MaxAuthAttempts answers ("failed", backing off) and
	// unregisters nothing at Close.
	bad := cfg
	bad.Auth = &Credentials{User: "alice", Password: "wrong"}
	w, err := New(bad, ua)
	if err != nil {
		t.Fatal(err)
	}
	w.Start()
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if st = w.State(); st.State != StateIdle && st.State != StateRegistering {
			break
		}
	}
	w.Close()
	if st.State != StateFailed || st.Code != 401 {
		t.Errorf("wrong password: status %+v, want failed (401)", st)
	}
	if s := w.Stats(); s["requests"] != 3 || s["auth_failed"] != 1 || s["unregistered"] != 0 {
		t.Errorf("wrong password: stats %v, want 3 requests (2 answers), one auth failure, no unregister", s)
	}
}

// startSignal is a started signal.Server on host that takes no call,
// closed at the test's end.
func startSignal(t *testing.T, host string) *signal.Server {
	t.Helper()
	s, err := signal.New(signal.Config{Listen: []signal.Listen{{Network: "udp", Addr: net.JoinHostPort(host, "0")}}, Log: zerolog.Nop()}, refuseAll{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	return s
}

// optionsAnswered is how many OPTIONS s answered 200.
func optionsAnswered(s *signal.Server) uint64 {
	return s.Stats().Responses[signal.MethodCode{Method: "OPTIONS", Code: 200}]
}

// options sends an OPTIONS to target from s and returns the final status
// (0: no answer in 10 s).
func options(t *testing.T, s *signal.Server, target string) int {
	t.Helper()
	var u sip.Uri
	if err := sip.ParseUri(target, &u); err != nil {
		t.Fatal(err)
	}
	req := sip.NewRequest(sip.OPTIONS, u)
	from := &sip.FromHeader{Address: sip.Uri{Scheme: "sip", User: "probe", Host: callerHost}, Params: sip.NewParams()}
	from.Params.Add("tag", sip.GenerateTagN(12))
	req.AppendHeader(from)
	req.AppendHeader(&sip.ToHeader{Address: sip.Uri{Scheme: "sip", User: u.User, Host: u.Host, Port: u.Port}, Params: sip.NewParams()})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := s.Request(ctx, req)
	if err != nil {
		t.Logf("OPTIONS: %v", err)
		return 0
	}
	return res.StatusCode
}

// waitUp waits until target answers an OPTIONS 200.
func waitUp(t *testing.T, s *signal.Server, target string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if options(t, s, target) == 200 {
			return
		}
	}
	t.Fatalf("kamailio did not answer OPTIONS on %s", target)
}

// startRegistrarKamailio runs kamailio in the foreground (-DD -E) with
// testdata/kamailio/registrar.cfg on kamHost and a free port, its
// runtime files and log in dir; it is stopped (SIGTERM, then SIGKILL
// after 10 s) at the test's end, its log shown when the test failed.
// It returns kamailio's host:port.
func startRegistrarKamailio(t *testing.T, dir string) string {
	t.Helper()
	addr := net.JoinHostPort(kamHost, strconv.Itoa(freeUDPPortOn(t, kamHost)))
	cfg, err := filepath.Abs(filepath.Join("testdata", "kamailio", "registrar.cfg"))
	if err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, "kamailio.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("kamailio", "-DD", "-E", "-f", cfg, "-Y", dir, "-w", dir,
		"-A", "LISTEN=udp:"+addr, "-A", `AUTH_PASSWORD="kamailio-secret"`,
		"-A", fmt.Sprintf(`CTL_SOCKET="unix:%s"`, filepath.Join(dir, "kamailio_ctl")))
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); _ = logf.Close(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			data, _ := os.ReadFile(logf.Name())
			t.Logf("kamailio's log:\n%s", data)
		}
	})
	return addr
}

// freeUDPPortOn is a UDP port free on host now.
func freeUDPPortOn(t *testing.T, host string) int {
	t.Helper()
	pc, err := net.ListenPacket("udp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	return pc.LocalAddr().(*net.UDPAddr).Port
}
