package signal

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/emiago/sipgo/sip"
	"github.com/icholy/digest"
)

// MaxAuthAttempts bounds the authenticated INVITEs of one Dial: a trunk
// that challenges them all ends the dial with DialAuthFailed.
const MaxAuthAttempts = 2

// Credentials answer a trunk's digest challenge (401 WWW-Authenticate or
// 407 Proxy-Authenticate).
type Credentials struct{ User, Password string }

// Outbound is one call we place (UAC).
type Outbound struct {
	// ID is the dialog's id (Dialog.ID: "sip-" and 16 hex digits), so
	// the caller's media and logs name the call as the signalling does;
	// "" makes one. It must be unique in the process.
	ID string
	// Target is the Request-URI ("sip:+15551234@trunk.example:5060;transport=tcp").
	Target string
	// From is our From URI (the caller id).
	From string
	// Display is the From display name, "" none.
	Display string
	// Transport is "UDP", "TCP" or "TLS"; "" takes Target's transport
	// parameter, else UDP.
	Transport string
	// Proxy is the outbound proxy URI ("" none): requests go there, with
	// Route <proxy;lr> first.
	Proxy string
	// Routes is a pre-loaded Route set (after Proxy).
	Routes []string
	// Auth answers a challenge; nil: a challenge fails the dial
	// (DialAuthFailed).
	Auth *Credentials
	// RingTimeout: no final answer by then, CANCEL and DialNoAnswer (code
	// 0). Zero: no bound but ctx.
	RingTimeout time.Duration
	// Offer is our SDP offer.
	Offer []byte
	// Progress is called for each 18x with the code and its SDP (nil when
	// none), from Dial's goroutine. May be nil.
	Progress func(code int, sdp []byte)
	// Answered takes the 200's SDP and returns the call's Media. An error:
	// ACK, then BYE with a Reason header, and Dial returns an error
	// wrapping ErrBadAnswer.
	Answered func(answer []byte) (Media, error)
}

// DialOutcome is the typed reason a dial ended, also a metric label.
type DialOutcome string

// The outcomes of a dial.
const (
	DialAnswered    DialOutcome = "answered"    // 2xx (counted in Stats only)
	DialBusy        DialOutcome = "busy"        // 486, 600
	DialNoAnswer    DialOutcome = "no_answer"   // 408, 480, ring timeout (code 0)
	DialDeclined    DialOutcome = "declined"    // 603
	DialRejected    DialOutcome = "rejected"    // other 4xx; the callee's BYE before answering (code 0)
	DialUnavailable DialOutcome = "unavailable" // 5xx
	DialFailed      DialOutcome = "failed"      // other 6xx, 3xx
	DialAuthFailed  DialOutcome = "auth_failed" // challenged without Credentials or past MaxAuthAttempts
	DialTransport   DialOutcome = "transport"   // not sent / no response (Timer B)
	DialCancelled   DialOutcome = "cancelled"   // ctx ended (CANCEL sent)
	DialBadAnswer   DialOutcome = "bad_answer"  // the 200's SDP refused (counted in Stats only)
	dialInvalid     DialOutcome = "invalid"     // the Outbound refused before sending
)

// DialError is a dial that ended without a call.
type DialError struct {
	Outcome DialOutcome
	// Code is the final status code, 0 when the end was ours.
	Code int
}

// Error is in fixed words: never a URI or a number of the call.
func (e *DialError) Error() string {
	if e.Code > 0 {
		return "signal: dial " + string(e.Outcome) + " (" + strconv.Itoa(e.Code) + ")"
	}
	return "signal: dial " + string(e.Outcome)
}

// Unwrap is ErrDialFailed.
func (e *DialError) Unwrap() error { return ErrDialFailed }

// outcomeOf maps a final non-2xx status to its outcome.
func outcomeOf(code int) DialOutcome {
	switch {
	case code == 486 || code == 600:
		return DialBusy
	case code == 408 || code == 480:
		return DialNoAnswer
	case code == 603:
		return DialDeclined
	case code == 401 || code == 407:
		return DialAuthFailed
	case code >= 400 && code < 500:
		return DialRejected
	case code >= 500 && code < 600:
		return DialUnavailable
	}
	return DialFailed
}

// inviter is the UAC's seam: the INVITE's client transaction (sipgo in
// production, a script in tests). onRetransmit takes the 2xx that come
// again while the transaction lives.
type inviter interface {
	invite(ctx context.Context, req *sip.Request, onRetransmit func(*sip.Response)) (inviteTxn, error)
}

// inviteTxn is what Dial needs of sipgo's client transaction.
type inviteTxn interface {
	Responses() <-chan *sip.Response
	Done() <-chan struct{}
	Err() error
	Terminate()
}

var _ inviteTxn = (sip.ClientTransaction)(nil)

func (w *sipgoWire) invite(ctx context.Context, req *sip.Request, onRetransmit func(*sip.Response)) (inviteTxn, error) {
	tx, err := w.client.TransactionRequest(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("%w: not sent", ErrTransport)
	}
	tx.OnRetransmission(onRetransmit)
	return tx, nil
}

// hasCtl says whether s holds CR, LF or NUL (header injection).
func hasCtl(ss ...string) bool {
	for _, s := range ss {
		if strings.ContainsAny(s, "\r\n\x00") {
			return true
		}
	}
	return false
}

// dialing is one dial in flight or its answered dialog: a 2xx of its
// INVITE with another To tag (a fork) is acknowledged and ended.
type dialing struct {
	inv   *sip.Request
	d     *Dialog // the dialog of the first 2xx, nil before
	tmpl  *Dialog // our side of the dialog (tags, Via, Contact)
	ended bool
	early []dialogKey // its early dialogs in Server.earlyOut
}

// Dial places a call and returns its confirmed dialog (200 received, ACK
// sent, Media.Confirmed called) or an error: *DialError for a final
// non-2xx answer or a local end (ring timeout, ctx, transport), an error
// wrapping ErrBadAnswer when Answered refused the 200's SDP, ErrInvalidDial
// for an Outbound we cannot send.
func (s *Server) Dial(ctx context.Context, o Outbound) (*Dialog, error) {
	req, d, err := s.buildInvite(o)
	if err != nil {
		s.stats.dial(string(dialInvalid))
		return nil, err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, ErrServerClosed
	}
	s.dialing.Add(1)
	rec := &dialing{inv: req, tmpl: d}
	s.outbound[d.callID] = rec
	s.mu.Unlock()
	defer s.dialing.Done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.ctx, cancel)
	defer stop()

	dlg, outcome, code, err := s.runDial(ctx, o, req, d, rec)
	s.dropEarlyLegs(rec)
	s.stats.dial(string(outcome))
	if dlg == nil {
		s.mu.Lock()
		rec.ended = true
		s.mu.Unlock()
		// The record stays for 64*T1: a late 2xx (a fork, one that raced
		// the CANCEL) still gets its ACK and BYE.
		s.tasks.Go(func() {
			t := time.NewTimer(64 * s.cfg.T1)
			defer t.Stop()
			select {
			case <-t.C:
			case <-s.byeCtx.Done():
			}
			s.mu.Lock()
			if s.outbound[d.callID] == rec {
				delete(s.outbound, d.callID)
			}
			s.mu.Unlock()
		})
	}
	s.log.Info().Str("call", d.id).Str("outcome", string(outcome)).Int("code", code).Msg("dial ended")
	return dlg, err
}

// buildInvite checks o and builds the INVITE and our side of the dialog.
func (s *Server) buildInvite(o Outbound) (*sip.Request, *Dialog, error) {
	if hasCtl(append([]string{o.ID, o.Target, o.From, o.Display, o.Transport, o.Proxy}, o.Routes...)...) {
		return nil, nil, fmt.Errorf("%w: CR, LF or NUL", ErrInvalidDial)
	}
	if len(o.Offer) == 0 || o.Answered == nil {
		return nil, nil, fmt.Errorf("%w: no offer or no Answered", ErrInvalidDial)
	}
	var target, from sip.Uri
	if err := sip.ParseUri(o.Target, &target); err != nil || target.Host == "" {
		return nil, nil, fmt.Errorf("%w: target", ErrInvalidDial)
	}
	if err := sip.ParseUri(o.From, &from); err != nil || from.Host == "" {
		return nil, nil, fmt.Errorf("%w: from", ErrInvalidDial)
	}
	transport := strings.ToUpper(o.Transport)
	if transport == "" {
		if t, ok := target.UriParams.Get("transport"); ok && target.UriParams != nil {
			transport = strings.ToUpper(t)
		} else {
			transport = "UDP"
		}
	}
	switch transport {
	case "UDP", "TCP", "TLS":
	default:
		return nil, nil, fmt.Errorf("%w: transport", ErrInvalidDial)
	}
	var routes []sip.Uri
	if o.Proxy != "" {
		var p sip.Uri
		if err := sip.ParseUri(o.Proxy, &p); err != nil || p.Host == "" {
			return nil, nil, fmt.Errorf("%w: proxy", ErrInvalidDial)
		}
		if p.UriParams == nil {
			p.UriParams = sip.NewParams()
		}
		if !p.UriParams.Has("lr") {
			p.UriParams.Add("lr", "")
		}
		routes = append(routes, p)
	}
	for _, r := range o.Routes {
		var u sip.Uri
		if err := sip.ParseUri(strings.Trim(r, "<>"), &u); err != nil || u.Host == "" {
			return nil, nil, fmt.Errorf("%w: route", ErrInvalidDial)
		}
		routes = append(routes, u)
	}
	host, port := s.listenerFor(transport)
	if port == 0 {
		return nil, nil, fmt.Errorf("%w: no listener of the transport", ErrInvalidDial)
	}
	tag := sip.GenerateTagN(16)
	var b [12]byte
	_, _ = rand.Read(b[:])
	callID := hex.EncodeToString(b[:]) + "@" + host
	local := &sip.ToHeader{DisplayName: o.Display, Address: from, Params: sip.NewParams()}
	local.Params.Add("tag", tag)
	to := &sip.ToHeader{Address: sip.Uri{Scheme: target.Scheme, User: target.User, Host: target.Host, Port: target.Port}, Params: sip.NewParams()}
	contact := &sip.ContactHeader{Address: sip.Uri{Scheme: "sip", Host: host, Port: port}}
	if transport != "UDP" {
		contact.Address.UriParams = sip.NewParams()
		contact.Address.UriParams.Add("transport", strings.ToLower(transport))
	}
	d := &Dialog{
		env:       s.env,
		id:        cmp.Or(o.ID, newID()),
		callID:    callID,
		localTag:  tag,
		local:     local,
		remote:    &sip.FromHeader{Address: to.Address, Params: sip.NewParams()},
		contact:   contact,
		transport: transport,
		reliable:  sip.IsReliable(transport),
		uac:       true,
		viaHost:   host,
		viaPort:   port,
		laddr:     s.boundFor(transport),
		inbox:     make(chan func(), s.cfg.Inbox),
		done:      make(chan struct{}),
		state:     StateEarly,
	}
	d.remoteTarget = target
	d.routes = routes
	d.localCSeq = 1

	req := sip.NewRequest(sip.INVITE, target)
	req.AppendHeader(&sip.ViaHeader{ProtocolName: "SIP", ProtocolVersion: "2.0", Transport: transport,
		Host: host, Port: port, Params: branchParams()})
	for _, r := range routes {
		req.AppendHeader(&sip.RouteHeader{Address: *r.Clone()})
	}
	mf := sip.MaxForwardsHeader(70)
	req.AppendHeader(&mf)
	fromH := local.AsFrom()
	req.AppendHeader(&fromH)
	req.AppendHeader(to)
	cid := sip.CallIDHeader(callID)
	req.AppendHeader(&cid)
	req.AppendHeader(&sip.CSeqHeader{SeqNo: 1, MethodName: sip.INVITE})
	req.AppendHeader(contact)
	req.AppendHeader(capabilityHeaders()[0])
	req.AppendHeader(sip.NewHeader("Supported", "timer"))
	if s.cfg.SessionExpires > 0 {
		req.AppendHeader(sip.NewHeader("Session-Expires", strconv.Itoa(int(s.cfg.SessionExpires/time.Second))))
		req.AppendHeader(sip.NewHeader("Min-SE", strconv.Itoa(int(s.cfg.MinSE/time.Second))))
	}
	req.AppendHeader(sip.NewHeader("User-Agent", s.cfg.UserAgent))
	req.AppendHeader(sip.NewHeader("Content-Type", "application/sdp"))
	req.SetBody(o.Offer)
	req.SetTransport(transport)
	if !d.reliable && d.laddr.IsValid() {
		req.Laddr = sip.Addr{IP: d.laddr.Addr().AsSlice(), Port: int(d.laddr.Port())}
	}
	return req, d, nil
}

// runDial sends the INVITE (again for each challenge) and waits for its
// final answer.
func (s *Server) runDial(ctx context.Context, o Outbound, req *sip.Request, d *Dialog, rec *dialing) (*Dialog, DialOutcome, int, error) {
	var ring <-chan time.Time
	if o.RingTimeout > 0 {
		t := time.NewTimer(o.RingTimeout)
		defer t.Stop()
		ring = t.C
	}
	auths := 0
	// The callee's BYE in an early dialog ends the dial.
	earlyBye := make(chan struct{}, 1)
	for {
		tx, err := s.inviter.invite(context.WithoutCancel(ctx), req, s.onStrayResponse)
		if err != nil {
			return nil, DialTransport, 0, &DialError{Outcome: DialTransport}
		}
		var (
			provisional bool
			cancelled   DialOutcome // set once we want to CANCEL
			cancelSent  bool
			giveUp      <-chan time.Time
		)
		sendCancel := func() {
			if cancelSent || !provisional {
				return // RFC 3261 9.1: not before a provisional response
			}
			cancelSent = true
			c := cancelOf(req)
			s.tasks.Go(func() {
				cctx, stop := context.WithTimeout(s.byeCtx, 64*s.cfg.T1)
				defer stop()
				if _, err := s.env.wire.request(cctx, c); err != nil {
					s.log.Debug().Str("call", d.id).Str("method", "CANCEL").Err(ErrTransport).Msg("CANCEL got no final response")
				}
			})
		}
		wantCancel := func(out DialOutcome) {
			if cancelled == "" {
				cancelled = out
				giveUp = time.After(64 * s.cfg.T1)
			}
			sendCancel()
		}
		done := ctx.Done()
	wait:
		for {
			select {
			case res := <-tx.Responses():
				code := res.StatusCode
				s.stats.inResponse(code)
				switch {
				case code < 200:
					if code == 100 {
						continue
					}
					provisional = true
					s.addEarlyLeg(rec, res, earlyBye)
					if cancelled != "" {
						sendCancel()
					}
					if cancelled == "" && o.Progress != nil {
						var sdp []byte
						if b := res.Body(); len(b) > 0 {
							sdp = b
						}
						o.Progress(code, sdp)
					}
				case code < 300:
					tx.Terminate()
					if cancelled != "" {
						// The 200 raced our CANCEL: the call exists, end it.
						s.ackAndBye(req, res, nil)
						return nil, cancelled, 0, &DialError{Outcome: cancelled}
					}
					return s.answered(o, req, res, d, rec)
				default:
					tx.Terminate()
					s.dropEarlyLegs(rec)
					if cancelled != "" {
						return nil, cancelled, 0, &DialError{Outcome: cancelled}
					}
					if code == 401 || code == 407 {
						if o.Auth == nil || auths >= MaxAuthAttempts {
							return nil, DialAuthFailed, code, &DialError{Outcome: DialAuthFailed, Code: code}
						}
						auths++
						if err := authorize(req, res, *o.Auth); err != nil {
							return nil, DialAuthFailed, code, &DialError{Outcome: DialAuthFailed, Code: code}
						}
						d.localCSeq = req.CSeq().SeqNo
						break wait
					}
					out := outcomeOf(code)
					return nil, out, code, &DialError{Outcome: out, Code: code}
				}
			case <-tx.Done():
				if cancelled != "" {
					return nil, cancelled, 0, &DialError{Outcome: cancelled}
				}
				return nil, DialTransport, 0, &DialError{Outcome: DialTransport}
			case <-ring:
				ring = nil
				wantCancel(DialNoAnswer)
			case <-earlyBye:
				wantCancel(DialRejected)
			case <-done:
				done = nil
				wantCancel(DialCancelled)
			case <-giveUp:
				tx.Terminate()
				return nil, cancelled, 0, &DialError{Outcome: cancelled}
			}
		}
	}
}

// authorize answers the challenge of res on req: the credentials header,
// a new branch and the next CSeq (RFC 3261 22.2).
func authorize(req *sip.Request, res *sip.Response, c Credentials) error {
	chName, authName := "WWW-Authenticate", "Authorization"
	if res.StatusCode == 407 {
		chName, authName = "Proxy-Authenticate", "Proxy-Authorization"
	}
	h := res.GetHeader(chName)
	if h == nil {
		return fmt.Errorf("%w: no challenge", ErrBadHeader)
	}
	chal, err := digest.ParseChallenge(h.Value())
	if err != nil {
		return fmt.Errorf("%w: challenge", ErrBadHeader)
	}
	chal.Algorithm = strings.ToUpper(chal.Algorithm)
	cred, err := digest.Digest(chal, digest.Options{Method: string(req.Method), URI: req.Recipient.Addr(),
		Username: c.User, Password: c.Password})
	if err != nil {
		return fmt.Errorf("%w: challenge", ErrBadHeader)
	}
	req.RemoveHeader(authName)
	req.AppendHeader(sip.NewHeader(authName, cred.String()))
	req.CSeq().SeqNo++
	if via := req.Via(); via != nil {
		via.Params.Add("branch", sip.GenerateBranch())
	}
	return nil
}

// cancelOf is the CANCEL of our INVITE (RFC 3261 9.1): its Request-URI,
// top Via, From, To, Call-ID, Route and CSeq number.
func cancelOf(inv *sip.Request) *sip.Request {
	c := sip.NewRequest(sip.CANCEL, *inv.Recipient.Clone())
	c.AppendHeader(sip.HeaderClone(inv.Via()))
	sip.CopyHeaders("Route", inv, c)
	mf := sip.MaxForwardsHeader(70)
	c.AppendHeader(&mf)
	c.AppendHeader(sip.HeaderClone(inv.From()))
	c.AppendHeader(sip.HeaderClone(inv.To()))
	c.AppendHeader(sip.HeaderClone(inv.CallID()))
	c.AppendHeader(&sip.CSeqHeader{SeqNo: inv.CSeq().SeqNo, MethodName: sip.CANCEL})
	c.SetTransport(inv.Transport())
	c.Laddr = inv.Laddr
	c.SetBody(nil)
	return c
}

// peerDialog is our side d with the peer's side taken from a 2xx.
func peerDialog(d *Dialog, res *sip.Response) {
	to := res.To()
	d.remoteTag, _ = to.Params.Get("tag")
	d.remote = &sip.FromHeader{DisplayName: to.DisplayName, Address: *to.Address.Clone(), Params: to.Params.Clone()}
	if c := res.Contact(); c != nil && c.Address.Host != "" && !c.Address.Wildcard {
		d.remoteTarget = *c.Address.Clone()
	}
	// RFC 3261 12.1.2: the route set is the 2xx's Record-Route reversed.
	var rs []sip.Uri
	hs := res.GetHeaders("Record-Route")
	for i := len(hs) - 1; i >= 0; i-- {
		if rr, ok := hs[i].(*sip.RecordRouteHeader); ok {
			rs = append(rs, *rr.Address.Clone())
		}
	}
	d.routes = rs
}

// ackOf is the ACK of a 2xx to inv for dialog d (RFC 3261 13.2.2.4).
func (d *Dialog) ackOf(inv *sip.Request, res *sip.Response) *sip.Request {
	ack := d.newAck(inv, res)
	ack.Recipient = *d.remoteTarget.Clone()
	return ack
}

// ackAndBye acknowledges a 2xx we do not keep (a fork, a 2xx that raced
// our CANCEL, a refused answer) and ends its dialog with a BYE.
func (s *Server) ackAndBye(inv *sip.Request, res *sip.Response, tmpl *Dialog) {
	_, d, err := s.buildInviteFrom(inv)
	if err != nil {
		return
	}
	if tmpl != nil {
		d.id, d.local, d.contact, d.routes = tmpl.id, tmpl.local, tmpl.contact, append([]sip.Uri(nil), tmpl.routes...)
	}
	peerDialog(d, res)
	d.localCSeq = inv.CSeq().SeqNo
	if err := s.env.wire.ack(d.ackOf(inv, res)); err != nil {
		s.log.Debug().Str("call", d.id).Str("method", "ACK").Err(ErrTransport).Msg("ACK not sent")
	}
	bye := d.newRequest(sip.BYE)
	bye.AppendHeader(sip.NewHeader("Reason", `SIP;cause=200;text="Call completed elsewhere"`))
	s.tasks.Go(func() {
		ctx, cancel := context.WithTimeout(s.byeCtx, 64*s.cfg.T1)
		defer cancel()
		_, _ = s.env.wire.request(ctx, bye)
	})
}

// buildInviteFrom is our side of the dialog of inv, for a 2xx that has no
// dial record.
func (s *Server) buildInviteFrom(inv *sip.Request) (*sip.Request, *Dialog, error) {
	via := inv.Via()
	if via == nil {
		return nil, nil, ErrInvalidDial
	}
	local := &sip.ToHeader{Address: inv.From().Address, Params: inv.From().Params.Clone()}
	tag, _ := local.Params.Get("tag")
	d := &Dialog{env: s.env, id: newID(), callID: inv.CallID().Value(), localTag: tag, local: local,
		transport: inv.Transport(), reliable: sip.IsReliable(inv.Transport()), uac: true,
		viaHost: via.Host, viaPort: via.Port, remoteTarget: *inv.Recipient.Clone()}
	if inv.Laddr.IP != nil {
		d.laddr = s.boundFor(inv.Transport())
	}
	return inv, d, nil
}

// answered takes the first 2xx: ACK, Media, the dialog's loop.
func (s *Server) answered(o Outbound, req *sip.Request, res *sip.Response, d *Dialog, rec *dialing) (*Dialog, DialOutcome, int, error) {
	peerDialog(d, res)
	d.localCSeq = req.CSeq().SeqNo
	ack := d.ackOf(req, res)
	var body []byte
	if b := res.Body(); len(b) > 0 {
		body = b
	}
	m, err := safeAnswered(o.Answered, body)
	if err != nil || m == nil {
		_ = s.env.wire.ack(ack)
		bye := d.newRequest(sip.BYE)
		bye.AppendHeader(sip.NewHeader("Reason", `SIP;cause=488;text="Answer not acceptable"`))
		s.tasks.Go(func() {
			ctx, cancel := context.WithTimeout(s.byeCtx, 64*s.cfg.T1)
			defer cancel()
			_, _ = s.env.wire.request(ctx, bye)
		})
		return nil, DialBadAnswer, res.StatusCode, fmt.Errorf("%w: the 200's answer", ErrBadAnswer)
	}
	d.media, d.localSDP = m, o.Offer
	d.peerUpdate = hasToken(res, "Allow", "", "UPDATE")
	d.peerTimer = hasToken(res, "Supported", "k", "timer")
	d.retransT, d.ackT, d.refreshT, d.expiryT, d.retryT = stoppedTimer(), stoppedTimer(), stoppedTimer(), stoppedTimer(), stoppedTimer()
	// RFC 4028 7.2: the 2xx's Session-Expires sets the session; its
	// refresher names the INVITE's roles (uac: us), and a UAS that named
	// none leaves the refreshes to us, who asked and support timer. No
	// Session-Expires: no session timer.
	se, ref := time.Duration(0), refresherNone
	if v, ok := header(res, "Session-Expires", "x"); ok {
		if secs, r, err := parseSessionExpires(v); err == nil {
			se, ref = time.Duration(secs)*time.Second, r
			if ref == refresherNone {
				ref = refresherUAC
			}
		}
	}
	d.lastAck = ack
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = s.env.wire.ack(ack)
		d.started = true
		d.state = StateConfirmed
		d.env.tasks.Go(d.run)
		d.post(func() { d.end(ErrServerClosed, true) })
		return nil, DialCancelled, 0, &DialError{Outcome: DialCancelled}
	}
	s.dialogs[d.key()] = d
	rec.d = d
	s.mu.Unlock()
	if err := s.env.wire.ack(ack); err != nil {
		s.log.Debug().Str("call", d.id).Str("method", "ACK").Err(ErrTransport).Msg("ACK not sent")
	}
	d.mu.Lock()
	d.state, d.started = StateConfirmed, true
	d.mu.Unlock()
	d.setSession(se, ref)
	confirmed := make(chan struct{})
	d.inbox <- func() { defer close(confirmed); d.media.Confirmed() }
	d.env.tasks.Go(d.run)
	select {
	case <-confirmed:
	case <-d.done:
	}
	return d, DialAnswered, res.StatusCode, nil
}

// safeAnswered calls Answered with a panic recovered (as a refusal).
func safeAnswered(f func([]byte) (Media, error), body []byte) (m Media, err error) {
	defer func() {
		if p := recover(); p != nil {
			m, err = nil, ErrPanic
		}
	}()
	return f(body)
}

// onForked2xx takes a 2xx of one of our dials that no dialog holds: a
// fork's (another To tag) or one that came after the dial ended. It is
// acknowledged and ended. False when the Call-ID is none of our dials.
func (s *Server) onForked2xx(res *sip.Response) bool {
	s.mu.Lock()
	rec := s.outbound[res.CallID().Value()]
	s.mu.Unlock()
	if rec == nil {
		return false
	}
	if tag, _ := res.From().Params.Get("tag"); tag != rec.tmpl.localTag || res.CSeq().SeqNo+uint32(MaxAuthAttempts) < rec.inv.CSeq().SeqNo {
		return false
	}
	s.ackAndBye(rec.inv, res, rec.tmpl)
	s.stats.drop("forked-2xx")
	return true
}

func (c *counters) dial(outcome string) {
	c.mu.Lock()
	c.dials[outcome]++
	c.mu.Unlock()
}

// inResponse counts a response to our INVITE (codes outside 100..699 as 0).
func (c *counters) inResponse(code int) {
	if code < 100 || code > 699 {
		code = 0
	}
	c.mu.Lock()
	c.dialRes[code]++
	c.mu.Unlock()
}
