package signal

import "errors"

// Sentinel errors of the package, wrapped with detail as
// fmt.Errorf("%w: detail", ErrX). The ones marked "cause" are what
// Media.Ended receives (errors.Is tells them apart).
var (
	// ErrInvalidConfig marks a bad Config.
	ErrInvalidConfig = errors.New("signal: invalid config")
	// ErrRemoteBye (cause): the peer sent BYE.
	ErrRemoteBye = errors.New("signal: remote hangup")
	// ErrCancelled (cause): the peer sent CANCEL before the answer; the
	// INVITE was answered 487.
	ErrCancelled = errors.New("signal: cancelled before answer")
	// ErrAckTimeout (cause): no ACK for our 2xx within 64*T1; we sent BYE.
	ErrAckTimeout = errors.New("signal: no ACK for the 2xx")
	// ErrSessionExpired (cause): the session timer ran out (RFC 4028) or a
	// refresh we sent failed with 408 or 481; we sent BYE.
	ErrSessionExpired = errors.New("signal: session expired")
	// ErrLocalHangup (cause): Dialog.Hangup was called; we sent BYE. It
	// wraps the reason given.
	ErrLocalHangup = errors.New("signal: local hangup")
	// ErrNoAnswerInAck (cause): our offer went in a 2xx (late offer or an
	// offerless re-INVITE) and the ACK carried no answer; we sent BYE.
	ErrNoAnswerInAck = errors.New("signal: no answer in the ACK")
	// ErrBadAnswer (cause): Media.Answer refused the answer in the ACK;
	// we sent BYE.
	ErrBadAnswer = errors.New("signal: answer in the ACK refused")
	// ErrServerClosed (cause): Server.Close ended the dialog (with BYE);
	// also returned by Start after Close.
	ErrServerClosed = errors.New("signal: server closed")
	// ErrTransport (cause): a request of ours in the dialog could not be
	// sent or got no response (transport error, Timer F).
	ErrTransport = errors.New("signal: transport error")
	// ErrPanic (cause): handling a request of this dialog panicked; the
	// panic was recovered and the dialog ended.
	ErrPanic = errors.New("signal: panic while handling a request")
	// ErrBadHeader: a Session-Expires or Min-SE value does not parse.
	ErrBadHeader = errors.New("signal: bad header value")
	// ErrReferFailed: Dialog.Refer did not transfer the call (a
	// *ReferError says where, or the wrapped error why); the dialog goes
	// on.
	ErrReferFailed = errors.New("signal: transfer failed")
	// ErrBadTarget: a transfer target is not a sip:, sips: or tel: URI,
	// or holds CR, LF or NUL; nothing was sent.
	ErrBadTarget = errors.New("signal: bad transfer target")
	// ErrInfoFailed: Dialog.SendInfo got a final answer other than 2xx,
	// or the dialog is not there to send it.
	ErrInfoFailed = errors.New("signal: INFO failed")
	// ErrRequest: Server.Request could not send its request or got no
	// final response.
	ErrRequest = errors.New("signal: request failed")
	// ErrListen: a listener could not be opened.
	ErrListen = errors.New("signal: listen")
	// ErrDialFailed: a Dial ended without a call (*DialError says why).
	ErrDialFailed = errors.New("signal: dial failed")
	// ErrInvalidDial: an Outbound we cannot send (a bad URI, CR/LF/NUL,
	// no offer, no listener of its transport).
	ErrInvalidDial = errors.New("signal: invalid outbound call")
	// errStreamDropped closes a stream connection whose read the filter
	// dropped.
	errStreamDropped = errors.New("signal: stream read dropped by the filter")
)

// errNoMedia: Application.Invite returned no Media or no SDP and no
// error (answered 500).
var errNoMedia = errors.New("signal: no media or no SDP from the Application")

// causes are the sentinels a log line may name.
var causes = []error{
	ErrRemoteBye, ErrCancelled, ErrAckTimeout, ErrSessionExpired, ErrLocalHangup,
	ErrNoAnswerInAck, ErrBadAnswer, ErrServerClosed, ErrTransport, ErrPanic, errNoMedia,
}

// errOther names, in a log, a cause that is none of ours (the
// Application's error, whose text may quote what the peer sent).
var errOther = errors.New("signal: other cause")

// logCause is the sentinel of cause for a log line: the causes' chains
// may hold the media side's or sipgo's texts, which can quote the peer's
// SDP or URIs; the log gets only our fixed words.
func logCause(cause error) error {
	for _, c := range causes {
		if errors.Is(cause, c) {
			return c
		}
	}
	var r *Refusal
	if errors.As(cause, &r) {
		return r
	}
	return errOther
}
