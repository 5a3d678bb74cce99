package twilio

import (
	"errors"
	"testing"
	"time"
)

// TestConfigValidate: bad fields are refused with ErrInvalidConfig and
// the zero fields take their defaults (pings on, 10 s and 10 s; a
// negative PingInterval or IdleTimeout turns the bound off). Mutation
// caught (seen failing in pcmws, the same defaults): PingInterval not
// defaulted.
func TestConfigValidate(t *testing.T) {
	on := func(*Call) {}
	for name, c := range map[string]Config{
		"no OnCall":         {},
		"negative pong":     {OnCall: on, Limits: Limits{PongTimeout: -time.Second}},
		"negative write":    {OnCall: on, Limits: Limits{WriteTimeout: -time.Second}},
		"negative start":    {OnCall: on, StartTimeout: -time.Second},
		"small messages":    {OnCall: on, Limits: Limits{MaxMessageBytes: 100}},
		"public URL alone":  {OnCall: on, PublicURL: "wss://a.example"},
		"public URL https":  {OnCall: on, AuthToken: "t", PublicURL: "https://a.example"},
		"out queue of one":  {OnCall: on, Limits: Limits{OutQueue: 1}},
		"negative in queue": {OnCall: on, Limits: Limits{InQueue: -1}},
	} {
		if err := c.Validate(); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: %v", name, err)
		}
	}
	d := Config{OnCall: on}.withDefaults()
	if d.PingInterval != DefaultPingInterval || d.PongTimeout != DefaultPongTimeout || d.IdleTimeout != DefaultIdleTimeout {
		t.Fatalf("defaults %v %v %v", d.PingInterval, d.PongTimeout, d.IdleTimeout)
	}
	off := Config{OnCall: on, Limits: Limits{PingInterval: -1, IdleTimeout: -1}}.withDefaults()
	if off.PingInterval != 0 || off.IdleTimeout != 0 {
		t.Fatalf("negative bounds: ping %v idle %v, want 0 (off)", off.PingInterval, off.IdleTimeout)
	}
}
