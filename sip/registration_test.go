package sip_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/sip"
	"github.com/brisvox/brisvox/sip/register"
	"github.com/brisvox/brisvox/sip/rtp"
	"github.com/brisvox/brisvox/sip/signal"
	"github.com/brisvox/brisvox/sip/trunk"
	"github.com/rs/zerolog"
)

// registrarConfig is a server config with one trunk, "carrier", that
// registers at address over transport; no sockets are opened.
func registrarConfig(address, transport string, edit func(*sip.TrunkConfig)) sip.Config {
	t := sip.TrunkConfig{Address: address, Transport: transport, Register: true, AuthUser: "alice", AuthPassword: "secret"}
	if edit != nil {
		edit(&t)
	}
	return sip.Config{
		Signal: signal.Config{Listen: []signal.Listen{{Network: "udp", Addr: "127.0.0.1:0"}}},
		Trunk:  trunk.Config{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}},
		Ports:  rtp.PortsConfig{Addr: netip.MustParseAddr("127.0.0.1"), Min: 31000, Max: 31100},
		Admit:  func() (conn.Admission, error) { return noSlot{}, nil },
		OnCall: func(*sip.Call) {},
		Trunks: map[string]sip.TrunkConfig{"carrier": t},
		Log:    zerolog.Nop(),
	}
}

// TestRegistrationConfig: a registering trunk is checked in New (errors
// name the trunk, never the user or the password), and before Start its
// registration is idle; a trunk without Register has none. Mutation
// caught: New not checking the trunks' registrations (the TCP trunk
// without a TCP listener and the trunk without a user are accepted).
func TestRegistrationConfig(t *testing.T) {
	cases := []struct {
		name    string
		trunk   func(*sip.TrunkConfig)
		wantErr bool
	}{
		{"udp host:port", nil, false},
		{"sip URI with a user part", func(c *sip.TrunkConfig) { c.Address = "sip:+4930123@carrier.test:5070" }, false},
		{"AOR from the From number", func(c *sip.TrunkConfig) { c.AuthUser, c.AuthPassword, c.From = "", "", "+4930123" }, false},
		{"AOR from the From URI", func(c *sip.TrunkConfig) { c.AuthUser, c.AuthPassword, c.From = "", "", "sip:bot@carrier.test" }, false},
		{"no user for the AOR", func(c *sip.TrunkConfig) { c.AuthUser, c.AuthPassword = "", "" }, true},
		{"tcp without a tcp listener", func(c *sip.TrunkConfig) { c.Transport = "TCP" }, true},
		{"a user a URI cannot carry", func(c *sip.TrunkConfig) { c.AuthUser = "al ice@x" }, true},
		{"not registering", func(c *sip.TrunkConfig) { c.Register, c.AuthUser, c.AuthPassword = false, "", "" }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := registrarConfig("carrier.test:5060", "", tc.trunk)
			srv, err := sip.New(cfg)
			if tc.wantErr {
				if !errors.Is(err, sip.ErrInvalidConfig) {
					t.Fatalf("New = %v, want ErrInvalidConfig", err)
				}
				if msg := err.Error(); strings.Contains(msg, "secret") || strings.Contains(msg, "alice") || strings.Contains(msg, "al ice") {
					t.Errorf("the error names a credential: %q", msg)
				}
				return
			}
			if err != nil {
				t.Fatalf("New = %v", err)
			}
			defer srv.Close()
			got := srv.Registrations()
			if !cfg.Trunks["carrier"].Register {
				if len(got) != 0 {
					t.Errorf("Registrations = %+v, want none", got)
				}
				return
			}
			if len(got) != 1 || got[0].Trunk != "carrier" || got[0].State != register.StateIdle {
				t.Errorf("Registrations before Start = %+v", got)
			}
		})
	}
}

// startRegistrar runs a sipp UAS scenario of sip/register's testdata on
// host:port in the background, tracing its messages into dir.
func startRegistrar(t *testing.T, ctx context.Context, scenario, host string, port int, dir string) *sippRun {
	t.Helper()
	if _, err := exec.LookPath("sipp"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("sipp is not installed (go tool task setup installs sip-tester)")
		}
		t.Skip("sipp (sip-tester) is not installed: go tool task setup")
	}
	abs, err := filepath.Abs(filepath.Join("register", "testdata", "sipp", scenario))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, "sipp", "-sf", abs, "-i", host, "-p", strconv.Itoa(port), "-m", "1", "-t", "u1",
		"-timeout", "60s", "-timeout_error", "-trace_err", "-error_file", filepath.Join(dir, "err.log"),
		"-trace_msg", "-message_file", filepath.Join(dir, "msg.log"), "-nostdin")
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &sippRun{done: make(chan struct{})}
	go func() { defer close(s.done); s.err = cmd.Wait(); s.out = out.String() }()
	// sipp binds its port; a REGISTER before that is retransmitted.
	time.Sleep(300 * time.Millisecond)
	return s
}

// waitRegistration polls the server's only registration until ok says
// yes, failing after within.
func waitRegistration(t *testing.T, srv *sip.Server, within time.Duration, ok func(register.Status, map[string]uint64) bool) register.Status {
	t.Helper()
	var st register.Status
	var stats map[string]uint64
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		regs := srv.Registrations()
		if len(regs) != 1 {
			t.Fatalf("Registrations = %+v, want one", regs)
		}
		st, stats = regs[0], srv.Stats()
		if ok(st, stats) {
			return st
		}
	}
	t.Fatalf("registration after %v: %+v, stats %v", within, st, registerStats(stats))
	return st
}

// registerStats are the register_ keys of a server's Stats.
func registerStats(stats map[string]uint64) map[string]uint64 {
	out := map[string]uint64{}
	for k, v := range stats {
		if strings.HasPrefix(k, "register_") {
			out[k] = v
		}
	}
	return out
}

// TestServerRegistersAndUnregisters: a sip.Server with a Register trunk
// pointing at sipp's registrar (register/testdata/sipp/
// registrar_unregister.xml on 127.0.0.2) registers at Start (401
// answered with a digest sipp verifies, then 200: state registered, the
// counters in Stats as register_carrier_*), and Close sends the
// unregister before the signalling closes: sipp receives a REGISTER with
// Expires: 0 (its check_it) and exits 0. Each REGISTER names the
// registrar's domain as Request-URI, alice@<that domain> as To, our
// bound listener as Contact, and, through an outbound proxy, goes to the
// proxy (sipp) with it as the first Route (lr) before the trunk's Routes.
// Mutations caught (seen failing): Close closing the signalling before
// the registrations (the unregister has no socket: sipp times out
// waiting for it, unregistered stays 0); the trunk's outbound proxy not
// passed to the client (the REGISTER goes to carrier.test, which does
// not resolve: no registration).
func TestServerRegistersAndUnregisters(t *testing.T) {
	if testing.Short() {
		t.Skip("real sockets and sipp")
	}
	cases := []struct {
		name string
		// trunk is the trunk given sipp's host:port.
		trunk           func(sipp string) func(*sip.TrunkConfig)
		uri, to, routes func(sipp string) string
	}{
		{
			name:   "direct",
			trunk:  func(sipp string) func(*sip.TrunkConfig) { return func(c *sip.TrunkConfig) { c.Address = sipp } },
			uri:    func(sipp string) string { return "sip:" + sipp },
			to:     func(string) string { return "sip:alice@127.0.0.2" },
			routes: func(string) string { return "" },
		},
		{
			name: "through an outbound proxy",
			trunk: func(sipp string) func(*sip.TrunkConfig) {
				return func(c *sip.TrunkConfig) {
					c.Address = "sip:carrier.test"
					c.OutboundProxy = "sip:" + sipp
					c.Routes = []string{"sip:edge.carrier.test;lr"}
				}
			},
			uri:    func(string) string { return "sip:carrier.test" },
			to:     func(string) string { return "sip:alice@carrier.test" },
			routes: func(sipp string) string { return "<sip:" + sipp + ";lr>|<sip:edge.carrier.test;lr>" },
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			sipp := "127.0.0.2:" + strconv.Itoa(freePort(t, "127.0.0.2"))
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, port, _ := strings.Cut(sipp, ":")
			p, _ := strconv.Atoi(port)
			run := startRegistrar(t, ctx, "registrar_unregister.xml", "127.0.0.2", p, dir)
			r := newRig(t, func(c *sip.Config) {
				c.Trunks = registrarConfig("", "", tc.trunk(sipp)).Trunks
			})
			st := waitRegistration(t, r.srv, 20*time.Second, func(st register.Status, _ map[string]uint64) bool {
				return st.State == register.StateRegistered
			})
			if st.Code != 200 || st.Expires != time.Hour {
				t.Errorf("registered status %+v, want code 200, expires 1h", st)
			}
			stats := r.srv.Stats()
			if stats["register_carrier_registered"] != 1 || stats["register_carrier_challenges"] != 1 {
				t.Errorf("stats %v", registerStats(stats))
			}
			start := time.Now()
			r.srv.Close()
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("Close took %v", d)
			}
			if got := r.srv.Registrations(); len(got) != 1 || got[0].State != register.StateUnregistered || got[0].Code != 200 {
				t.Errorf("after Close: %+v", got)
			}
			if got := r.srv.Stats()["register_carrier_unregistered"]; got != 1 {
				t.Errorf("unregistered %d, want 1", got)
			}
			<-run.done
			if run.err != nil {
				errs, _ := os.ReadFile(filepath.Join(dir, "err.log"))
				t.Fatalf("sipp: %v\nerrors:\n%s\noutput:\n%s", run.err, errs, run.out)
			}
			trace, _ := os.ReadFile(filepath.Join(dir, "msg.log"))
			regs := regexp.MustCompile(`(?m)^REGISTER (\S+) SIP/2.0`).FindAllSubmatchIndex(trace, -1)
			if len(regs) != 3 {
				t.Fatalf("sipp saw %d REGISTERs, want 3 (challenged, answered, unregister)", len(regs))
			}
			contact := "<sip:alice@" + r.srv.Addrs()[0].Addr.String() + ">"
			for i, m := range regs {
				end := len(trace)
				if i+1 < len(regs) {
					end = regs[i+1][0]
				}
				msg := string(trace[m[0]:end])
				if uri := string(trace[m[2]:m[3]]); uri != tc.uri(sipp) {
					t.Errorf("REGISTER %d to %s, want %s", i, uri, tc.uri(sipp))
				}
				if got := header(msg, "To"); strings.Trim(got, "<>") != tc.to(sipp) {
					t.Errorf("REGISTER %d: To %q, want the AOR %s", i, got, tc.to(sipp))
				}
				if got := header(msg, "Contact"); got != contact {
					t.Errorf("REGISTER %d: Contact %q, want our listener %s", i, got, contact)
				}
				if got := header(msg, "Route"); got != tc.routes(sipp) {
					t.Errorf("REGISTER %d: Routes %q, want %q", i, got, tc.routes(sipp))
				}
			}
		})
	}
}

// header is the values of a header in a traced message (up to its first
// empty line), joined by "|".
func header(msg, name string) string {
	var out []string
	for _, line := range strings.Split(msg, "\n") {
		if strings.TrimSpace(line) == "" {
			break
		}
		k, v, ok := strings.Cut(strings.TrimRight(line, "\r"), ":")
		if ok && strings.EqualFold(strings.TrimSpace(k), name) {
			out = append(out, strings.TrimSpace(v))
		}
	}
	return strings.Join(out, "|")
}

// closedTCPPort is a TCP port on host with nothing listening.
func closedTCPPort(t *testing.T, host string) int {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	return port
}

// TestServerRegistrarAbsent: a trunk whose registrar is not there (TCP
// to a closed port on 127.0.0.2: refused at once) is "retrying", each
// attempt counted as a transport failure, with backoff: after the second
// failure no third REGISTER within 2.5 s (the second wait is 4 s less at
// most 20%). Close returns without an unregister (no binding was ever
// granted) and leaves no goroutine (the rig's goleak check). Mutation
// caught (seen failing): retrying without backoff (hundreds of attempts)
// or without doubling (the third attempt 2 s after the second).
func TestServerRegistrarAbsent(t *testing.T) {
	port := closedTCPPort(t, "127.0.0.2")
	r := newRig(t, func(c *sip.Config) {
		c.Signal.Listen = append(c.Signal.Listen, signal.Listen{Network: "tcp", Addr: "127.0.0.1:0"})
		c.Trunks = registrarConfig("127.0.0.2:"+strconv.Itoa(port), "TCP", nil).Trunks
	})
	st := waitRegistration(t, r.srv, 10*time.Second, func(st register.Status, stats map[string]uint64) bool {
		return stats["register_carrier_transport"] >= 2
	})
	if st.State != register.StateRetrying || st.Code != 0 || !st.Next.After(time.Now()) {
		t.Errorf("status after two failures %+v", st)
	}
	time.Sleep(2500 * time.Millisecond)
	stats := r.srv.Stats()
	if stats["register_carrier_requests"] != 2 || stats["register_carrier_transport"] != 2 {
		t.Errorf("2.5 s after the second failure: %v, want 2 requests, both transport failures", registerStats(stats))
	}
	start := time.Now()
	r.srv.Close()
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Close took %v", d)
	}
	got := r.srv.Registrations()
	if len(got) != 1 || got[0].State != register.StateUnregistered {
		t.Errorf("after Close: %+v", got)
	}
	if n := r.srv.Stats()["register_carrier_unregistered"]; n != 0 {
		t.Errorf("unregistered %d a binding never granted", n)
	}
}
