package register

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/brisvox/brisvox/sip/signal"
	"github.com/rs/zerolog"
)

// The engine's Sender is the signalling server.
var _ Sender = (*signal.Server)(nil)

// refuseAll is an Application that takes no call: the test only
// registers.
type refuseAll struct{}

func (refuseAll) Invite(context.Context, *signal.Invite) (signal.Media, []byte, error) {
	return nil, nil, &signal.Refusal{Code: 480}
}

func freeUDPPort(t *testing.T) int {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	return pc.LocalAddr().(*net.UDPAddr).Port
}

// TestSippRegistrar registers against sipp's registrar scenario over UDP
// on loopback: the 401 answered with a digest sipp verifies, the refresh
// 30 s after a 60 s binding (challenged again), and the unregister at
// Close, all sent by signal.Server.Request from our UDP listener. Real time (about 31 s), so skipped under -short. Mutation
// caught: refreshing at the granted expiry (sipp's 45 s wait for the
// refresh runs out), an unregister without Expires: 0 (its check_it).
func TestSippRegistrar(t *testing.T) {
	if testing.Short() {
		t.Skip("real-time sipp registrar test (31 s) skipped under -short")
	}
	if _, err := exec.LookPath("sipp"); err != nil {
		t.Fatal("sipp is not installed (scripts/setup.sh installs it)")
	}
	dir := t.TempDir()
	port := freeUDPPort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sipp", "-sf", filepath.Join("testdata", "sipp", "registrar.xml"),
		"-i", "127.0.0.1", "-p", strconv.Itoa(port), "-m", "1", "-t", "u1",
		"-trace_err", "-error_file", filepath.Join(dir, "err.log"),
		"-trace_msg", "-message_file", filepath.Join(dir, "msg.log"), "-nostdin")
	out := &tail{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // sipp binds its port

	srv, err := signal.New(signal.Config{Listen: []signal.Listen{{Network: "udp", Addr: "127.0.0.1:0"}}, Log: zerolog.Nop()}, refuseAll{})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	host, lport := srv.ListenContact("udp")
	cfg := testConfig()
	cfg.Contact = "sip:alice@" + host + ":" + strconv.Itoa(lport)
	cfg.Registrar = "sip:127.0.0.1:" + strconv.Itoa(port)
	cfg.AOR = "alice@brisvox.test"
	cfg.Expires = time.Hour
	c, err := New(cfg, srv)
	if err != nil {
		t.Fatal(err)
	}
	c.Start()
	deadline := time.Now().Add(50 * time.Second)
	for c.Stats()["refreshes"] < 1 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	st := c.State()
	c.Close()
	if st.State != StateRegistered || st.Expires != time.Minute {
		t.Errorf("status before Close %+v, stats %v", st, c.Stats())
	}
	if got := c.Stats(); got["refreshes"] != 1 || got["unregistered"] != 1 || got["challenges"] != 2 {
		t.Errorf("stats %v", got)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) || err != nil {
		errs, _ := os.ReadFile(filepath.Join(dir, "err.log"))
		t.Errorf("sipp: %v\nerrors:\n%s\noutput tail:\n%s", err, errs, out.String())
	}
	trace, _ := os.ReadFile(filepath.Join(dir, "msg.log"))
	regs := regexp.MustCompile(`(?m)^REGISTER sip:`).FindAllIndex(trace, -1)
	if len(regs) != 5 {
		t.Fatalf("sipp saw %d REGISTERs, want 5 (challenged, answered, refresh challenged, answered, unregister)", len(regs))
	}
	last := string(trace[regs[4][0]:])
	if !regexp.MustCompile(`(?mi)^Expires: *0\r?$`).MatchString(last) {
		t.Errorf("the last REGISTER does not unregister:\n%s", last)
	}
	if n := len(regexp.MustCompile(`(?mi)^Expires: *3600\r?$`).FindAll(trace, -1)); n != 4 {
		t.Errorf("%d REGISTERs asked 3600 s, want 4", n)
	}
}

// tail keeps the last 4 KiB written.
type tail struct{ b []byte }

func (w *tail) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	if len(w.b) > 4096 {
		w.b = w.b[len(w.b)-4096:]
	}
	return len(p), nil
}

func (w *tail) String() string { return string(w.b) }
