package webrtc

import (
	"errors"
	"testing"
	"time"

	"github.com/brisvox/brisvox/media"
)

// TestConfigValidate: the defaults validate, and each bad setting is an
// ErrInvalidConfig. Mutations caught: a check of Validate removed (its
// case passes), OnCall made optional.
func TestConfigValidate(t *testing.T) {
	onCall := func(*Call) {}
	cases := []struct {
		name string
		mod  func(*Config)
		ok   bool
	}{
		{"defaults", func(*Config) {}, true},
		{"lan settings", func(c *Config) {
			c.Interfaces, c.UDPPortMin, c.UDPPortMax = []string{"eth0"}, 40000, 40100
			c.NAT1To1IPs, c.STUNServers = []string{"203.0.113.7"}, []string{"stun:stun.example.net:3478"}
		}, true},
		{"no OnCall", func(c *Config) { c.OnCall = nil }, false},
		{"input rate 44100", func(c *Config) { c.InputRate = 44100 }, false},
		{"output rate 11025", func(c *Config) { c.OutputRate = 11025 }, false},
		{"complexity 11", func(c *Config) { c.OpusComplexity = 11 }, false},
		{"application voip", func(c *Config) { c.OpusApplication = "voip" }, true},
		{"application audio", func(c *Config) { c.OpusApplication = "audio" }, true},
		{"application lowdelay", func(c *Config) { c.OpusApplication = "lowdelay" }, false},
		{"bitrate 100", func(c *Config) { c.OpusBitrate = 100 }, false},
		{"network tcp", func(c *Config) { c.NetworkTypes = []string{"tcp4"} }, false},
		{"half a port range", func(c *Config) { c.UDPPortMin = 4000 }, false},
		{"reversed port range", func(c *Config) { c.UDPPortMin, c.UDPPortMax = 5000, 4000 }, false},
		{"nat ip not an ip", func(c *Config) { c.NAT1To1IPs = []string{"example.com"} }, false},
		{"nat with mdns", func(c *Config) { c.NAT1To1IPs, c.MDNS = []string{"203.0.113.7"}, true }, false},
		{"turn as stun", func(c *Config) { c.STUNServers = []string{"turn:x:3478"} }, false},
		{"empty interface", func(c *Config) { c.Interfaces = []string{""} }, false},
		{"offer limit too big", func(c *Config) { c.MaxOfferBytes = 2 << 20 }, false},
		{"negative connect timeout", func(c *Config) { c.ConnectTimeout = -time.Second }, false},
		{"negative ice timeout", func(c *Config) { c.ICEFailedTimeout = -time.Second }, false},
		{"negative event buffer", func(c *Config) { c.EventBuffer = -1 }, false},
		{"huge output queue", func(c *Config) { c.OutputQueue = 1 << 20 }, false},
		{"negative bad message bound", func(c *Config) { c.MaxBadWSMessages = -1 }, false},
		{"negative media timeout", func(c *Config) { c.MediaTimeout = -time.Second }, false},
		{"negative retry after", func(c *Config) { c.RetryAfter = -time.Second }, false},
		{"allowed origins", func(c *Config) { c.AllowedOrigins = []string{"https://app.example", "http://127.0.0.1:8080"} }, true},
		{"an origin pattern", func(c *Config) { c.AllowedOrigins = []string{"https://*.example"} }, false},
		{"jitter delays out of order", func(c *Config) { c.Jitter = media.JitterConfig{MinDelay: 5, MaxDelay: 2} }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{OnCall: onCall}
			tc.mod(&cfg)
			err := cfg.Validate()
			if tc.ok && err != nil {
				t.Fatalf("Validate: %v", err)
			}
			if !tc.ok && !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("Validate: %v, want ErrInvalidConfig", err)
			}
			if _, nerr := New(cfg); (nerr == nil) != tc.ok {
				t.Fatalf("New: %v", nerr)
			}
		})
	}
}

// TestConfigDefaults: zero values take the documented defaults, and
// nothing leaves the machine by default (no STUN, no mDNS). Mutation
// caught: a default dropped from withDefaults.
func TestConfigDefaults(t *testing.T) {
	d := Config{}.withDefaults()
	if d.InputRate != 16000 || d.OutputRate != 16000 || d.OpusComplexity != 5 || d.OpusBitrate != 32000 ||
		d.MaxOfferBytes != 64<<10 || d.ConnectTimeout != 10*time.Second || d.EventBuffer != 256 ||
		d.OutputQueue != 250 || d.InputQueue != 50 || d.MaxBadWSMessages != 10 || len(d.STUNServers) != 0 || d.MDNS ||
		d.MediaTimeout != 30*time.Second || d.RetryAfter != 5*time.Second || d.ICEDisconnectedTimeout != 5*time.Second ||
		d.ICEFailedTimeout != 5*time.Second || d.ICEKeepalive != 2*time.Second || len(d.AllowedOrigins) != 0 {
		t.Fatalf("defaults %+v", d)
	}
}
