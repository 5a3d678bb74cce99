package signal

import (
	"context"
	"errors"
	"fmt"
	"github.com/brisvox/brisvox/internal/ratelog"
	"math/rand/v2"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/emiago/sipgo/sip"
	"github.com/rs/zerolog"
)

// serverTx is the part of a sipgo server transaction a dialog answers on.
type serverTx interface {
	Respond(res *sip.Response) error
}

var _ serverTx = (sip.ServerTransaction)(nil)

// wire is the seam between a dialog and the network: the sipgo stack in
// production, a recorder in tests.
type wire interface {
	// resend writes a 2xx again, outside its transaction.
	resend(res *sip.Response) error
	// request sends an in-dialog request in a client transaction and
	// returns its final response (or an error: transport, timeout, ctx).
	request(ctx context.Context, req *sip.Request) (*sip.Response, error)
	// ack sends the ACK of a 2xx to our re-INVITE.
	ack(req *sip.Request) error
}

// env is what a dialog takes from its server.
type env struct {
	cfg   Config // defaults applied
	log   zerolog.Logger
	stats *counters
	wire  wire
	// tasks runs a goroutine the server waits for in Close.
	tasks *sync.WaitGroup
	// byeCtx ends CloseGrace after Close began: our last BYEs give up.
	byeCtx context.Context
	// forget removes an ended dialog from the server's table.
	forget func(*Dialog)
	// refused tallies the INVITEs refused with a final response (a
	// 503 under a burst): one line, then a summary per interval, never
	// a line each.
	refused *ratelog.Tally

	mu  sync.Mutex
	rng *rand.Rand
}

func (e *env) jitter(maxSpan time.Duration) time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	return time.Duration(e.rng.Int64N(int64(maxSpan) + 1))
}

// Dialog is one dialog our 2xx creates (or is about to: Invite.Dialog is
// in StateEarly). All its signalling state is owned by one goroutine (its
// loop); the methods post to it.
type Dialog struct {
	env *env
	id  string

	// identity, fixed at creation
	callID    string
	localTag  string
	remoteTag string
	local     *sip.ToHeader   // their To, with our tag: our From
	remote    *sip.FromHeader // their From: our To
	contact   *sip.ContactHeader
	transport string
	reliable  bool
	// uac: we placed the call (Dial); our stream requests go where
	// their Route or target says, not to a source.
	uac     bool
	source  netip.AddrPort
	viaHost string
	viaPort int
	// laddr is our listener's address, the source of our UDP requests.
	laddr netip.AddrPort
	// inviteKey names the INVITE that made the dialog.
	inviteKey inviteKey
	// terminateInvite releases the INVITE's server transaction once its
	// 2xx was acknowledged or the dialog ended (nil in tests).
	terminateInvite func()

	inbox chan func()
	done  chan struct{} // closed when Terminated

	mu           sync.Mutex
	state        State
	info         DialogInfo
	earlyHangup  error  // Hangup before the answer
	earlyBye     bool   // BYE in the early dialog
	cancelInvite func() // ends Application.Invite's ctx
	cancelled    bool   // a CANCEL came before the answer
	started      bool

	// Owned by the loop from start on.
	remoteTarget sip.Uri
	routes       []sip.Uri
	localCSeq    uint32
	remoteCSeq   uint32
	media        Media
	localSDP     []byte
	release      func()

	pend       *sip.Response // the 2xx waiting for its ACK
	pendCSeq   uint32
	pendEvery  time.Duration
	pendOffer  bool // our offer is in pend: the answer comes in the ACK
	pendFirst  bool // pend answers the initial INVITE
	retransT   *time.Timer
	ackT       *time.Timer
	ourReq     bool // a re-INVITE or UPDATE of ours is in flight
	ourOffer   bool // with our offer
	ourPending func()
	// hangupAfterAck is a Hangup waiting for the ACK of our first 2xx.
	hangupAfterAck error
	// lastAck is the ACK of our last re-INVITE's 2xx, sent again for
	// each retransmission of that 2xx (RFC 3261 13.2.2.4).
	lastAck *sip.Request

	// refer is our pending (or last) REFER's subscription.
	refer *referState

	se time.Duration
	// refresher is who refreshes, named by the roles of the dialog's
	// first INVITE (uac: the caller); we refresh when it is our role
	// (weRefresh). A refresh transaction's refresher parameter names
	// that transaction's roles: refresherIn turns it into ours.
	refresher  refresher
	peerUpdate bool // the peer allows UPDATE
	peerTimer  bool // the peer supports timer
	refreshT   *time.Timer
	expiryT    *time.Timer
	retryT     *time.Timer
}

// answer is what the INVITE handler hands the loop when it sends the 2xx.
type answer struct {
	media     Media
	local     []byte
	res       *sip.Response
	offerInOK bool // late offer: our offer in the 200
	se        time.Duration
	refresher refresher
	release   func()
}

// ID is our call id, the one our logs carry.
func (d *Dialog) ID() string { return d.id }

// Describe is the dialog's state for the operator.
func (d *Dialog) Describe() DialogInfo {
	d.mu.Lock()
	defer d.mu.Unlock()
	info := d.info
	info.ID, info.State, info.Transport = d.id, d.state, d.transport
	return info
}

// State is the dialog's state.
func (d *Dialog) State() State {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.state
}

// isStarted says the loop runs (our 2xx was handed over).
func (d *Dialog) isStarted() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.started
}

// Done is closed when the dialog has ended.
func (d *Dialog) Done() <-chan struct{} { return d.done }

// Hangup ends the dialog from our side: BYE once answered (then
// Media.Ended with ErrLocalHangup wrapping reason), or before the answer
// the INVITE is refused (480) and Invite's ctx ends.
func (d *Dialog) Hangup(reason error) {
	cause := ErrLocalHangup
	if reason != nil {
		cause = fmt.Errorf("%w: %w", ErrLocalHangup, reason)
	}
	d.mu.Lock()
	if d.state == StateEarly && !d.started {
		if d.earlyHangup == nil {
			d.earlyHangup = cause
		}
		cancel := d.cancelInvite
		d.mu.Unlock()
		if cancel != nil {
			cancel()
		}
		return
	}
	d.mu.Unlock()
	d.post(func() { d.hangup(cause) })
}

// hangup ends the dialog from our side. Until the ACK of our first 2xx
// it waits for it (RFC 3261 15: no BYE before the ACK or the ACK
// timeout).
func (d *Dialog) hangup(cause error) {
	if d.pend != nil && d.pendFirst {
		if d.hangupAfterAck == nil {
			d.hangupAfterAck = cause
		}
		return
	}
	d.end(cause, true)
}

// post queues f for the loop; false when the dialog has ended.
func (d *Dialog) post(f func()) bool {
	select {
	case <-d.done:
		return false
	default:
	}
	select {
	case d.inbox <- f:
		return true
	case <-d.done:
		return false
	}
}

func (d *Dialog) setState(s State) {
	d.mu.Lock()
	d.state = s
	d.mu.Unlock()
}

func (d *Dialog) updateInfo(f func(*DialogInfo)) {
	d.mu.Lock()
	f(&d.info)
	d.mu.Unlock()
}

// start begins the loop once the 2xx was handed to the transaction.
// Called once, by the INVITE handler.
func (d *Dialog) start(a answer, invite *sip.Request) {
	d.media, d.localSDP, d.release = a.media, a.local, a.release
	d.remoteCSeq = invite.CSeq().SeqNo
	d.remoteTarget = contactURI(invite, d.source)
	d.routes = recordRoutes(invite)
	d.peerUpdate = hasToken(invite, "Allow", "", "UPDATE")
	d.peerTimer = hasToken(invite, "Supported", "k", "timer")
	d.retransT = stoppedTimer()
	d.ackT = stoppedTimer()
	d.refreshT = stoppedTimer()
	d.expiryT = stoppedTimer()
	d.retryT = stoppedTimer()
	d.mu.Lock()
	d.state, d.started = StateAnswered, true
	d.mu.Unlock()
	d.awaitAck(a.res, invite.CSeq().SeqNo, a.offerInOK, true)
	d.setSession(a.se, a.refresher)
	d.env.tasks.Go(d.run)
}

func stoppedTimer() *time.Timer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return t
}

// run is the dialog's loop: every event of the dialog, one at a time.
func (d *Dialog) run() {
	for {
		select {
		case f := <-d.inbox:
			d.guard(f)
		case <-d.retransT.C:
			d.guard(d.onRetransmit)
		case <-d.ackT.C:
			d.guard(d.onAckTimeout)
		case <-d.refreshT.C:
			d.guard(d.onRefreshDue)
		case <-d.retryT.C:
			d.guard(d.onRetry)
		case <-d.expiryT.C:
			d.guard(d.onExpiry)
		}
		if d.State() == StateTerminated {
			return
		}
	}
}

// guard runs one event; a panic ends this dialog (and no other).
func (d *Dialog) guard(f func()) {
	defer func() {
		if p := recover(); p != nil {
			d.env.stats.panicked()
			d.env.log.Error().Str("call", d.id).Err(ErrPanic).Msg("dialog event panicked")
			d.end(ErrPanic, true)
		}
	}()
	f()
}

// awaitAck arms the 2xx retransmissions and the ACK deadline. The UAS
// core retransmits its 2xx on every transport (RFC 3261 13.3.1.4): a
// proxy between us may forward the response over UDP, where it can be
// lost with nobody else to repeat it.
func (d *Dialog) awaitAck(res *sip.Response, cseq uint32, offer, first bool) {
	d.pend, d.pendCSeq, d.pendOffer, d.pendFirst = res, cseq, offer, first
	d.pendEvery = d.env.cfg.T1
	d.retransT.Reset(d.pendEvery)
	d.ackT.Reset(64 * d.env.cfg.T1)
	d.updateInfo(func(i *DialogInfo) { i.OfferPending = offer })
}

func (d *Dialog) onRetransmit() {
	if d.pend == nil {
		return
	}
	if err := d.env.wire.resend(d.pend); err != nil {
		d.env.log.Warn().Str("call", d.id).Str("method", "INVITE").Err(ErrTransport).Msg("2xx retransmission failed")
	}
	d.updateInfo(func(i *DialogInfo) { i.Retransmits++ })
	d.pendEvery = min(2*d.pendEvery, d.env.cfg.T2)
	d.retransT.Reset(d.pendEvery)
}

func (d *Dialog) onAckTimeout() {
	if d.pend == nil {
		return
	}
	d.end(ErrAckTimeout, true)
}

// onAck takes an ACK in the dialog.
func (d *Dialog) onAck(req *sip.Request) {
	if d.pend == nil || req.CSeq().SeqNo != d.pendCSeq {
		return // a retransmitted or stray ACK
	}
	d.pend = nil
	d.retransT.Stop()
	d.ackT.Stop()
	first := d.pendFirst
	if first && d.terminateInvite != nil {
		d.terminateInvite()
	}
	if d.pendOffer {
		body := req.Body()
		if len(body) == 0 {
			d.end(ErrNoAnswerInAck, true)
			return
		}
		if err := d.media.Answer(body); err != nil {
			d.end(fmt.Errorf("%w: %w", ErrBadAnswer, err), true)
			return
		}
	}
	d.pendOffer = false
	d.updateInfo(func(i *DialogInfo) { i.OfferPending = d.ourOffer })
	if first {
		d.setState(StateConfirmed)
		if d.hangupAfterAck != nil {
			d.end(d.hangupAfterAck, true)
			return
		}
		d.media.Confirmed()
	}
}

// end ends the dialog once: timers stopped, a BYE when bye, Media.Ended.
func (d *Dialog) end(cause error, bye bool) {
	if d.State() == StateTerminated {
		return
	}
	for _, t := range []*time.Timer{d.retransT, d.ackT, d.refreshT, d.expiryT, d.retryT} {
		if t != nil {
			t.Stop()
		}
	}
	if bye {
		req := d.newRequest(sip.BYE)
		d.env.tasks.Go(func() {
			ctx, cancel := context.WithTimeout(d.env.byeCtx, 64*d.env.cfg.T1)
			defer cancel()
			if _, err := d.env.wire.request(ctx, req); err != nil {
				d.env.log.Debug().Str("call", d.id).Str("method", "BYE").Err(err).Msg("BYE got no final response")
			}
		})
	}
	d.mu.Lock()
	d.state = StateTerminated
	d.info.Cause = cause
	d.mu.Unlock()
	close(d.done)
	if d.terminateInvite != nil {
		d.terminateInvite()
	}
	d.env.forget(d)
	if d.release != nil {
		d.release()
	}
	d.env.log.Info().Str("call", d.id).Err(logCause(cause)).Msg("dialog ended")
	if d.media != nil {
		endMedia(d.env, d.id, d.media, cause)
	}
}

// endMedia calls Media.Ended; a panic in it is counted, not rethrown (the
// dialog is over either way).
func endMedia(e *env, id string, m Media, cause error) {
	defer func() {
		if p := recover(); p != nil {
			e.stats.panicked()
			e.log.Error().Str("call", id).Err(ErrPanic).Msg("Media.Ended panicked")
		}
	}()
	m.Ended(cause)
}

// onRequest takes an in-dialog request other than ACK.
func (d *Dialog) onRequest(req *sip.Request, tx serverTx) {
	seq := req.CSeq().SeqNo
	if seq < d.remoteCSeq {
		d.reply(tx, req, 500, "Out Of Order CSeq", nil)
		return
	}
	d.remoteCSeq = seq
	switch req.Method {
	case sip.BYE:
		d.reply(tx, req, 200, "OK", nil)
		d.end(ErrRemoteBye, false)
	case sip.INVITE:
		d.onReinvite(req, tx)
	case sip.UPDATE:
		d.onUpdate(req, tx)
	case sip.INFO:
		code := d.media.Info(contentType(req), req.Body())
		if code < 200 || code > 699 {
			code = 500
		}
		d.reply(tx, req, code, "", nil)
	case sip.OPTIONS:
		d.reply(tx, req, 200, "OK", nil, capabilityHeaders()...)
	case sip.REFER:
		// We transfer calls; we are not transferred (documented in
		// docs/SIP.md, counted as a response REFER 403).
		d.reply(tx, req, 403, "Forbidden", nil)
	case sip.NOTIFY:
		d.onNotify(req, tx)
	default:
		code, reason, allow := methodRefusal(req.Method)
		d.reply(tx, req, code, reason, nil, allow)
	}
}

// onReinvite: glare and overlap rules of RFC 3261 14.2, then the offer.
func (d *Dialog) onReinvite(req *sip.Request, tx serverTx) {
	if d.ourReq || d.pend != nil {
		d.reply(tx, req, 491, "Request Pending", nil)
		return
	}
	se, ref, refusal := negotiate(req, &d.env.cfg)
	if refusal != nil {
		d.reply(tx, req, refusal.Code, refusal.Reason, nil, refusal.Headers...)
		return
	}
	offer := req.Body()
	var sdp []byte
	if len(offer) == 0 {
		sdp = d.reoffer(tx, req, nil)
	} else {
		sdp = d.reoffer(tx, req, offer)
	}
	if sdp == nil {
		return
	}
	if c := contactURIOr(req); c != nil {
		d.remoteTarget = *c
	}
	d.localSDP = sdp
	d.setSession(se, d.refresherIn(ref, false))
	res := d.reply(tx, req, 200, "OK", sdp, d.okHeaders(se, ref, req)...)
	d.countRefresh()
	if res != nil {
		d.awaitAck(res, req.CSeq().SeqNo, len(offer) == 0, false)
	}
}

// reoffer asks the media side; nil when it refused (and we answered).
func (d *Dialog) reoffer(tx serverTx, req *sip.Request, offer []byte) []byte {
	sdp, err := d.media.Reoffer(offer)
	if err != nil || len(sdp) == 0 {
		var r *Refusal
		if errors.As(err, &r) && r.Code >= 300 && r.Code <= 699 {
			d.reply(tx, req, r.Code, r.Reason, nil, r.headers()...)
		} else {
			d.reply(tx, req, 488, "Not Acceptable Here", nil)
		}
		return nil
	}
	return sdp
}

// onUpdate: RFC 3311 5.2, then the offer (or a bare session refresh).
func (d *Dialog) onUpdate(req *sip.Request, tx serverTx) {
	offer := req.Body()
	if len(offer) > 0 && (d.ourOffer || d.pendOffer) {
		d.reply(tx, req, 491, "Request Pending", nil)
		return
	}
	se, ref, refusal := negotiate(req, &d.env.cfg)
	if refusal != nil {
		d.reply(tx, req, refusal.Code, refusal.Reason, nil, refusal.Headers...)
		return
	}
	var sdp []byte
	if len(offer) > 0 {
		if sdp = d.reoffer(tx, req, offer); sdp == nil {
			return
		}
		d.localSDP = sdp
	}
	if c := contactURIOr(req); c != nil {
		d.remoteTarget = *c
	}
	d.setSession(se, d.refresherIn(ref, false))
	d.reply(tx, req, 200, "OK", sdp, d.okHeaders(se, ref, req)...)
	d.countRefresh()
}

func (d *Dialog) countRefresh() {
	if d.se > 0 {
		d.updateInfo(func(i *DialogInfo) { i.Refreshes++ })
	}
}

// ourRole is our role in the dialog's first INVITE: uac when we placed
// the call.
func (d *Dialog) ourRole() refresher {
	if d.uac {
		return refresherUAC
	}
	return refresherUAS
}

// weRefresh says the session refresher is us.
func (d *Dialog) weRefresh() bool { return d.refresher == d.ourRole() }

// refresherIn is the refresher r of a refresh transaction (relative to
// its client and server) in the dialog's roles; ours says we sent the
// request (we are its client).
func (d *Dialog) refresherIn(r refresher, ours bool) refresher {
	if r == refresherNone {
		return r
	}
	us := refresherUAS
	if ours {
		us = refresherUAC
	}
	if r == us {
		return d.ourRole()
	}
	if d.uac {
		return refresherUAS
	}
	return refresherUAC
}

// setSession (re)arms the session timer: the refresh at half the interval
// when we refresh, and in any case the expiry at the interval less
// min(32 s, interval/3) (RFC 4028 10). r is in the dialog's roles.
func (d *Dialog) setSession(se time.Duration, r refresher) {
	d.se, d.refresher = se, r
	d.refreshT.Stop()
	d.expiryT.Stop()
	d.updateInfo(func(i *DialogInfo) { i.SessionExpires, i.Refresher = se, string(r) })
	if se <= 0 {
		return
	}
	if d.weRefresh() {
		d.refreshT.Reset(se / 2)
	}
	d.expiryT.Reset(se - min(32*time.Second, se/3))
}

func (d *Dialog) onExpiry() {
	d.end(ErrSessionExpired, true)
}

func (d *Dialog) onRetry() {
	if d.ourPending != nil {
		f := d.ourPending
		d.ourPending = nil
		f()
	}
}

// onRefreshDue sends our refresh: UPDATE when the peer allows it, else a
// re-INVITE with our unchanged SDP.
func (d *Dialog) onRefreshDue() {
	if d.ourReq || d.pend != nil {
		// Their transaction is open: try again a little later.
		d.retryT.Reset(d.env.cfg.T1)
		d.ourPending = d.onRefreshDue
		return
	}
	method := sip.INVITE
	if d.peerUpdate {
		method = sip.UPDATE
	}
	d.sendRefresh(method, d.se)
}

// sendRefresh sends our session refresh. Its refresher is uac, the
// client of this request: we stay the refresher (RFC 4028 7.4).
func (d *Dialog) sendRefresh(method sip.RequestMethod, se time.Duration) {
	req := d.newRequest(method)
	req.AppendHeader(d.contact)
	req.AppendHeader(sip.NewHeader("Supported", "timer"))
	req.AppendHeader(sip.NewHeader("Session-Expires", strconv.Itoa(int(se/time.Second))+";refresher=uac"))
	req.AppendHeader(sip.NewHeader("Min-SE", strconv.Itoa(int(d.env.cfg.MinSE/time.Second))))
	if method == sip.INVITE {
		req.AppendHeader(sip.NewHeader("Content-Type", "application/sdp"))
		req.SetBody(d.localSDP)
		d.ourOffer = true
	} else {
		req.SetBody(nil)
	}
	d.ourReq = true
	d.updateInfo(func(i *DialogInfo) { i.OfferPending = d.ourOffer })
	d.env.tasks.Go(func() {
		ctx, cancel := context.WithTimeout(d.env.byeCtx, 64*d.env.cfg.T1)
		defer cancel()
		res, err := d.env.wire.request(ctx, req)
		d.post(func() { d.onRefreshResult(req, se, res, err) })
	})
}

// onRefreshResult takes the final response to our refresh.
func (d *Dialog) onRefreshResult(req *sip.Request, se time.Duration, res *sip.Response, err error) {
	d.ourReq, d.ourOffer = false, false
	d.updateInfo(func(i *DialogInfo) { i.OfferPending = d.pendOffer })
	if err != nil {
		d.end(fmt.Errorf("%w: refresh: %w", ErrSessionExpired, err), true)
		return
	}
	code := res.StatusCode
	switch {
	case code >= 200 && code < 300:
		if req.IsInvite() {
			d.lastAck = d.newAck(req, res)
			if err := d.env.wire.ack(d.lastAck); err != nil {
				d.end(fmt.Errorf("%w: the ACK was not sent", ErrTransport), true)
				return
			}
		}
		// The 2xx may name another refresher (in this transaction's
		// roles: uac is us); without one we stay the refresher.
		nse, ref := se, d.ourRole()
		if v, ok := header(res, "Session-Expires", "x"); ok {
			if s, r, err := parseSessionExpires(v); err == nil {
				nse = time.Duration(s) * time.Second
				if r != refresherNone {
					ref = d.refresherIn(r, true)
				}
			}
		}
		d.setSession(nse, ref)
		d.countRefresh()
	case code == 408 || code == 481:
		d.end(fmt.Errorf("%w: refresh answered %d", ErrSessionExpired, code), true)
	case code == 422:
		v, _ := header(res, "Min-SE", "")
		m, err := parseMinSE(v)
		if err != nil || time.Duration(m)*time.Second <= se {
			return // the expiry timer decides
		}
		d.sendRefresh(req.Method, time.Duration(m)*time.Second)
	case code == 491:
		// RFC 3261 14.1: not the Call-ID's owner, wait 0 to 2 s.
		d.ourPending = func() { d.sendRefresh(req.Method, se) }
		d.retryT.Reset(d.env.jitter(2 * time.Second))
	case (code == 405 || code == 501) && req.Method == sip.UPDATE:
		d.peerUpdate = false
		d.sendRefresh(sip.INVITE, se)
	default:
		// Not refreshed: the expiry timer ends the call if nothing else
		// does.
	}
}

// okHeaders are the headers of our 2xx to an INVITE or UPDATE.
func (d *Dialog) okHeaders(se time.Duration, r refresher, req *sip.Request) []sip.Header {
	hs := []sip.Header{d.contact, sip.NewHeader("Supported", "timer")}
	hs = append(hs, capabilityHeaders()[:1]...)
	if se > 0 {
		hs = append(hs, sip.NewHeader("Session-Expires", strconv.Itoa(int(se/time.Second))+";refresher="+string(r)))
		if hasToken(req, "Supported", "k", "timer") {
			hs = append(hs, sip.NewHeader("Require", "timer"))
		}
	}
	return hs
}

// reply answers an in-dialog request; it returns the response sent (nil
// when the transport refused it).
func (d *Dialog) reply(tx serverTx, req *sip.Request, code int, reason string, body []byte, hs ...sip.Header) *sip.Response {
	res := buildResponse(req, code, reason, body, d.localTag, hs...)
	d.env.stats.response(string(req.Method), code)
	if err := tx.Respond(res); err != nil {
		d.env.log.Warn().Str("call", d.id).Str("method", methodLabel(string(req.Method))).Err(ErrTransport).Msg("response not sent")
		return nil
	}
	return res
}

// newRequest builds an in-dialog request of ours (RFC 3261 12.2.1.1).
func (d *Dialog) newRequest(method sip.RequestMethod) *sip.Request {
	req := sip.NewRequest(method, *d.remoteTarget.Clone())
	req.AppendHeader(&sip.ViaHeader{
		ProtocolName: "SIP", ProtocolVersion: "2.0", Transport: d.transport,
		Host: d.viaHost, Port: d.viaPort,
		Params: branchParams(),
	})
	for _, r := range d.routes {
		req.AppendHeader(&sip.RouteHeader{Address: *r.Clone()})
	}
	mf := sip.MaxForwardsHeader(70)
	req.AppendHeader(&mf)
	from := d.local.AsFrom()
	req.AppendHeader(&from)
	to := d.remote.AsTo()
	req.AppendHeader(&to)
	cid := sip.CallIDHeader(d.callID)
	req.AppendHeader(&cid)
	d.localCSeq++
	req.AppendHeader(&sip.CSeqHeader{SeqNo: d.localCSeq, MethodName: method})
	req.AppendHeader(sip.NewHeader("User-Agent", d.env.cfg.UserAgent))
	req.SetTransport(d.transport)
	d.route(req)
	req.SetBody(nil)
	return req
}

// newAck builds the ACK of a 2xx to our re-INVITE (RFC 3261 13.2.2.4).
func (d *Dialog) newAck(inv *sip.Request, res *sip.Response) *sip.Request {
	ack := sip.NewRequest(sip.ACK, *inv.Recipient.Clone())
	ack.AppendHeader(&sip.ViaHeader{
		ProtocolName: "SIP", ProtocolVersion: "2.0", Transport: d.transport,
		Host: d.viaHost, Port: d.viaPort,
		Params: branchParams(),
	})
	for _, r := range d.routes {
		ack.AppendHeader(&sip.RouteHeader{Address: *r.Clone()})
	}
	mf := sip.MaxForwardsHeader(70)
	ack.AppendHeader(&mf)
	ack.AppendHeader(sip.HeaderClone(inv.From()))
	if to := res.To(); to != nil {
		ack.AppendHeader(sip.HeaderClone(to))
	} else {
		ack.AppendHeader(sip.HeaderClone(inv.To()))
	}
	cid := sip.CallIDHeader(d.callID)
	ack.AppendHeader(&cid)
	ack.AppendHeader(&sip.CSeqHeader{SeqNo: inv.CSeq().SeqNo, MethodName: sip.ACK})
	ack.SetTransport(d.transport)
	d.route(ack)
	ack.SetBody(nil)
	return ack
}

// route pins where a request of ours leaves from and goes: on a stream,
// the connection the INVITE came on; over UDP, from our listener.
func (d *Dialog) route(req *sip.Request) {
	if d.reliable && !d.uac {
		req.SetDestination(d.source.String())
		return
	}
	if d.reliable {
		return
	}
	if d.laddr.IsValid() {
		req.Laddr = sip.Addr{IP: d.laddr.Addr().AsSlice(), Port: int(d.laddr.Port())}
	}
}

func branchParams() sip.HeaderParams {
	p := sip.NewParams()
	p.Add("branch", sip.GenerateBranch())
	return p
}

// onRetransmitted2xx takes a 2xx to our re-INVITE that came again (its
// transaction is gone): the peer missed our ACK, which goes again.
func (d *Dialog) onRetransmitted2xx(res *sip.Response) {
	if d.lastAck == nil || res.CSeq().SeqNo != d.lastAck.CSeq().SeqNo {
		return
	}
	if err := d.env.wire.ack(d.lastAck); err != nil {
		d.env.log.Debug().Str("call", d.id).Str("method", "ACK").Err(ErrTransport).Msg("ACK not sent again")
	}
}
