package sip

import (
	"errors"
	"math"
	"net/netip"
	"testing"
	"time"

	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/sip/rtp"
	"github.com/brisvox/brisvox/sip/signal"
	"github.com/brisvox/brisvox/sip/trunk"
	"github.com/rs/zerolog"
)

// TestTrunkValidate: each bad field is refused with ErrInvalidConfig,
// a good trunk passes after defaults.
func TestTrunkValidate(t *testing.T) {
	good := TrunkConfig{Address: "trunk.example:5060", From: "+15559876"}
	cases := []struct {
		name string
		edit func(*TrunkConfig)
		ok   bool
	}{
		{"good", func(*TrunkConfig) {}, true},
		{"uri address", func(c *TrunkConfig) { c.Address = "sip:trunk.example;transport=tcp" }, true},
		{"ipv6 address", func(c *TrunkConfig) { c.Address = "[::1]:5070" }, true},
		{"proxy and routes", func(c *TrunkConfig) {
			c.OutboundProxy, c.Routes = "sip:proxy.example;lr", []string{"sip:edge.example;lr"}
		}, true},
		{"credentials", func(c *TrunkConfig) { c.AuthUser, c.AuthPassword = "u", "p" }, true},
		{"no address", func(c *TrunkConfig) { c.Address = "" }, false},
		{"CRLF in address", func(c *TrunkConfig) { c.Address = "trunk.example\r\nX: y" }, false},
		{"bad port", func(c *TrunkConfig) { c.Address = "trunk.example:99999" }, false},
		{"no host", func(c *TrunkConfig) { c.Address = ":5060" }, false},
		{"unknown transport", func(c *TrunkConfig) { c.Transport = "sctp" }, false},
		{"proxy not a URI", func(c *TrunkConfig) { c.OutboundProxy = "proxy.example" }, false},
		{"route with LF", func(c *TrunkConfig) { c.Routes = []string{"sip:a\n"} }, false},
		{"user without password", func(c *TrunkConfig) { c.AuthUser = "u" }, false},
		{"password without user", func(c *TrunkConfig) { c.AuthPassword = "p" }, false},
		{"bad from", func(c *TrunkConfig) { c.From = "not a number" }, false},
		{"negative max calls", func(c *TrunkConfig) { c.MaxCalls = -1 }, false},
		{"negative cps", func(c *TrunkConfig) { c.CallsPerSecond = -1 }, false},
		{"NaN cps", func(c *TrunkConfig) { c.CallsPerSecond = math.NaN() }, false},
		{"bad dtmf", func(c *TrunkConfig) { c.DTMF = "inband" }, false},
		{"bad transfer", func(c *TrunkConfig) { c.Transfer = "attended" }, false},
		{"short register expires", func(c *TrunkConfig) { c.RegisterExpires = time.Second }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := good
			tc.edit(&c)
			err := c.withDefaults().Validate()
			if tc.ok && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !tc.ok && !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("%v, want ErrInvalidConfig", err)
			}
		})
	}
}

// TestTrunkTarget: the Request-URI carries the number, the trunk's host
// and port and a non-UDP transport; a number with URI syntax in it is
// refused (it would change the URI: mutation caught, validNumber
// accepting '@' or ';').
func TestTrunkTarget(t *testing.T) {
	cases := []struct {
		addr, transport, number, want string
	}{
		{"trunk.example", "", "+15551234", "sip:+15551234@trunk.example"},
		{"trunk.example:5080", "tcp", "100", "sip:100@trunk.example:5080;transport=tcp"},
		{"sip:old@pbx.example:5062;transport=tls", "", "*97", "sip:*97@pbx.example:5062"},
		{"sips:secure.example", "", "200", "sips:200@secure.example;transport=tls"},
		{"[::1]:5070", "", "1", "sip:1@[::1]:5070"},
	}
	for _, tc := range cases {
		tr := TrunkConfig{Address: tc.addr, Transport: tc.transport}.withDefaults()
		got, err := tr.Target(tc.number)
		if err != nil || got != tc.want {
			t.Errorf("%s %s: %q %v, want %q", tc.addr, tc.number, got, err, tc.want)
		}
	}
	tr := TrunkConfig{Address: "trunk.example"}.withDefaults()
	for _, bad := range []string{"", "1@evil.example", "1;maddr=evil", "1 2", "1\r\n", "12+3", "<1>"} {
		if _, err := tr.Target(bad); !errors.Is(err, ErrInvalidDial) {
			t.Errorf("%q: %v, want ErrInvalidDial", bad, err)
		}
	}
}

// TestTrunkLimits pins the per-trunk limits: MaxCalls live calls at
// most (a released slot is free again, a double release frees one), and
// CallsPerSecond new calls per second from a bucket of one second's
// worth. Mutations caught: no concurrency check (the 3rd acquire passes),
// release not idempotent (a double release lets 3 live), no refill (the
// second after a second's wait is refused), refill without the burst cap
// (after 10 s, 11 in a row pass).
func TestTrunkLimits(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)
	l := newTrunkLimits(TrunkConfig{MaxCalls: 2, CallsPerSecond: 100}.withDefaults())
	r1, err1 := l.acquire(t0)
	_, err2 := l.acquire(t0)
	if err1 != nil || err2 != nil {
		t.Fatalf("two under max_calls 2: %v %v", err1, err2)
	}
	if _, err := l.acquire(t0); !errors.Is(err, ErrDialLimited) {
		t.Fatalf("a third: %v, want ErrDialLimited", err)
	}
	r1()
	r1()
	if got := l.live(); got != 1 {
		t.Fatalf("after a double release: %d live, want 1", got)
	}
	if _, err := l.acquire(t0); err != nil {
		t.Fatalf("after a release: %v", err)
	}
	if _, err := l.acquire(t0); !errors.Is(err, ErrDialLimited) {
		t.Fatalf("full again: %v, want ErrDialLimited", err)
	}

	cps := func(rate float64, at []time.Duration) (passed int) {
		l := newTrunkLimits(TrunkConfig{CallsPerSecond: rate}.withDefaults())
		for _, d := range at {
			if _, err := l.acquire(t0.Add(d)); err == nil {
				passed++
			} else if !errors.Is(err, ErrDialLimited) {
				t.Fatalf("%v", err)
			}
		}
		return passed
	}
	burst := func(at time.Duration, n int) []time.Duration {
		out := make([]time.Duration, n)
		for i := range out {
			out[i] = at
		}
		return out
	}
	cases := []struct {
		name string
		rate float64
		at   []time.Duration
		want int
	}{
		{"burst of one second's worth", 5, burst(0, 8), 5},
		{"one per second at 1 cps", 1, []time.Duration{0, 500 * time.Millisecond, time.Second, 1500 * time.Millisecond, 2 * time.Second}, 3},
		{"refill capped at the burst", 10, append(burst(0, 10), burst(10*time.Second, 12)...), 20},
		{"half a call per second", 0.5, []time.Duration{0, time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second}, 3},
		{"steady 20 cps for 3 s", 20, func() []time.Duration {
			var out []time.Duration
			for i := range 60 {
				out = append(out, time.Duration(i)*50*time.Millisecond)
			}
			return out
		}(), 60},
	}
	for _, tc := range cases {
		if got := cps(tc.rate, tc.at); got != tc.want {
			t.Errorf("%s: %d passed, want %d", tc.name, got, tc.want)
		}
	}
}

// TestAdmitDial: a dial is planned against the configured trunks (the
// caller id from the trunk or the request, the ring timeout bounded),
// and the trunk's limit refuses beyond max_calls, counted.
func TestAdmitDial(t *testing.T) {
	s, err := New(Config{
		Signal: signal.Config{Listen: []signal.Listen{{Network: "udp", Addr: "127.0.0.1:0"}}, PublicHost: "engine.example"},
		Trunk:  trunk.Config{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}},
		Ports:  rtp.PortsConfig{Addr: netip.MustParseAddr("127.0.0.1"), Min: 31000, Max: 31010},
		Admit:  func() (conn.Admission, error) { return nil, errors.New("unused") },
		OnCall: func(*Call) {},
		Log:    zerolog.Nop(),
		Trunks: map[string]TrunkConfig{
			"carrier": {Address: "trunk.example", Transport: "tcp", From: "+15559876", MaxCalls: 1, EarlyMedia: true},
			"pbx":     {Address: "pbx.example"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)
	p, release, err := s.admitDial(DialRequest{Trunk: "carrier", To: "+15551234", EarlyMedia: true}, now)
	if err != nil {
		t.Fatal(err)
	}
	if p.target != "sip:+15551234@trunk.example;transport=tcp" || p.from != "sip:+15559876@engine.example" ||
		p.ringTimeout != DefaultRingTimeout || !p.earlyMedia {
		t.Errorf("plan %+v", p)
	}
	if _, _, err := s.admitDial(DialRequest{Trunk: "carrier", To: "+15551235"}, now); !errors.Is(err, ErrDialLimited) {
		t.Errorf("a second on max_calls 1: %v, want ErrDialLimited", err)
	}
	release()
	if _, _, err := s.admitDial(DialRequest{Trunk: "carrier", To: "+15551235"}, now.Add(time.Second)); err != nil {
		t.Errorf("after the release: %v", err)
	}
	if p, _, err := s.admitDial(DialRequest{Trunk: "pbx", To: "100", From: "sip:bot@engine.example", EarlyMedia: true}, now); err != nil || p.earlyMedia || p.from != "sip:bot@engine.example" {
		t.Errorf("early media off on the trunk, explicit from: %+v %v", p, err)
	}
	for name, tc := range map[string]struct {
		req  DialRequest
		want error
	}{
		"unknown trunk":     {DialRequest{Trunk: "nope", To: "1"}, ErrUnknownTrunk},
		"no caller id":      {DialRequest{Trunk: "pbx", To: "1"}, ErrInvalidDial},
		"caller id CRLF":    {DialRequest{Trunk: "pbx", To: "1", From: "sip:a\r\nX: y"}, ErrInvalidDial},
		"ring timeout long": {DialRequest{Trunk: "pbx", To: "1", From: "1", RingTimeout: time.Hour}, ErrInvalidDial},
		"bad number":        {DialRequest{Trunk: "pbx", To: "1@x", From: "1"}, ErrInvalidDial},
	} {
		if _, _, err := s.admitDial(tc.req, now); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", name, err, tc.want)
		}
	}
	s.mu.Lock()
	limited, invalid := s.counts["outbound_limited"], s.counts["outbound_invalid"]
	s.mu.Unlock()
	if limited != 1 || invalid != 5 {
		t.Errorf("counted %d limited, %d invalid; want 1, 5", limited, invalid)
	}
	if _, err := New(Config{Admit: s.cfg.Admit, OnCall: s.cfg.OnCall, Signal: s.cfg.Signal, Ports: s.cfg.Ports, Trunk: s.cfg.Trunk,
		Trunks: map[string]TrunkConfig{"bad": {Address: "x", Transport: "sctp"}}}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("a bad trunk: %v, want ErrInvalidConfig", err)
	}
}
