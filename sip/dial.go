package sip

import (
	"fmt"
	"strings"
	"time"

	"github.com/brisvox/brisvox/sip/sdp"
)

// Ring timeout bounds of a dial.
const (
	// DefaultRingTimeout is how long a dial rings when the request
	// sets no ring timeout.
	DefaultRingTimeout = 30 * time.Second
	// MaxRingTimeout is the longest ring timeout a dial may ask.
	MaxRingTimeout = 5 * time.Minute
)

// DialRequest is one outbound call to place through a trunk.
type DialRequest struct {
	// Trunk names a Config.Trunks entry.
	Trunk string
	// To is the number (or user part) dialled.
	To string
	// From is the caller id: a number or sip: URI; "" the trunk's From.
	From string
	// RingTimeout is how long it may ring; 0 DefaultRingTimeout.
	RingTimeout time.Duration
	// EarlyMedia plays 18x audio to the call's input when the trunk
	// allows early media too.
	EarlyMedia bool
	// codecs, when set, is the whole offer (a bridged transfer's second
	// leg is offered the first leg's codec only: the relay never
	// transcodes).
	codecs []sdp.Codec
}

// dialPlan is a checked DialRequest: what goes into the INVITE.
type dialPlan struct {
	trunk       string
	cfg         TrunkConfig
	target      string // Request-URI
	from        string // From URI
	ringTimeout time.Duration
	earlyMedia  bool
}

// plan checks req against the trunks and resolves its URIs. Errors wrap
// ErrUnknownTrunk or ErrInvalidDial and name no number.
func (s *Server) plan(req DialRequest) (dialPlan, error) {
	t, ok := s.cfg.Trunks[req.Trunk]
	if !ok {
		return dialPlan{}, fmt.Errorf("%w: %q", ErrUnknownTrunk, req.Trunk)
	}
	target, err := t.Target(req.To)
	if err != nil {
		return dialPlan{}, err
	}
	from := req.From
	if from == "" {
		from = t.From
	}
	switch {
	case from == "":
		return dialPlan{}, fmt.Errorf("%w: no caller id (the request's from, or the trunk's)", ErrInvalidDial)
	case strings.ContainsAny(from, "\r\n\x00"):
		return dialPlan{}, fmt.Errorf("%w: the caller id holds CR, LF or NUL", ErrInvalidDial)
	case isSIPURI(from):
	case validNumber(from):
		host := s.cfg.Signal.PublicHost
		if host == "" {
			hp, _ := trunkHostPort(t.Address)
			host = hp
		}
		from = "sip:" + from + "@" + host
	default:
		return dialPlan{}, fmt.Errorf("%w: the caller id is neither a number nor a sip: URI", ErrInvalidDial)
	}
	rt := req.RingTimeout
	switch {
	case rt == 0:
		rt = DefaultRingTimeout
	case rt < time.Second || rt > MaxRingTimeout:
		return dialPlan{}, fmt.Errorf("%w: ring timeout %v (want 1s to %v)", ErrInvalidDial, rt, MaxRingTimeout)
	}
	return dialPlan{trunk: req.Trunk, cfg: t, target: target, from: from, ringTimeout: rt, earlyMedia: t.EarlyMedia && req.EarlyMedia}, nil
}

// admitDial plans req and takes its trunk's limits at now; release gives
// the trunk slot back when the call ends (or the dial fails). A refused
// dial is counted (outbound_limited).
func (s *Server) admitDial(req DialRequest, now time.Time) (dialPlan, func(), error) {
	p, err := s.plan(req)
	if err != nil {
		s.count("outbound_invalid")
		return dialPlan{}, nil, err
	}
	release, err := s.limits[p.trunk].acquire(now)
	if err != nil {
		s.count("outbound_limited")
		return dialPlan{}, nil, err
	}
	return p, release, nil
}

// Trunks lists the configured trunks' names.
func (s *Server) Trunks() []string {
	out := make([]string, 0, len(s.cfg.Trunks))
	for name := range s.cfg.Trunks {
		out = append(out, name)
	}
	return out
}
