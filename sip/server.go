package sip

import (
	"context"
	"errors"
	"maps"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/sip/rtp"
	"github.com/brisvox/brisvox/sip/sdp"
	"github.com/brisvox/brisvox/sip/signal"
	"github.com/brisvox/brisvox/sip/trunk"
	sipmsg "github.com/emiago/sipgo/sip"
	"github.com/rs/zerolog"
)

// Server is the SIP transport of one process: the user agent server, the
// trunk policy and the RTP port range, and the calls they answered.
type Server struct {
	cfg    Config
	log    zerolog.Logger
	policy *trunk.Policy
	ports  *rtp.Ports
	sig    *signal.Server
	// limits are each trunk's outbound limits, made once in New.
	limits map[string]*trunkLimits
	// regs are the trunks' registrations (registration.go).
	regs *registrations
	// bridges are the bridged transfers in place (bridged.go).
	bridges bridgeSet

	mu     sync.Mutex
	calls  map[string]*Call
	counts map[string]uint64
	// ended sums the RTP and DTMF counters of calls that are gone, so
	// the totals never go down.
	ended callTotals
}

// callTotals are the per-call counters summed over the process.
type callTotals struct {
	rtp  map[string]uint64
	dtmf map[string]uint64
}

// New makes the server; Start opens its listeners.
func New(cfg Config) (*Server, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	policy, err := trunk.New(cfg.Trunk)
	if err != nil {
		return nil, err
	}
	ports, err := rtp.NewPorts(cfg.Ports)
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg: cfg, log: cfg.Log, policy: policy, ports: ports,
		calls: map[string]*Call{}, counts: map[string]uint64{},
		ended:  callTotals{rtp: map[string]uint64{}, dtmf: map[string]uint64{}},
		limits: make(map[string]*trunkLimits, len(cfg.Trunks)),
	}
	for name, t := range cfg.Trunks {
		s.limits[name] = newTrunkLimits(t)
	}
	opts := []signal.Option{
		signal.WithReadFilter(func(src netip.AddrPort, stream bool, data []byte) bool {
			if stream {
				return !policy.FilterStream(src, data, time.Now()).Drop()
			}
			return !policy.Filter(src, data, time.Now()).Drop()
		}),
		// A stream connection is admitted like a read with no message:
		// the allowlist, the block, one token (a connection flood is a
		// flood), before sipgo spends anything on it.
		signal.WithAcceptFilter(func(src netip.AddrPort) bool {
			return !policy.FilterStream(src, nil, time.Now()).Drop()
		}),
		signal.WithLimit(policy.Acquire),
	}
	if h := cfg.Health; h != nil {
		opts = append(opts, signal.WithHealth(func() *signal.Refusal {
			if r := h(); r != nil {
				return &signal.Refusal{Code: 503, RetryAfter: r.RetryAfterSeconds()}
			}
			return nil
		}))
	}
	if policy.Authenticates() {
		opts = append(opts, signal.WithAuth(digest{policy}))
	}
	if s.sig, err = signal.New(cfg.Signal, (*app)(s), opts...); err != nil {
		return nil, err
	}
	if s.regs, err = newRegistrations(cfg, s.sig); err != nil {
		return nil, err
	}
	return s, nil
}

// digest adapts the trunk's digest authentication to the signalling's.
type digest struct{ p *trunk.Policy }

func (d digest) Challenge(failed error) string {
	challenge := d.p.Challenge
	if errors.Is(failed, trunk.ErrStaleNonce) {
		// The password was right, the nonce too old: stale=true lets
		// the client retry at once (RFC 2617 3.2.1).
		challenge = d.p.StaleChallenge
	}
	v, err := challenge(time.Now())
	if err != nil {
		// No randomness: a challenge that cannot be answered refuses the
		// call, which is what an unauthenticated INVITE gets anyway.
		return `Digest realm="unavailable", nonce="", algorithm=MD5`
	}
	return v
}

func (d digest) Verify(method, uri, authorization string) error {
	return d.p.Verify(method, uri, authorization, time.Now())
}

// Start opens the listeners, then starts the trunks' registrations.
func (s *Server) Start() error {
	if err := s.sig.Start(); err != nil {
		return err
	}
	return s.startRegistrations()
}

// Addrs are the bound listen addresses.
func (s *Server) Addrs() []signal.Addr { return s.sig.Addrs() }

// Close ends the bridged transfers (a BYE on both legs of each), then
// every dialog (a BYE each), closes the listeners and waits. Calls
// already handed to OnCall are closed by their owner; Close waits for
// their dialogs only. The trunks' registrations are unregistered
// first (at most register's UnregisterTimeout), while the listeners
// still send.
func (s *Server) Close() {
	s.bridges.close()
	s.closeRegistrations()
	s.sig.Close()
}

// Calls lists the live calls' ids.
func (s *Server) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.calls))
	for id := range s.calls {
		out = append(out, id)
	}
	return out
}

// count adds one to a server counter.
func (s *Server) count(name string) {
	s.mu.Lock()
	s.counts[name]++
	s.mu.Unlock()
}

// forget drops an ended call, keeping its counters in the totals.
func (s *Server) forget(c *Call) {
	st := c.rtpStats()
	ds := c.dtmfStats()
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.calls[c.id]; !ok {
		return
	}
	delete(s.calls, c.id)
	for k, v := range st {
		s.ended.rtp[k] += v
	}
	for k, v := range ds {
		s.ended.dtmf[k] += v
	}
}

// app is the server as the signalling's Application.
type app Server

var _ signal.Application = (*app)(nil)

// Invite answers a new INVITE: admission, an RTP session from the port
// range, the SDP answer (or our offer for a late one).
func (a *app) Invite(ctx context.Context, inv *signal.Invite) (_ signal.Media, _ []byte, err error) {
	s := (*Server)(a)
	adm, err := s.cfg.Admit()
	if err != nil {
		s.count("refused_admission")
		r := conn.RefusalOf(err)
		return nil, nil, &signal.Refusal{Code: 503, RetryAfter: r.RetryAfterSeconds()}
	}
	// The slot is held from here: given back when this INVITE fails, by
	// Close when the dialog ends before the ACK, and by the server once
	// the call it started ends.
	defer func() {
		if err != nil {
			adm.Release()
		}
	}()
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	c := newCall(s, inv)
	c.adm = adm
	sess, err := rtp.New(rtp.Config{
		Ports: s.ports, CallID: c.id, InputRate: s.cfg.Rate, OutputRate: s.cfg.Rate,
		SymmetricRTP: s.cfg.SymmetricRTP, MediaTimeout: s.cfg.MediaTimeout,
		OnEvent: c.onEvent, Logger: s.log,
	})
	if err != nil {
		if errors.Is(err, rtp.ErrNoPorts) {
			s.count("refused_no_ports")
			return nil, nil, s.unavailable()
		}
		return nil, nil, err
	}
	c.sess = sess
	if c.sdp, err = sdp.New(s.cfg.SDP, sdp.Local{Addr: sess.LocalRTP()}); err != nil {
		_ = sess.Close()
		return nil, nil, err
	}
	var local []byte
	if inv.Offer == nil {
		local = c.sdp.Offer()
	} else {
		answer, n, err := c.sdp.Answer(inv.Offer)
		if err != nil {
			_ = sess.Close()
			s.count("refused_sdp")
			return nil, nil, refuseSDP(c.sdp, err)
		}
		if err := c.startMedia(n); err != nil {
			_ = sess.Close()
			return nil, nil, err
		}
		local = answer
	}
	s.mu.Lock()
	s.calls[c.id] = c
	s.mu.Unlock()
	c.watch()
	return (*media)(c), local, nil
}

// unavailable is the 503 of a call we cannot take now.
func (s *Server) unavailable() error {
	return &signal.Refusal{Code: 503, RetryAfter: int(s.cfg.RetryAfter / time.Second)}
}

// refuseSDP answers an offer we cannot take: 488 (or 400, 413) with a
// Warning that says why, naming the codecs we accept (RFC 3261 20.43).
func refuseSDP(sd *sdp.Session, err error) error {
	r := &signal.Refusal{Code: sdp.StatusCode(err)}
	if w := sd.Warning(err); w != "" {
		r.Headers = append(r.Headers, sipmsg.NewHeader("Warning", w))
	}
	return r
}

// Snapshot is the transport's figures for Prometheus, read at each
// scrape: label values are methods, codes, causes and results, never a
// number or an address.
type Snapshot struct {
	// Responses counts our responses by method and code.
	Responses map[signal.MethodCode]uint64
	// Drops counts what got no answer, by cause: the trunk policy's
	// (not_allowed, rate_limited, blocked, scanner, oversize) and the
	// signalling's (invalid, udp-oversize...).
	Drops map[string]uint64
	// RTP counts inbound packets by result (accepted, dropped_<cause>,
	// cn, events) and sent ones (sent).
	RTP map[string]uint64
	// DTMF counts key presses by source (rfc4733, sip_info) and those
	// no stage took (undelivered).
	DTMF map[string]uint64
	// Panics counts recovered panics of the signalling.
	Panics uint64
	// Calls is the number of live calls.
	Calls int
}

// Snapshot reads the figures.
func (s *Server) Snapshot() Snapshot {
	sig := s.sig.Stats()
	out := Snapshot{Responses: sig.Responses, Drops: map[string]uint64{}, RTP: map[string]uint64{}, DTMF: map[string]uint64{}, Panics: sig.Panics}
	for k, v := range sig.Drops {
		if k == "filter" {
			continue // counted by cause below
		}
		out.Drops[k] += v
	}
	for k, v := range s.policy.Stats() {
		if cause, ok := strings.CutPrefix(k, "drop_"); ok {
			out.Drops[cause] += v
		}
	}
	s.mu.Lock()
	calls := make([]*Call, 0, len(s.calls))
	for _, c := range s.calls {
		calls = append(calls, c)
	}
	maps.Copy(out.RTP, s.ended.rtp)
	maps.Copy(out.DTMF, s.ended.dtmf)
	s.mu.Unlock()
	out.Calls = len(calls)
	for _, c := range calls {
		for k, v := range c.rtpStats() {
			out.RTP[k] += v
		}
		for k, v := range c.dtmfStats() {
			out.DTMF[k] += v
		}
	}
	return out
}

// Stats flattens the figures for /stats, with the trunk policy's and the
// server's own counters.
func (s *Server) Stats() map[string]uint64 {
	snap := s.Snapshot()
	out := map[string]uint64{"calls_live": uint64(snap.Calls), "panics": snap.Panics, "bridges_live": uint64(s.bridges.len())}
	for k, v := range snap.Responses {
		out["responses_"+k.Method+"_"+strconv.Itoa(k.Code)] = v
	}
	for k, v := range snap.Drops {
		out["drops_"+k] = v
	}
	for k, v := range snap.RTP {
		out["rtp_"+k] = v
	}
	for k, v := range snap.DTMF {
		out["dtmf_"+k] = v
	}
	for k, v := range s.policy.Stats() {
		out["trunk_"+k] = v
	}
	s.mu.Lock()
	for k, v := range s.counts {
		out[k] = v
	}
	s.mu.Unlock()
	s.registrationStats(out)
	return out
}
