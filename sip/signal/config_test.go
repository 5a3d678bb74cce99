package signal

import (
	"errors"
	"testing"
	"time"
)

func TestConfigValidate(t *testing.T) {
	udp := []Listen{{Network: "udp", Addr: "127.0.0.1:0"}}
	cases := []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"defaults", Config{Listen: udp}, true},
		{"no listener", Config{}, false},
		{"bad network", Config{Listen: []Listen{{Network: "sctp", Addr: "127.0.0.1:0"}}}, false},
		{"bad addr", Config{Listen: []Listen{{Network: "udp", Addr: "127.0.0.1"}}}, false},
		{"wildcard without public host", Config{Listen: []Listen{{Network: "udp", Addr: "0.0.0.0:5060"}}}, false},
		{"wildcard with public host", Config{Listen: []Listen{{Network: "udp", Addr: "0.0.0.0:5060"}}, PublicHost: "203.0.113.7"}, true},
		{"tls without cert", Config{Listen: []Listen{{Network: "tls", Addr: "127.0.0.1:0"}}}, false},
		{"tls with cert", Config{Listen: []Listen{{Network: "tls", Addr: "127.0.0.1:0"}}, CertFile: "c", KeyFile: "k"}, true},
		{"public host with a space", Config{Listen: udp, PublicHost: "a b"}, false},
		{"ringing 183", Config{Listen: udp, Ringing: "183"}, true},
		{"ringing 181", Config{Listen: udp, Ringing: "181"}, false},
		{"T2 below T1", Config{Listen: udp, T1: time.Second, T2: 500 * time.Millisecond}, false},
		{"MinSE below 90 s", Config{Listen: udp, MinSE: 30 * time.Second}, false},
		{"SessionExpires below MinSE", Config{Listen: udp, SessionExpires: 60 * time.Second}, false},
		{"session timers off", Config{Listen: udp, SessionExpires: -1}, true},
		{"fractional MinSE", Config{Listen: udp, MinSE: 90500 * time.Millisecond}, false},
		{"UDP bound too big", Config{Listen: udp, MaxUDPMessage: 70000}, false},
		{"user agent with CRLF", Config{Listen: udp, UserAgent: "x\r\nVia: y"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.ok && err != nil {
				t.Fatalf("Validate: %v", err)
			}
			if !tc.ok && !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("Validate: %v, want ErrInvalidConfig", err)
			}
		})
	}
}
