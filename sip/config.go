package sip

import (
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/sip/rtp"
	"github.com/brisvox/brisvox/sip/sdp"
	"github.com/brisvox/brisvox/sip/signal"
	"github.com/brisvox/brisvox/sip/trunk"
	"github.com/rs/zerolog"
)

// Config is the SIP transport: the layers' configs and the server's hooks.
type Config struct {
	// Signal is the user agent server (listen addresses, TLS, Contact,
	// ringing, timers).
	Signal signal.Config
	// Trunk is who may call (allowlist, flood limits, scanners, dialog
	// limits, digest users).
	Trunk trunk.Config
	// SDP is the offer/answer policy (codecs, ptime, public address).
	SDP sdp.Config
	// Ports is the RTP port range and its local address.
	Ports rtp.PortsConfig
	// Rate is the rate the call's stages hear and speak (the RTP session
	// converts the line's once each way). Default 16000.
	Rate int
	// SymmetricRTP and MediaTimeout go to every call's RTP session.
	SymmetricRTP bool
	MediaTimeout time.Duration
	// RetryAfter is the Retry-After of a 503 (full, draining, out of
	// ports). Default 5 s.
	RetryAfter time.Duration
	// Admit says whether a new call may come in (the server's admission);
	// required.
	Admit conn.Admitter
	// OnCall takes an answered call (after the ACK); required.
	OnCall func(*Call)
	// Health, when set, says whether the node takes calls at all: while
	// it returns a refusal (draining), OPTIONS outside a dialog are
	// answered 503 with its Retry-After, so a balancer probing with
	// OPTIONS (deploy/kamailio) stops sending calls here.
	Health func() *conn.Refusal
	// Trunks are the carriers outbound calls go through, by name.
	Trunks map[string]TrunkConfig
	// TransferTrunk names the trunk whose transfer mode and second leg
	// the calls that came in use (a bridged transfer dials through it);
	// "" hands them on by REFER.
	TransferTrunk string
	Log           zerolog.Logger
}

func (c Config) withDefaults() Config {
	if c.Rate == 0 {
		c.Rate = 16000
	}
	if c.RetryAfter == 0 {
		c.RetryAfter = 5 * time.Second
	}
	if !c.Ports.Addr.IsValid() {
		c.Ports.Addr = netip.IPv4Unspecified()
	}
	c.Signal.Log = c.Log
	if len(c.Trunks) > 0 {
		trunks := make(map[string]TrunkConfig, len(c.Trunks))
		for name, t := range c.Trunks {
			trunks[name] = t.withDefaults()
		}
		c.Trunks = trunks
	}
	return c
}

// Validate checks a config after defaults.
func (c Config) Validate() error {
	switch {
	case c.Admit == nil || c.OnCall == nil:
		return fmt.Errorf("%w: Admit and OnCall are required", ErrInvalidConfig)
	case c.Rate != 8000 && c.Rate != 16000:
		return fmt.Errorf("%w: rate %d (want 8000 or 16000)", ErrInvalidConfig, c.Rate)
	case c.RetryAfter < time.Second:
		return fmt.Errorf("%w: retry after %v", ErrInvalidConfig, c.RetryAfter)
	}
	for name, t := range c.Trunks {
		if name == "" || strings.ContainsAny(name, " \t\r\n\x00") {
			return fmt.Errorf("%w: a trunk's name is empty or holds white space", ErrInvalidConfig)
		}
		if err := t.Validate(); err != nil {
			return fmt.Errorf("trunk %s: %w", name, err)
		}
	}
	if _, ok := c.Trunks[c.TransferTrunk]; c.TransferTrunk != "" && !ok {
		return fmt.Errorf("%w: transfer trunk %q is not among the trunks", ErrInvalidConfig, c.TransferTrunk)
	}
	if err := c.Signal.Validate(); err != nil {
		return err
	}
	if err := c.Trunk.Validate(); err != nil {
		return err
	}
	if err := c.SDP.Validate(); err != nil {
		return err
	}
	return c.Ports.Validate()
}
