// Package signal is the SIP user agent of our calls, on sipgo
// (signalling only: the SDP and the RTP are the media side's, behind
// Media): the server of an inbound call and the client of one we place
// (Server.Dial). It is where a trunk's INVITE becomes a dialog: the
// listeners (UDP, TCP, TLS), every request checked before any logic, the
// dialog table, the INVITE/100/180/200/ACK exchange, CANCEL, BYE from
// either side, re-INVITE and UPDATE, session timers, and our own 2xx
// retransmissions.
//
// Start returns once sipgo serves every listener (a UDP listener joins
// sipgo's connection pool in the goroutine that reads it, and until then
// a request from its port is not sent): a Request or Dial right after
// Start needs no wait.
//
// # A request's way in
//
// sipgo reads a datagram or a stream and calls the read filter first
// (Server.readFilter): the size bound and the integrator's ReadFilter
// (the trunk's allowlist and flood limits). A drop returns empty data and
// no error: an error would stop sipgo's UDP read loop for good. Then
// sipgo parses and matches its transactions, and our handler checks the
// request (mandatory headers, Max-Forwards, Require, sizes) before any
// dialog logic: a refusal is answered with its code, or dropped (counted)
// when the request is too broken to answer. A panic while handling one
// request is recovered, counted and answered 500; it ends at most the
// dialog it happened in.
//
// A CANCEL matching a pending INVITE is the one request sipgo answers
// itself (200 to the CANCEL, 487 to the INVITE) before our handler; we
// learn it from the transaction's OnCancel, end Application.Invite's ctx,
// and if the Application already returned a Media it gets
// Media.Ended(ErrCancelled).
//
// # A dialog
//
// New INVITEs are checked for session timers (422 below MinSE), digest
// credentials (Auth: 401), and the per-source limit (Limit), then get 100
// and the configured 180 or 183 with our tag, and go to
// Application.Invite in the handler's goroutine. Its Media and SDP make
// the 200; from then on the dialog's state belongs to one goroutine (the
// loop, dialog.go): ACK, in-dialog requests (matched by Call-ID and both
// tags, 481 otherwise), the timers, Hangup. Media's methods are called
// from that goroutine, in order.
//
// The 2xx is retransmitted by us at T1 doubling to T2 over UDP (RFC 3261
// 13.3.1.4); sipgo does not also do it: its retransmissions (0.5 s, then
// every 4 s) live in its DialogServerSession, which we do not use, and
// its server transaction only passes each 2xx we hand it to the
// transport once. Without the ACK in 64*T1 we send BYE (ErrAckTimeout).
// The ACK comes to our handler (a new branch) or, from a peer reusing
// the INVITE's branch, through the transaction's Acks; once it came the
// INVITE's transaction is released. A Hangup before the ACK waits for it
// (RFC 3261 15).
//
// Our requests in the dialog (BYE, refreshes, the ACK of a refresh
// re-INVITE) go to the remote target (the Contact, refreshed by their
// re-INVITE or UPDATE) through the Record-Route set, with our tag and a
// CSeq growing by one; over UDP they leave from our listener (sipgo would
// otherwise open a new socket when the Contact is not the source), on a
// stream over the connection the INVITE came on.
//
// Session timers (RFC 4028): on an inbound call the interval is the
// peer's Session-Expires capped at ours, the refresher the peer's choice
// when it supports timers, else us; on a call we place, the interval and
// refresher are the 200's (refresher=uac is us; none named: us; no
// Session-Expires: no timer). A dialog names its refresher in the roles
// of its first INVITE (DialogInfo.Refresher); a refresh transaction's
// refresher parameter names that transaction's roles and is turned into
// the dialog's. We refresh at half the interval (UPDATE when the peer's
// Allow has it, else a re-INVITE with our unchanged SDP), with
// refresher=uac (we stay the refresher, RFC 4028 7.4); when the peer
// refreshes, a missing refresh ends the call at the interval less
// min(32 s, interval/3) with BYE (ErrSessionExpired).
//
// re-INVITE and UPDATE: a new offer goes to Media.Reoffer (hold, resume,
// a new address are the media side's); an offerless re-INVITE gets our
// offer and the answer comes from the ACK. Glare gets 491 (a re-INVITE
// while ours or our unacknowledged 2xx is pending, an UPDATE offer over
// our open offer); a request in the early dialog gets 500 with
// Retry-After (RFC 3311 5.2), except BYE (200, the INVITE 487) and
// OPTIONS.
//
// # A call we place
//
// Server.Dial (dial.go) sends the INVITE from our listener of its
// transport (our Contact, a new Call-ID and From tag, Supported timer,
// Session-Expires), through the outbound proxy and pre-loaded Route set.
// A 401/407 is answered with digest credentials in a new INVITE (new
// branch, next CSeq), at most MaxAuthAttempts times: then DialAuthFailed.
// Each 18x goes to Outbound.Progress (with its SDP, nil when none), and
// one with a To tag makes an early dialog (dial_early.go: one per callee
// tag, at most 8, gone at a final response or the dial's end). The
// callee's requests in it are answered there, not 481: BYE 200 and the
// dial ends (CANCEL, DialRejected with code 0: RFC 3261 15 forbids the
// callee that BYE, gateways send it); UPDATE 200, or 491 with an offer
// (ours is still open: an unreliable 18x's SDP is no answer); OPTIONS and
// INFO 200 (no Media exists yet to take an INFO); REFER 403, NOTIFY 481,
// a re-INVITE 500 with Retry-After. The ring timeout or ctx's end sends
// CANCEL (after a provisional, RFC 3261 9.1) and ends the dial with
// DialNoAnswer or DialCancelled when the 487 comes (or 64*T1 later). The
// first 200 is acknowledged, its SDP goes to Outbound.Answered, and the
// dialog (route set the 200's Record-Route reversed, target its Contact)
// runs the same loop as an inbound one; Answered refusing the SDP gets
// ACK then BYE with Reason 488 and an error wrapping ErrBadAnswer. A 200
// racing our CANCEL, a fork's 200 and a late one get ACK and BYE; a
// retransmitted 200 gets its ACK again. Every end is a *DialError with a
// typed DialOutcome (counted in Stats.Dials).
//
// # Privacy
//
// Logs carry our call id ("sip-" and 16 hex digits), the method and the
// error, and the error is only one of our sentinels (logCause): a
// cause's chain may quote the media side's or sipgo's texts. Never
// numbers, URIs, headers or bodies. sipgo's own logger goes to
// sip/validate's handler, which keeps none of its attributes (a few sipgo
// lines, such as its TCP reference-count warnings, go to slog's global
// default logger instead: the process should set that one).
//
// # Goroutines
//
// Each dialog has its loop, and a goroutine per request it sends (BYE,
// refreshes); sipgo runs each incoming request's handler in its own.
// Close stops new calls, ends every dialog with BYE, waits up to
// CloseGrace for the BYEs' responses, closes the listeners and sipgo, and
// waits for all of them.
package signal
