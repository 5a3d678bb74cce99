package sip

import (
	"bytes"
	"context"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/sip/rtp"
	"github.com/brisvox/brisvox/sip/signal"
	"github.com/brisvox/brisvox/sip/trunk"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"
)

// Addresses of TestBaresipReferTransfer: none other test uses them.
const (
	referCallerIP = "127.0.0.10" // baresip, the transferee
	referTargetIP = "127.0.0.11" // sipp uas, the transfer target
)

// TestBaresipReferTransfer: a blind transfer by REFER between independent
// peers on loopback. baresip (127.0.0.10) calls us; we answer and
// Call.Transfer refers it to a sip: URI (no trunk: REFER mode). baresip
// answers 202, really calls the Refer-To target, a sipp uas on
// 127.0.0.11 (testdata/sipp/refer_target_uas.xml), and reports the
// progress by NOTIFY (message/sipfrag); on its 200 Transfer returns nil
// and we hang up (BYE). Then baresip hangs the transferred call up and
// the scenario, which needs the INVITE (From: baresip's account), the
// ACK and that BYE, passes; its message trace shows the INVITE came from
// baresip to the Refer-To URI. Mutations caught (seen failing): Transfer
// not hanging up after the sipfrag 200 (baresip gets no BYE within 10
// s); the Refer-To URI's port dropped (baresip's INVITE goes to port
// 5060, sipp gets none and no final NOTIFY comes: Transfer fails at the
// REFER timeout). baresip 1.0.0 follows a REFER through its menu module
// (config's module_app menu.so: "menu: transferring call").
func TestBaresipReferTransfer(t *testing.T) {
	if testing.Short() {
		t.Skip("real sockets, baresip and sipp")
	}
	needProgram(t, "baresip")
	needProgram(t, "sipp")
	before := goleak.IgnoreCurrent()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tone := filepath.Join(t.TempDir(), "a.wav")
	writeTone(t, tone, 440, 30*time.Second)

	target := startReferTarget(ctx, t, referTargetIP)
	calls := make(chan *Call, 2)
	srv, err := New(Config{
		Signal: signal.Config{Listen: []signal.Listen{{Network: "udp", Addr: "127.0.0.1:0"}},
			ReferTimeout: 20 * time.Second},
		Trunk: trunk.Config{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}},
		Ports: rtp.PortsConfig{Addr: netip.MustParseAddr("127.0.0.1"), Min: 34700, Max: 34799},
		// baresip sends its RTP from 127.0.0.1 whatever its SDP says.
		SymmetricRTP: true,
		Admit:        func() (conn.Admission, error) { return noSlot{}, nil },
		OnCall:       func(c *Call) { calls <- c },
		Log:          zerolog.Nop(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	caller := startBaresip(ctx, t, phoneConf{IP: referCallerIP, RTPPorts: "34800-34899", Source: tone, User: "caller", Codecs: "PCMU/8000/1"})
	caller.send("/dial sip:bot@" + srv.Addrs()[0].Addr.String())
	var c *Call
	select {
	case c = <-calls:
	case <-time.After(15 * time.Second):
		t.Fatalf("no call from baresip\n%s", caller.output())
	}
	// Its ACK handed us the call: baresip has it established, the state
	// in which it takes a REFER.
	if !caller.waitFor("Call established", 10*time.Second) {
		t.Fatalf("baresip's call was not established\n%s", caller.output())
	}

	referTo := "sip:target@" + referTargetIP + ":" + strconv.Itoa(target.port)
	if err := c.Transfer(ctx, referTo); err != nil {
		t.Fatalf("Transfer: %v\nbaresip:\n%s\nsipp:\n%s", err, caller.output(), target.report())
	}
	// Our BYE once the sipfrag 200 came: baresip's first call closed by
	// its peer (baresip hangs up neither call by itself: it sent us no
	// BYE).
	if !caller.waitFor("sip:bot@"+srv.Addrs()[0].Addr.String()+": session closed", 10*time.Second) {
		t.Fatalf("baresip got no BYE after the transfer succeeded\n%s", caller.output())
	}
	// The progress baresip reported: a sipfrag 1xx (its target's 180)
	// then the 200 Transfer waited for, each NOTIFY answered.
	st := srv.sig.Stats()
	if st.Refers["sent"] != 1 || st.Refers["progress"] < 1 || st.Refers["succeeded"] != 1 ||
		st.Requests["NOTIFY"] < 2 || st.Responses[signal.MethodCode{Method: "NOTIFY", Code: 200}] != st.Requests["NOTIFY"] {
		t.Errorf("after the transfer: refers %v, NOTIFYs %d (%d answered 200); want 1 sent, progress, 1 succeeded, 2 NOTIFYs or more, all answered",
			st.Refers, st.Requests["NOTIFY"], st.Responses[signal.MethodCode{Method: "NOTIFY", Code: 200}])
	}
	if n := st.Requests["BYE"]; n != 0 {
		t.Errorf("baresip sent %d BYEs on the transferred-from call, want 0 (the BYE is ours)", n)
	}
	// What the serve layer does at the session's end (after the check
	// above: Close would hang up too).
	_ = c.Close()
	waitUntil(t, 5*time.Second, "our call gone", func() bool { return len(srv.Calls()) == 0 })
	// The transferred call is up between baresip and sipp: baresip hangs
	// it up, sipp's scenario takes the BYE and ends.
	caller.send("/hangup")
	select {
	case <-target.done:
	case <-ctx.Done():
		t.Fatalf("sipp's scenario did not end\nbaresip:\n%s", caller.output())
	}
	if target.err != nil {
		t.Fatalf("sipp's scenario failed: %v\n%s\nbaresip:\n%s", target.err, target.report(), caller.output())
	}
	// What sipp saw: one INVITE to the Refer-To URI, from baresip's
	// account (baresip 1.0.0 adds no Referred-By).
	trace := target.trace()
	invites := receivedRequests(trace, "INVITE ")
	if len(invites) != 1 {
		t.Fatalf("sipp received %d INVITEs, want 1\n%s", len(invites), trace)
	}
	inv := invites[0]
	if !strings.HasPrefix(inv, "INVITE "+referTo+" SIP/2.0") {
		t.Errorf("the target's INVITE is not to the Refer-To URI:\n%s", inv)
	}
	from := "sip:caller@" + referCallerIP + ":" + strconv.Itoa(caller.conf.Port)
	if h := headerLine(inv, "From"); !strings.Contains(h, from) {
		t.Errorf("the target's INVITE is not from baresip's account: %q", h)
	}
	if n := len(receivedRequests(trace, "BYE ")); n != 1 {
		t.Errorf("sipp received %d BYEs, want 1", n)
	}
	caller.quit()
	srv.Close()
	goleak.VerifyNone(t, before)
}

// needProgram skips the test when name is not installed, except under
// CI=true, where setup installs it and its absence fails the test.
func needProgram(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not installed (CI=true: go tool task setup installs it)", name)
		}
		t.Skipf("%s is not installed: go tool task setup", name)
	}
}

// referTarget is sipp running refer_target_uas.xml for one call on its
// own address, its message trace and errors in a temporary directory.
// done is closed once it exited; then err holds its exit error.
type referTarget struct {
	port int
	dir  string
	out  bytes.Buffer
	err  error
	done chan struct{}
}

func startReferTarget(ctx context.Context, t *testing.T, ip string) *referTarget {
	t.Helper()
	r := &referTarget{port: freeUDPPort(t, ip), dir: t.TempDir(), done: make(chan struct{})}
	scenario, err := filepath.Abs(filepath.Join("testdata", "sipp", "refer_target_uas.xml"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, "sipp", "-sf", scenario, "-m", "1", "-t", "u1",
		"-i", ip, "-mi", ip, "-p", strconv.Itoa(r.port), "-mp", strconv.Itoa(freeUDPPort(t, ip)),
		"-timeout", "45s", "-timeout_error", "-nostdin",
		"-trace_err", "-error_file", filepath.Join(r.dir, "err.log"),
		"-trace_msg", "-message_file", filepath.Join(r.dir, "msg.log"))
	cmd.Dir = r.dir
	cmd.Stdout, cmd.Stderr = &r.out, &r.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { defer close(r.done); r.err = cmd.Wait() }()
	t.Cleanup(func() {
		select {
		case <-r.done:
		default:
			_ = cmd.Process.Kill()
			<-r.done
		}
	})
	return r
}

// trace is sipp's message trace (read once it exited).
func (r *referTarget) trace() string {
	b, _ := os.ReadFile(filepath.Join(r.dir, "msg.log"))
	return string(b)
}

// report is sipp's errors and trace, for a failure (only once it
// exited: its output is not locked).
func (r *referTarget) report() string {
	select {
	case <-r.done:
	default:
		return "(sipp still running)"
	}
	errs, _ := os.ReadFile(filepath.Join(r.dir, "err.log"))
	return "errors:\n" + string(errs) + "\ntrace:\n" + r.trace() + "\noutput:\n" + tail(r.out.String(), 2000)
}

// receivedRequests is the messages of a sipp trace that sipp received
// and whose first line starts with prefix.
func receivedRequests(trace, prefix string) []string {
	var got []string
	for _, block := range strings.Split(trace, "message received")[1:] {
		_, rest, ok := strings.Cut(block, ":\n")
		if !ok {
			continue
		}
		rest = strings.TrimLeft(rest, "\r\n ")
		if end := strings.Index(rest, "\n-----"); end >= 0 {
			rest = rest[:end]
		}
		if strings.HasPrefix(rest, prefix) {
			got = append(got, strings.ReplaceAll(rest, "\r", ""))
		}
	}
	return got
}

// headerLine is msg's first header line named name (or its compact
// form's), "" if none.
func headerLine(msg, name string) string {
	for _, l := range strings.Split(msg, "\n") {
		k, _, ok := strings.Cut(l, ":")
		if ok && strings.EqualFold(strings.TrimSpace(k), name) {
			return l
		}
	}
	return ""
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
