package signal

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/emiago/sipgo/sip"
)

// inviteTx is what the INVITE handler needs of sipgo's server
// transaction (sip.ServerTransaction has it; tests fake it).
type inviteTx interface {
	serverTx
	OnCancel(f sip.FnTxCancel) bool
}

// handle is every request's entry, after the read filter and sipgo's
// parser: counted, checked, dispatched, with any panic recovered.
func (s *Server) handle(req *sip.Request, tx sip.ServerTransaction) {
	s.serveRequest(req, tx, tx)
}

// serveRequest is handle on our interfaces (itx may be nil for methods
// other than INVITE).
func (s *Server) serveRequest(req *sip.Request, tx serverTx, itx inviteTx) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.stats.drop("closed")
		if !req.IsAck() {
			s.respond(tx, req, 503, "", "", nil, retryAfter(5))
		}
		return
	}
	s.handlers.Add(1)
	s.mu.Unlock()
	defer s.handlers.Done()
	defer func() {
		if p := recover(); p != nil {
			s.stats.panicked()
			s.log.Error().Str("method", methodLabel(string(req.Method))).Err(ErrPanic).Msg("request handler panicked")
			if !req.IsAck() {
				s.respond(tx, req, 500, "", "", nil)
			}
		}
	}()
	s.stats.request(string(req.Method))
	if r := s.check(req, sip.IsReliable(req.Transport())); r != nil {
		if r.Code == 0 || req.IsAck() {
			return // counted by validate
		}
		s.respond(tx, req, r.Code, r.Reason, "", nil, r.headers()...)
		return
	}
	inDialog := req.To().Params.Has("tag")
	switch req.Method {
	case sip.ACK:
		// An ACK before our 2xx has nothing to acknowledge (and no loop
		// to queue on).
		if d := s.lookup(req); d != nil && d.isStarted() {
			d.post(func() { d.onAck(req) })
		}
	case sip.INVITE:
		if inDialog {
			s.inDialog(req, tx)
			return
		}
		s.onInvite(req, itx)
	case sip.OPTIONS:
		if inDialog {
			s.inDialog(req, tx)
			return
		}
		if r := s.health(); r != nil {
			s.respond(tx, req, r.Code, r.Reason, "", nil, r.headers()...)
			return
		}
		s.respond(tx, req, 200, "", "", nil, capabilityHeaders()...)
	case sip.BYE, sip.INFO, sip.UPDATE, sip.NOTIFY:
		if inDialog {
			s.inDialog(req, tx)
			return
		}
		s.respond(tx, req, 481, "", "", nil)
	case sip.CANCEL:
		// A CANCEL matching a pending INVITE never gets here: sipgo's
		// transaction layer answers it (200, and 487 to the INVITE).
		s.respond(tx, req, 481, "", "", nil)
	case sip.REFER:
		if inDialog {
			s.inDialog(req, tx)
			return
		}
		// No dialog to transfer (RFC 3515 2.4.2 allows it; we do not).
		s.respond(tx, req, 481, "", "", nil)
	default:
		code, reason, allow := methodRefusal(req.Method)
		s.respond(tx, req, code, reason, "", nil, allow)
	}
}

// respond sends a response outside a dialog's loop and counts it.
func (s *Server) respond(tx serverTx, req *sip.Request, code int, reason, tag string, body []byte, hs ...sip.Header) *sip.Response {
	res := buildResponse(req, code, reason, body, tag, hs...)
	if code >= 200 || code == 180 || code == 183 {
		res.AppendHeader(sip.NewHeader("Server", s.cfg.UserAgent))
	}
	s.stats.response(string(req.Method), code)
	if err := tx.Respond(res); err != nil {
		s.log.Debug().Str("method", methodLabel(string(req.Method))).Err(ErrTransport).Msg("response not sent")
		return nil
	}
	return res
}

// lookup finds the dialog of an in-dialog request.
func (s *Server) lookup(req *sip.Request) *Dialog {
	local, _ := req.To().Params.Get("tag")
	remote, _ := req.From().Params.Get("tag")
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dialogs[dialogKey{callID: req.CallID().Value(), local: local, remote: remote}]
}

// inDialog hands a request to its dialog and waits for its answer (sipgo
// ends the transaction when the handler returns).
func (s *Server) inDialog(req *sip.Request, tx serverTx) {
	d := s.lookup(req)
	if d == nil {
		if e := s.lookupEarly(req); e != nil {
			s.earlyLegRequest(e, req, tx)
			return
		}
		s.respond(tx, req, 481, "", "", nil)
		return
	}
	d.mu.Lock()
	if !d.started {
		d.earlyRequest(req, tx)
		d.mu.Unlock()
		return
	}
	d.mu.Unlock()
	answered := make(chan struct{})
	var taken atomic.Bool
	ok := d.post(func() {
		taken.Store(true)
		defer close(answered)
		defer func() {
			if p := recover(); p != nil {
				d.reply(tx, req, 500, "", nil)
				panic(p) // guard counts it and ends this dialog
			}
		}()
		d.onRequest(req, tx)
	})
	if ok {
		select {
		case <-answered:
			return
		case <-d.done:
			// The loop runs no event after the one that ended the
			// dialog: ours was that one (and answers), or never runs.
			if taken.Load() {
				<-answered
				return
			}
		}
	}
	s.respond(tx, req, 481, "", d.localTag, nil)
}

// earlyRequest answers a request in the early dialog (our 180 or 183
// named our tag; Application.Invite is still deciding). Called with d.mu
// held.
func (d *Dialog) earlyRequest(req *sip.Request, tx serverTx) {
	reply := func(code int, hs ...sip.Header) {
		res := buildResponse(req, code, "", nil, d.localTag, hs...)
		d.env.stats.response(string(req.Method), code)
		_ = tx.Respond(res)
	}
	switch req.Method {
	case sip.BYE:
		// RFC 3261 15: the caller may end the early dialog with BYE; the
		// INVITE is then answered 487.
		reply(200)
		d.earlyBye = true
		if d.cancelInvite != nil {
			d.cancelInvite()
		}
	case sip.OPTIONS:
		reply(200, capabilityHeaders()...)
	default:
		// RFC 3311 5.2: the INVITE's offer is not answered yet.
		reply(500, retryAfter(int(1+d.env.jitter(9*time.Second)/time.Second)))
	}
}

// onInvite takes an INVITE outside a dialog: session timer, auth and
// limit checks, the early dialog, Application.Invite, the answer.
func (s *Server) onInvite(req *sip.Request, tx inviteTx) {
	se, ref, refusal := negotiate(req, &s.cfg)
	if refusal != nil {
		s.respond(tx, req, refusal.Code, refusal.Reason, "", nil, refusal.headers()...)
		return
	}
	if a := s.opts.auth; a != nil {
		authz, _ := header(req, "Authorization", "")
		var failed error
		if authz != "" {
			failed = a.Verify(string(req.Method), req.Recipient.String(), authz)
		}
		if authz == "" || failed != nil {
			s.respond(tx, req, 401, "", "", nil, sip.NewHeader("WWW-Authenticate", a.Challenge(failed)))
			return
		}
	}
	src := sourceOf(req)
	var release func()
	if l := s.opts.limit; l != nil {
		rel, err := l(src)
		if err != nil {
			var r *Refusal
			if errors.As(err, &r) && r.Code >= 300 && r.Code <= 699 {
				s.respond(tx, req, r.Code, r.Reason, "", nil, r.headers()...)
			} else {
				s.respond(tx, req, 503, "", "", nil, retryAfter(5))
			}
			return
		}
		release = rel
	}
	host, port := s.listenerFor(req.Transport())
	d := newDialog(s.env, req, src, host, port)
	d.laddr = s.boundFor(req.Transport())
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	d.mu.Lock()
	d.cancelInvite = cancel
	d.mu.Unlock()
	if !tx.OnCancel(func(*sip.Request) {
		// sipgo answered the CANCEL 200 and the INVITE 487.
		s.stats.request(string(sip.CANCEL))
		s.stats.response(string(sip.CANCEL), 200)
		d.mu.Lock()
		d.cancelled = true
		d.mu.Unlock()
		cancel()
	}) {
		d.mu.Lock()
		d.cancelled = true
		d.mu.Unlock()
	}
	ik := inviteKey{callID: d.callID, remote: d.remoteTag, cseq: req.CSeq().SeqNo}
	s.mu.Lock()
	if _, merged := s.invites[ik]; merged {
		// RFC 3261 8.2.2.2: the same INVITE on another branch (a fork
		// come back, or a peer that changed the branch of a
		// retransmission) is not a second call.
		s.mu.Unlock()
		if release != nil {
			release()
		}
		s.respond(tx, req, 482, "", "", nil)
		return
	}
	s.invites[ik] = d
	s.dialogs[d.key()] = d
	s.mu.Unlock()
	d.inviteKey = ik

	s.respond(tx, req, 100, "", "", nil)
	switch s.cfg.Ringing {
	case "180", "183":
		code := 180
		if s.cfg.Ringing == "183" {
			code = 183
		}
		s.respond(tx, req, code, "", d.localTag, nil, d.contact)
	}

	m, local, err := s.invite(ctx, d, req, src)
	d.mu.Lock()
	cancelled, bye, hang := d.cancelled, d.earlyBye, d.earlyHangup
	d.mu.Unlock()
	var cause error
	switch {
	case cancelled:
		s.stats.response(string(req.Method), 487) // sipgo's own
		cause = ErrCancelled
	case bye:
		s.respond(tx, req, 487, "", d.localTag, nil)
		cause = ErrRemoteBye
	case hang != nil:
		s.respond(tx, req, 480, "", d.localTag, nil)
		cause = hang
	case s.ctx.Err() != nil:
		s.respond(tx, req, 503, "", d.localTag, nil, retryAfter(5))
		cause = ErrServerClosed
	case err != nil:
		var r *Refusal
		if errors.As(err, &r) && r.Code >= 300 && r.Code <= 699 {
			s.respond(tx, req, r.Code, r.Reason, d.localTag, nil, r.headers()...)
		} else {
			s.respond(tx, req, 500, "", d.localTag, nil)
		}
		m, cause = nil, err // a Media returned with an error is not ours
	case m == nil || len(local) == 0:
		s.respond(tx, req, 500, "", d.localTag, nil)
		cause = errNoMedia
	}
	if cause != nil {
		d.endEarly(cause, m, release)
		return
	}

	res := buildResponse(req, 200, "", local, d.localTag, d.okHeaders(se, ref, req)...)
	res.AppendHeader(sip.NewHeader("Server", s.cfg.UserAgent))
	if st, ok := tx.(*sip.ServerTx); ok {
		d.terminateInvite = st.Terminate
		// An ACK reusing the INVITE's branch (RFC 2543 peers) matches
		// the transaction and comes through its Acks, not our handler.
		s.tasks.Go(func() {
			select {
			case ack := <-st.Acks():
				if s.check(ack, sip.IsReliable(ack.Transport())) == nil {
					d.post(func() { d.onAck(ack) })
				}
			case <-st.Done():
			case <-d.done:
			}
		})
	}
	d.start(answer{media: m, local: local, res: res, offerInOK: len(req.Body()) == 0,
		se: se, refresher: ref, release: release}, req)
	s.stats.response(string(req.Method), 200)
	err = tx.Respond(res)
	d.mu.Lock()
	cancelled = d.cancelled
	d.mu.Unlock()
	switch {
	case cancelled:
		// The CANCEL won the race: the transaction sent 487, our 200
		// never left.
		d.post(func() { d.end(ErrCancelled, false) })
	case err != nil:
		d.post(func() { d.end(fmt.Errorf("%w: the 200 was not sent", ErrTransport), false) })
	}
}

// invite asks the Application, with any panic of it recovered.
func (s *Server) invite(ctx context.Context, d *Dialog, req *sip.Request, src netip.AddrPort) (m Media, local []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.stats.panicked()
			s.log.Error().Str("call", d.id).Str("method", "INVITE").Err(ErrPanic).Msg("Application.Invite panicked")
			m, local, err = nil, nil, ErrPanic
		}
	}()
	var offer []byte
	if b := req.Body(); len(b) > 0 {
		offer = b
	}
	inv := &Invite{Dialog: d, Source: src, Transport: req.Transport(), Offer: offer}
	if h := req.From(); h != nil {
		inv.From = userPart(&h.Address)
	}
	if h := req.To(); h != nil {
		inv.To = userPart(&h.Address)
	}
	return s.app.Invite(ctx, inv)
}

// endEarly ends a dialog that never got its 2xx.
func (d *Dialog) endEarly(cause error, m Media, release func()) {
	d.mu.Lock()
	d.state = StateTerminated
	d.info.Cause = cause
	d.mu.Unlock()
	close(d.done)
	d.env.forget(d)
	if release != nil {
		release()
	}
	if r, ok := errors.AsType[*Refusal](cause); ok {
		// A refusal we chose (busy, full, a bad offer) is counted by its
		// code: a burst of them writes a summary, not a line each.
		d.env.refused.Add(strconv.Itoa(r.Code))
	} else {
		d.env.log.Info().Str("call", d.id).Str("method", "INVITE").Err(logCause(cause)).Msg("call not answered")
	}
	if m != nil {
		endMedia(d.env, d.id, m, cause)
	}
}

// newDialog is the early dialog of an INVITE; host and port are our
// Contact's and Via's.
func newDialog(e *env, req *sip.Request, src netip.AddrPort, host string, port int) *Dialog {
	transport := req.Transport()
	remoteTag, _ := req.From().Params.Get("tag")
	local, _ := sip.HeaderClone(req.To()).(*sip.ToHeader)
	tag := sip.GenerateTagN(16)
	local.Params.Add("tag", tag)
	remote, _ := sip.HeaderClone(req.From()).(*sip.FromHeader)
	contact := &sip.ContactHeader{Address: sip.Uri{Scheme: "sip", Host: host, Port: port}}
	if !strings.EqualFold(transport, "udp") {
		contact.Address.UriParams = sip.NewParams()
		contact.Address.UriParams.Add("transport", strings.ToLower(transport))
	}
	return &Dialog{
		env:       e,
		id:        newID(),
		callID:    req.CallID().Value(),
		localTag:  tag,
		remoteTag: remoteTag,
		local:     local,
		remote:    remote,
		contact:   contact,
		transport: strings.ToUpper(transport),
		reliable:  sip.IsReliable(transport),
		source:    src,
		viaHost:   host,
		viaPort:   port,
		inbox:     make(chan func(), e.cfg.Inbox),
		done:      make(chan struct{}),
	}
}

// sourceOf is the address a request came from.
func sourceOf(req *sip.Request) netip.AddrPort {
	ap, _ := netip.ParseAddrPort(req.Source())
	return ap
}

// userPart is a URI's user part as received: a sip: or sips: URI's user
// (never its password), a tel: URI's number without its parameters.
func userPart(u *sip.Uri) string {
	if u.User != "" || !strings.EqualFold(u.Scheme, "tel") {
		return u.User
	}
	number, _, _ := strings.Cut(u.Raw(), ";")
	return number
}
