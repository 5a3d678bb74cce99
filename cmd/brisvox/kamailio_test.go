package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestKamailioDispatcher runs Debian's kamailio with deploy/kamailio's
// kamailio.cfg (unchanged, its defines set with -A) on 127.0.0.1 in front
// of two `brisvox serve` processes, on 127.0.0.2 and 127.0.0.3, serving
// testdata/kamailio/node.toml; sipp (uac_g722.xml: G.722 offered, no RTP
// sent) calls through the balancer. Checked from sipp's counts and each
// node's /stats:
//   - 40 calls all complete, split across both nodes, each node answering
//     200 to as many BYEs as it answered INVITEs (no 481: every BYE
//     followed the Record-Route set to the node that took the call);
//   - one node SIGKILLed with live calls: 20 new calls all succeed on the
//     other, the live calls on the dead node end (their BYE fails), those
//     on the live one complete;
//   - the node restarted, then SIGTERMed with live calls: it answers
//     OPTIONS 503, kamailio marks it inactive, 10 new calls all go to the
//     other, its live calls all complete and it exits 0.
//
// Mutation caught (seen failing): brisvox serve without cfg.Health (the
// draining node answers OPTIONS 200): no OPTIONS 503, kamailio keeps the
// node active. Real processes on loopback: skipped under -short.
func TestKamailioDispatcher(t *testing.T) {
	if testing.Short() {
		t.Skip("kamailio, sipp and two serve processes on loopback")
	}
	for _, p := range []string{"kamailio", "kamcmd", "sipp"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Fatalf("%s is not installed (go tool task setup installs kamailio and sip-tester)", p)
		}
	}
	bin := build(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	hosts := []string{"127.0.0.2", "127.0.0.3"}
	ports := []int{freeUDP(t, hosts[0]), freeUDP(t, hosts[1])}
	nodes := []*kamNode{startNode(t, bin, dir, hosts[0], ports[0]), startNode(t, bin, dir, hosts[1], ports[1])}
	kam := startKamailio(t, ctx, dir, hosts, ports)
	kam.waitFlags(t, 30*time.Second, map[string]string{nodes[0].uri: "AP", nodes[1].uri: "AP"})

	// 1. 40 calls split across both nodes, every BYE at its node.
	s := runSipp(t, ctx, dir, kam.addr, 40, 5, 1000)
	if s.ok != 40 || s.failed != 0 {
		t.Fatalf("40 calls: %d successful, %d failed\n%s", s.ok, s.failed, s.out)
	}
	total := 0
	for i, n := range nodes {
		st := n.stats(t)
		t.Logf("node %d: %d calls", i, st["responses_INVITE_200"])
		if st["responses_INVITE_200"] < 10 {
			t.Errorf("node %d took %d of the 40 calls: not split", i, st["responses_INVITE_200"])
		}
		if st["responses_BYE_200"] != st["responses_INVITE_200"] || st["responses_BYE_481"] != 0 {
			t.Errorf("node %d: %d calls, %d BYEs answered 200, %d 481", i, st["responses_INVITE_200"], st["responses_BYE_200"], st["responses_BYE_481"])
		}
		total += int(st["responses_INVITE_200"])
	}
	if total != 40 {
		t.Errorf("the nodes answered %d calls, want 40", total)
	}

	// 2. Node 1 killed with live calls.
	long := startSipp(t, ctx, dir, kam.addr, 4, 10, 12000)
	live := waitNodesLive(t, nodes, 2)
	before := nodes[0].stats(t)["responses_INVITE_200"]
	nodes[1].kill(t)
	s = runSipp(t, ctx, dir, kam.addr, 20, 4, 500)
	if s.ok != 20 || s.failed != 0 {
		t.Errorf("after the kill: %d of 20 new calls successful, %d failed\n%s", s.ok, s.failed, s.out)
	}
	if got := nodes[0].stats(t)["responses_INVITE_200"] - before; got != 20 {
		t.Errorf("after the kill the live node took %d new calls, want 20", got)
	}
	ls := long.wait(t)
	if uint64(ls.ok) != live[0] || uint64(ls.failed) != live[1] {
		t.Errorf("calls live at the kill: %d successful, %d failed; want %d (live node) and %d (dead node)\n%s", ls.ok, ls.failed, live[0], live[1], ls.out)
	}

	// 3. Node 1 back, then node 0 drained with live calls.
	nodes[1] = startNode(t, bin, dir, hosts[1], ports[1])
	kam.waitFlags(t, 30*time.Second, map[string]string{nodes[0].uri: "AP", nodes[1].uri: "AP"})
	long = startSipp(t, ctx, dir, kam.addr, 4, 10, 20000)
	live = waitNodesLive(t, nodes, 2)
	if err := nodes[0].cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Well within the live calls' 20 s: the node is still up, answering
	// the probes 503 (once its calls ended it would answer nothing).
	kam.waitFlags(t, 5*time.Second, map[string]string{nodes[0].uri: "IP", nodes[1].uri: "AP"})
	st0 := nodes[0].stats(t)
	if st0["responses_OPTIONS_503"] == 0 {
		t.Errorf("the draining node answered no OPTIONS 503: %v", st0)
	}
	before1 := nodes[1].stats(t)["responses_INVITE_200"]
	s = runSipp(t, ctx, dir, kam.addr, 10, 4, 500)
	if s.ok != 10 || s.failed != 0 {
		t.Errorf("during the drain: %d of 10 new calls successful, %d failed\n%s", s.ok, s.failed, s.out)
	}
	if got := nodes[1].stats(t)["responses_INVITE_200"] - before1; got != 10 {
		t.Errorf("during the drain the other node took %d new calls, want 10", got)
	}
	if got := nodes[0].stats(t)["responses_INVITE_200"] - st0["responses_INVITE_200"]; got != 0 {
		t.Errorf("the draining node took %d new calls", got)
	}
	ls = long.wait(t)
	if uint64(ls.ok) != live[0]+live[1] || ls.failed != 0 {
		t.Errorf("calls live at the drain: %d successful, %d failed; want all %d\n%s", ls.ok, ls.failed, live[0]+live[1], ls.out)
	}
	if err := nodes[0].wait(time.Minute); err != nil {
		t.Errorf("the drained node: %v\n%s", err, nodes[0].stdout)
	}
}

// freeUDP is a UDP port free on host now.
func freeUDP(t *testing.T, host string) int {
	t.Helper()
	pc, err := net.ListenPacket("udp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	return pc.LocalAddr().(*net.UDPAddr).Port
}

// kamNode is one `brisvox serve` child.
type kamNode struct {
	cmd    *exec.Cmd
	uri    string
	base   string
	stdout *syncBuffer
	done   chan error
}

var httpBanner = regexp.MustCompile(`serving agent "node" on (http://\S+)/`)

func startNode(t *testing.T, bin, dir, host string, port int) *kamNode {
	t.Helper()
	sipAddr := net.JoinHostPort(host, strconv.Itoa(port))
	logf, err := os.Create(filepath.Join(dir, fmt.Sprintf("node-%s-%d.log", host, time.Now().UnixNano())))
	if err != nil {
		t.Fatal(err)
	}
	agent, err := filepath.Abs(filepath.Join("testdata", "kamailio", "node.toml"))
	if err != nil {
		t.Fatal(err)
	}
	n := &kamNode{uri: "sip:" + sipAddr, stdout: &syncBuffer{}, done: make(chan error, 1)}
	n.cmd = exec.Command(bin, "serve", "--agent", agent, "--addr", net.JoinHostPort(host, "0"), "--sip-addr", sipAddr, "--drain", "60s", "--log-level", "warn",
		"--records-dir", t.TempDir())
	n.cmd.Stdout, n.cmd.Stderr = n.stdout, logf
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { n.done <- n.cmd.Wait(); _ = logf.Close() }()
	t.Cleanup(func() { n.kill(t) })
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		out := n.stdout.String()
		if m := httpBanner.FindStringSubmatch(out); m != nil && strings.Contains(out, "SIP on udp") {
			n.base = m[1]
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %s did not start:\n%s", sipAddr, out)
		}
	}
}

// kill ends the node at once (SIGKILL) and waits for it; a no-op once it
// has exited.
func (n *kamNode) kill(t *testing.T) {
	t.Helper()
	_ = n.cmd.Process.Kill()
	_ = n.wait(10 * time.Second)
}

// wait waits for the node's exit, its error (nil: exit 0).
func (n *kamNode) wait(d time.Duration) error {
	if n.cmd.ProcessState != nil {
		return nil
	}
	select {
	case err := <-n.done:
		n.done <- err
		return err
	case <-time.After(d):
		return fmt.Errorf("still running after %v", d)
	}
}

// stats is the node's /stats "sip" figures.
func (n *kamNode) stats(t *testing.T) map[string]uint64 {
	t.Helper()
	_, body := fetch(t, "GET", n.base+"/stats", "")
	var s struct {
		SIP map[string]uint64 `json:"sip"`
	}
	if err := json.Unmarshal([]byte(body), &s); err != nil {
		t.Fatalf("/stats: %v", err)
	}
	return s.SIP
}

// waitNodesLive waits until each node has each live calls, and returns
// each node's count.
func waitNodesLive(t *testing.T, nodes []*kamNode, each int) []uint64 {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		out := make([]uint64, len(nodes))
		ok := true
		for i, n := range nodes {
			out[i] = n.stats(t)["calls_live"]
			ok = ok && out[i] == uint64(each)
		}
		if ok {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("live calls %v, want %d on each node", out, each)
		}
	}
}

// kamailio is the balancer process.
type kamailio struct {
	addr, ctl string
}

func startKamailio(t *testing.T, ctx context.Context, dir string, hosts []string, ports []int) *kamailio {
	t.Helper()
	var list strings.Builder
	for i := range hosts {
		fmt.Fprintf(&list, "1 sip:%s:%d\n", hosts[i], ports[i])
	}
	dsList := filepath.Join(dir, "dispatcher.list")
	if err := os.WriteFile(dsList, []byte(list.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	k := &kamailio{addr: fmt.Sprintf("127.0.0.1:%d", freeUDP(t, "127.0.0.1")), ctl: "unix:" + filepath.Join(dir, "kamailio_ctl")}
	logf, err := os.Create(filepath.Join(dir, "kamailio.log"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(moduleRoot(t), "deploy", "kamailio", "kamailio.cfg")
	cmd := exec.Command("kamailio", "-DD", "-E", "-f", cfg, "-Y", dir, "-w", dir,
		"-A", "LISTEN=udp:"+k.addr, "-A", `DISPATCHER_LIST="`+dsList+`"`, "-A", `CTL_SOCKET="`+k.ctl+`"`,
		"-A", "PING_INTERVAL=1", "-A", "CHILDREN=2")
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
	return k
}

var dsDest = regexp.MustCompile(`URI: (\S+)\s+FLAGS: (\S+)`)

// waitFlags waits up to within until kamcmd's dispatcher.list shows each
// node with its flags (AP active, IP inactive).
func (k *kamailio) waitFlags(t *testing.T, within time.Duration, want map[string]string) {
	t.Helper()
	var got map[string]string
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		out, _ := exec.Command("kamcmd", "-s", k.ctl, "dispatcher.list").CombinedOutput()
		got = map[string]string{}
		for _, m := range dsDest.FindAllStringSubmatch(string(out), -1) {
			got[m[1]] = m[2]
		}
		match := true
		for uri, f := range want {
			match = match && got[uri] == f
		}
		if match {
			return
		}
	}
	t.Fatalf("dispatcher.list: %v, want %v", got, want)
}

// sippCalls is one sipp run of uac_g722.xml: its counts once it ended.
type sippCalls struct {
	ok, failed int
	out        string
	done       chan struct{}
}

var sippCount = regexp.MustCompile(`(Successful|Failed) call\s*\|\s*\d+\s*\|\s*(\d+)`)

// startSipp places n calls at rate per second, each pausing pause ms
// before its BYE, through target.
func startSipp(t *testing.T, ctx context.Context, dir, target string, n, rate, pause int) *sippCalls {
	t.Helper()
	run := filepath.Join(dir, fmt.Sprintf("sipp-%d", time.Now().UnixNano()))
	if err := os.Mkdir(run, 0o700); err != nil {
		t.Fatal(err)
	}
	scenario, err := filepath.Abs(filepath.Join("testdata", "kamailio", "uac_g722.xml"))
	if err != nil {
		t.Fatal(err)
	}
	const host = "127.0.0.4"
	cmd := exec.CommandContext(ctx, "sipp", "-sf", scenario, "-m", strconv.Itoa(n), "-r", strconv.Itoa(rate),
		"-d", strconv.Itoa(pause), "-i", host, "-mi", host, "-p", strconv.Itoa(freeUDP(t, host)),
		"-mp", strconv.Itoa(freeUDP(t, host)), "-nostdin", "-trace_err", "-timeout", "60s", "-timeout_error", target)
	cmd.Dir = run
	s := &sippCalls{done: make(chan struct{})}
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(s.done)
		_ = cmd.Wait()
		s.out = out.String()
		for _, m := range sippCount.FindAllStringSubmatch(s.out, -1) {
			v, _ := strconv.Atoi(m[2])
			if m[1] == "Successful" {
				s.ok = v
			} else {
				s.failed = v
			}
		}
	}()
	return s
}

func (s *sippCalls) wait(t *testing.T) *sippCalls {
	t.Helper()
	<-s.done
	return s
}

func runSipp(t *testing.T, ctx context.Context, dir, target string, n, rate, pause int) *sippCalls {
	t.Helper()
	return startSipp(t, ctx, dir, target, n, rate, pause).wait(t)
}
