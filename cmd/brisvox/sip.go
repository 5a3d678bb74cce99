package main

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strconv"

	"github.com/brisvox/brisvox/cmd/internal/agentfile"
	"github.com/brisvox/brisvox/cmd/internal/serve"
	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/sip"
	"github.com/brisvox/brisvox/sip/register"
	"github.com/brisvox/brisvox/sip/rtp"
	"github.com/brisvox/brisvox/sip/sdp"
	"github.com/brisvox/brisvox/sip/signal"
	"github.com/brisvox/brisvox/sip/trunk"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// sipConfig maps [transports.sip] onto the SIP transport's config. The
// digest password is read from the variable the file names (check made
// sure it is set).
func sipConfig(t agentfile.SIP, log zerolog.Logger) (sip.Config, error) {
	cfg := sip.Config{
		Signal: signal.Config{
			CertFile: t.TLSCert.V, KeyFile: t.TLSKey.V, PublicHost: t.PublicAddress.V,
			Ringing: t.Ringing.V, SessionExpires: t.SessionExpires.V, MinSE: t.MinSE.V,
		},
		Trunk: trunk.Config{
			Rate: t.RateLimit.V, Burst: t.Burst.V, BlockFor: t.BlockFor.V,
			MaxDialogsPerSource: t.MaxDialogsPerSource.V, Realm: t.AuthRealm.V,
		},
		SDP:          sdp.Config{PtimeOut: t.Ptime.V},
		Ports:        rtp.PortsConfig{Min: t.RTPPortMin.V, Max: t.RTPPortMax.V},
		Rate:         t.Rate.V,
		SymmetricRTP: t.SymmetricRTP.V,
		MediaTimeout: t.MediaTimeout.V,
		Log:          log,
	}
	for _, n := range []string{"udp", "tcp", "tls"} {
		if a, ok := t.Listens()[n]; ok {
			cfg.Signal.Listen = append(cfg.Signal.Listen, signal.Listen{Network: n, Addr: a})
		}
	}
	for _, c := range t.Codecs {
		codec, err := sdp.ParseCodec(c.V)
		if err != nil {
			return sip.Config{}, err
		}
		cfg.SDP.Codecs = append(cfg.SDP.Codecs, codec)
	}
	if t.PublicAddress.V != "" {
		cfg.SDP.PublicAddr = netip.MustParseAddr(t.PublicAddress.V) // checked by agentfile
	}
	// The RTP sockets bind the configured address, else the host of the
	// first listen address (a socket on 0.0.0.0 needs public_address).
	rtpAddr := t.RTPAddress.V
	if rtpAddr == "" && len(cfg.Signal.Listen) > 0 {
		rtpAddr = netip.MustParseAddrPort(cfg.Signal.Listen[0].Addr).Addr().String()
	}
	if rtpAddr != "" {
		cfg.Ports.Addr = netip.MustParseAddr(rtpAddr)
	}
	for _, a := range t.Allow {
		cfg.Trunk.Allow = append(cfg.Trunk.Allow, netip.MustParsePrefix(a.V))
	}
	for _, s := range t.ScannerUserAgents {
		cfg.Trunk.Scanners = append(cfg.Trunk.Scanners, s.V)
	}
	trunks, err := sipTrunks(t, os.LookupEnv)
	if err != nil {
		return sip.Config{}, err
	}
	cfg.Trunks = trunks
	cfg.TransferTrunk = t.TransferTrunk.V
	if t.AuthUser.V != "" {
		pass, ok := os.LookupEnv(t.AuthPasswordEnv.V)
		if !ok || pass == "" {
			return sip.Config{}, fmt.Errorf("transports.sip.auth_password_env: %s is not set", t.AuthPasswordEnv.V)
		}
		cfg.Trunk.Users = map[string]string{t.AuthUser.V: pass}
	}
	return cfg, nil
}

// mountSIP opens the SIP transport: answered calls go to srv.
func mountSIP(srv *serve.Server, t agentfile.SIP, log zerolog.Logger) (*sip.Server, error) {
	cfg, err := sipConfig(t, log)
	if err != nil {
		return nil, err
	}
	cfg.Admit = srv.Admit
	cfg.OnCall = func(c *sip.Call) { srv.Start(c) }
	// A draining node answers OPTIONS 503: a balancer stops sending it
	// calls while its live calls finish.
	cfg.Health = srv.Health
	s, err := sip.New(cfg)
	if err != nil {
		return nil, err
	}
	if err := srv.Register(sipCollector{s}); err != nil {
		s.Close()
		return nil, err
	}
	if err := s.Start(); err != nil {
		s.Close()
		return nil, err
	}
	srv.Attach("sip", s.Stats, s.Close)
	if len(s.Registrations()) > 0 {
		srv.AddReadiness("sip_registrations", func() any { return s.Registrations() })
	}
	return s, nil
}

// sipCollector exports the SIP transport's figures at each scrape.
type sipCollector struct{ s *sip.Server }

var (
	sipRequestsDesc = prometheus.NewDesc("brisvox_sip_requests_total",
		"SIP requests answered, by method and the code of our final (or only) response.", []string{"method", "code"}, nil)
	sipDropsDesc = prometheus.NewDesc("brisvox_sip_drops_total",
		"SIP messages dropped without an answer, by cause (not_allowed, rate_limited, blocked, scanner, oversize, invalid...).", []string{"cause"}, nil)
	sipRTPDesc = prometheus.NewDesc("brisvox_sip_rtp_packets_total",
		"RTP packets of SIP calls by result: accepted, sent, cn, events, dropped_<cause>, late, duplicate, lost.", []string{"result"}, nil)
	sipDTMFDesc = prometheus.NewDesc("brisvox_sip_dtmf_digits_total",
		"Key presses of SIP callers, by source (rfc4733, sip_info) and undelivered.", []string{"source"}, nil)
	sipPanicsDesc = prometheus.NewDesc("brisvox_sip_panics_total", "Panics recovered while handling a SIP request.", nil, nil)
	sipCallsDesc  = prometheus.NewDesc("brisvox_sip_calls", "Live SIP calls.", nil, nil)
	sipRegDesc    = prometheus.NewDesc("brisvox_sip_registrations",
		"Registrations with the trunks that want one: 1 for the state each is in (idle, registering, registered, retrying, failed, unregistered), 0 for the others.", []string{"trunk", "state"}, nil)
)

func (sipCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{sipRequestsDesc, sipDropsDesc, sipRTPDesc, sipDTMFDesc, sipPanicsDesc, sipCallsDesc, sipRegDesc} {
		ch <- d
	}
}

func (c sipCollector) Collect(ch chan<- prometheus.Metric) {
	snap := c.s.Snapshot()
	for k, v := range snap.Responses {
		ch <- prometheus.MustNewConstMetric(sipRequestsDesc, prometheus.CounterValue, float64(v), k.Method, strconv.Itoa(k.Code))
	}
	for k, v := range snap.Drops {
		ch <- prometheus.MustNewConstMetric(sipDropsDesc, prometheus.CounterValue, float64(v), k)
	}
	for k, v := range snap.RTP {
		ch <- prometheus.MustNewConstMetric(sipRTPDesc, prometheus.CounterValue, float64(v), k)
	}
	for k, v := range snap.DTMF {
		ch <- prometheus.MustNewConstMetric(sipDTMFDesc, prometheus.CounterValue, float64(v), k)
	}
	ch <- prometheus.MustNewConstMetric(sipPanicsDesc, prometheus.CounterValue, float64(snap.Panics))
	ch <- prometheus.MustNewConstMetric(sipCallsDesc, prometheus.GaugeValue, float64(snap.Calls))
	for _, r := range c.s.Registrations() {
		for _, st := range register.States {
			v := 0.0
			if r.State == st {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(sipRegDesc, prometheus.GaugeValue, v, r.Trunk, string(st))
		}
	}
}

// sipDialer places the operator API's outbound calls through the SIP
// transport's trunks (serve.Dialer): the answered call is started on the
// server with its request.
type sipDialer struct {
	srv *serve.Server
	sip *sip.Server
}

var _ serve.Dialer = sipDialer{}

func (d sipDialer) Trunks() []string { return d.sip.Trunks() }

func (d sipDialer) Dial(ctx context.Context, req serve.DialRequest) (messages.CallID, error) {
	c, err := d.sip.Dial(ctx, sip.DialRequest{
		Trunk: req.Trunk, To: req.To, From: req.From, RingTimeout: req.RingTimeout,
		// The trunk's early_media setting decides.
		EarlyMedia: true,
	})
	if err != nil {
		return "", dialError(err)
	}
	if err := d.srv.StartDialed(c, req); err != nil {
		return "", err
	}
	return messages.CallID(c.ID()), nil
}

// dialError maps the SIP transport's dial errors onto the operator API's
// outcomes.
func dialError(err error) error {
	var (
		de  *signal.DialError
		ref *conn.Refusal
	)
	switch {
	case errors.As(err, &de):
		return &serve.DialError{Outcome: serve.DialOutcome(de.Outcome), Code: de.Code}
	case errors.As(err, &ref):
		return &serve.DialError{Outcome: serve.DialRefused}
	case errors.Is(err, sip.ErrDialLimited):
		return &serve.DialError{Outcome: serve.DialLimited}
	case errors.Is(err, sip.ErrInvalidDial), errors.Is(err, sip.ErrUnknownTrunk):
		return fmt.Errorf("%w: %w", serve.ErrBadDial, err)
	case errors.Is(err, signal.ErrBadAnswer):
		// Answered with an SDP we cannot take: ACK and BYE were sent.
		return &serve.DialError{Outcome: serve.DialFailed, Code: 488}
	}
	return &serve.DialError{Outcome: serve.DialFailed}
}
