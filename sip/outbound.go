package sip

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/sip/rtp"
	"github.com/brisvox/brisvox/sip/sdp"
	"github.com/brisvox/brisvox/sip/signal"
)

// Dial places an outbound call through req's trunk and returns it once
// the callee answered: the 200 taken, the ACK sent, the RTP session
// started with the answer's parameters. The call holds a slot of the
// server's admission (Config.Admit) and one of its trunk's limits from
// before the INVITE until Close; the caller owns it (hands it to the
// serve layer, or reads and writes frames) and must Close it. It is not
// given to Config.OnCall.
//
// Errors: a refusal of Config.Admit as it came (a *conn.Refusal),
// ErrUnknownTrunk and ErrInvalidDial (nothing sent), ErrDialLimited
// (the trunk's max_calls or calls_per_second), an error wrapping
// rtp.ErrNoPorts, and the signalling's: a *signal.DialError (busy,
// no_answer, declined, rejected, unavailable, failed, auth_failed,
// transport, cancelled, with the SIP code) or an error wrapping
// signal.ErrBadAnswer (the 200's SDP was refused: ACK and BYE sent).
// No error names the number dialled.
func (s *Server) Dial(ctx context.Context, req DialRequest) (*Call, error) {
	adm, err := s.cfg.Admit()
	if err != nil {
		s.count("outbound_refused")
		return nil, err
	}
	c, err := s.dial(ctx, req, adm)
	if err != nil {
		adm.Release()
		return nil, err
	}
	return c, nil
}

// dialLeg places a second leg (a bridged transfer's): as Dial, but it
// takes no slot of the server's admission (the leg belongs to a call
// that has one).
func (s *Server) dialLeg(ctx context.Context, req DialRequest) (*Call, error) {
	return s.dial(ctx, req, noSlot{})
}

// noSlot is the admission of a leg that needs none.
type noSlot struct{}

func (noSlot) Release() {}

// dial is Dial after the server's admission.
func (s *Server) dial(ctx context.Context, req DialRequest, adm conn.Admission) (_ *Call, err error) {
	p, release, err := s.admitDial(req, time.Now())
	if err != nil {
		return nil, err
	}
	c := &Call{
		id: newCallID(), srv: s, source: p.cfg.Address, proto: p.cfg.Transport, adm: adm,
		outbound: true, trunkName: p.trunk, trunkCfg: p.cfg, release: release,
		earlyMedia: p.earlyMedia, caller: uriUser(p.from), callee: req.To, stop: make(chan struct{}),
	}
	defer func() {
		if err != nil {
			release()
		}
	}()
	if ctx.Err() != nil {
		// Gone before anything was sent: no INVITE (one without a
		// provisional answer could not be cancelled, RFC 3261 9.1).
		s.count("outbound_cancelled")
		return nil, &signal.DialError{Outcome: signal.DialCancelled}
	}
	sess, err := rtp.New(rtp.Config{
		Ports: s.ports, CallID: c.id, InputRate: s.cfg.Rate, OutputRate: s.cfg.Rate,
		SymmetricRTP: s.cfg.SymmetricRTP, MediaTimeout: s.cfg.MediaTimeout,
		OnEvent: c.onEvent, Logger: s.log,
	})
	if err != nil {
		if errors.Is(err, rtp.ErrNoPorts) {
			s.count("outbound_no_ports")
		}
		return nil, fmt.Errorf("sip: outbound call: %w", err)
	}
	c.sess = sess
	sdpCfg := s.cfg.SDP
	if len(req.codecs) > 0 {
		sdpCfg.Codecs = req.codecs
	}
	if c.sdp, err = sdp.New(sdpCfg, sdp.Local{Addr: sess.LocalRTP()}); err != nil {
		_ = sess.Close()
		return nil, err
	}
	o := signal.Outbound{
		ID: c.id, Target: p.target, From: p.from, Transport: p.cfg.Transport,
		Proxy: p.cfg.OutboundProxy, Routes: p.cfg.Routes, RingTimeout: p.ringTimeout,
		Offer: c.sdp.Offer(), Progress: c.progress, Answered: c.answered,
	}
	if p.cfg.AuthUser != "" {
		o.Auth = &signal.Credentials{User: p.cfg.AuthUser, Password: p.cfg.AuthPassword}
	}
	dlg, err := s.sig.Dial(ctx, o)
	if err != nil {
		// Answered may have run (a 200 we then could not keep): the
		// call was listed and its media started.
		_ = sess.Close()
		s.forget(c)
		s.count("outbound_" + outcomeName(err))
		return nil, err
	}
	s.count("outbound_answered")
	c.mu.Lock()
	c.dialog = dlg
	c.mu.Unlock()
	c.watch()
	return c, nil
}

// outcomeName is a failed dial's counter suffix.
func outcomeName(err error) string {
	var de *signal.DialError
	switch {
	case errors.As(err, &de):
		return string(de.Outcome)
	case errors.Is(err, signal.ErrBadAnswer):
		return string(signal.DialBadAnswer)
	}
	return "failed"
}

// newCallID is an outbound call's id, the form of the signalling's own.
func newCallID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "sip-" + hex.EncodeToString(b[:])
}

// progress takes a 18x (Dial's goroutine). With early media on, its SDP
// starts the media at once, so what the far end plays before the answer
// (a ringback, an announcement) reaches the call's input; off, it is
// counted and the media waits for the 200.
func (c *Call) progress(_ int, body []byte) {
	if body == nil {
		return
	}
	if !c.earlyMedia {
		c.srv.count("early_media_ignored")
		return
	}
	n, err := c.sdp.PreviewAnswer(body)
	if err != nil {
		c.srv.count("early_media_refused")
		c.srv.log.Debug().Err(err).Str("call_id", c.id).Msg("early media not usable")
		return
	}
	if err := c.startMedia(n); err != nil {
		c.srv.count("early_media_refused")
		return
	}
	c.srv.count("early_media")
}

// answered takes the 200's SDP (Dial's goroutine): the media starts (or
// moves to the final answer's parameters after early media) and the
// call is listed. An error has the signalling ACK and BYE the call.
func (c *Call) answered(answer []byte) (signal.Media, error) {
	if answer == nil {
		return nil, fmt.Errorf("%w: the 200 has no SDP answer", sdp.ErrNoOffer)
	}
	n, err := c.sdp.AcceptAnswer(answer)
	if err != nil {
		return nil, err
	}
	if err := c.startMedia(n); err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.handed = true // Dial's caller owns it: an end closes the media only
	c.mu.Unlock()
	s := c.srv
	s.mu.Lock()
	s.calls[c.id] = c
	s.mu.Unlock()
	return (*media)(c), nil
}
