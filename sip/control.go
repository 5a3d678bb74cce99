package sip

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/sip/dtmf"
	"github.com/brisvox/brisvox/sip/signal"
)

// The call-control faces of a SIP call (the transfer_call and send_dtmf
// tools, through the serve layer).
var (
	_ conn.Transferrer = (*Call)(nil)
	_ conn.DTMFSender  = (*Call)(nil)
)

// Transfer hands the caller to target by a blind transfer (RFC 3515
// REFER, signal.Dialog.Refer): on the far end's sipfrag 2xx the call is
// hung up (BYE) and Transfer returns nil; a refusal, a failed sipfrag or
// no NOTIFY in time returns an error wrapping conn.ErrTransferFailed that
// says the stage and the code, and the call goes on. A number
// ("+33123456789") is referred as a tel: URI. The bridged transfer (a
// second leg, for trunks that refuse REFER) needs the trunk settings and
// is not done here yet.
func (c *Call) Transfer(ctx context.Context, target string) error {
	if target == "" || strings.ContainsAny(target, "\r\n\x00") {
		return fmt.Errorf("%w: a forbidden character in the target", conn.ErrTransferFailed)
	}
	uri := target
	if strings.HasPrefix(target, "+") {
		uri = "tel:" + target
	}
	if err := c.dialog.Refer(ctx, uri); err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		var re *signal.ReferError
		if errors.As(err, &re) {
			return fmt.Errorf("%w: %s", conn.ErrTransferFailed, referWords(re))
		}
		return fmt.Errorf("%w: %w", conn.ErrTransferFailed, err)
	}
	c.Hangup(conn.EndNormal, "transferred")
	return nil
}

// referWords says a failed REFER in fixed words the model can read out:
// "busy (486)", "no answer (408)", "no progress report in time".
func referWords(e *signal.ReferError) string {
	if e.Code == 0 {
		return "no progress report from the far end in time (" + e.Stage + ")"
	}
	what := "refused"
	switch {
	case e.Code == 486 || e.Code == 600:
		what = "busy"
	case e.Code == 408 || e.Code == 480 || e.Code == 487:
		what = "no answer"
	case e.Code == 603:
		what = "declined"
	case e.Code == 405 || e.Code == 501 || e.Code == 420:
		what = "transfer not supported by the far end"
	case e.Code >= 500:
		what = "unavailable"
	}
	return fmt.Sprintf("%s (%d)", what, e.Code)
}

// SendDTMF presses digits on the call: RFC 4733 events on the RTP stream
// when the far end negotiated telephone-event, else one SIP INFO per digit
// (application/dtmf-relay, RFC 6086), waiting for each answer. The digits
// are never logged nor put in an error.
func (c *Call) SendDTMF(ctx context.Context, digits string) error {
	if err := dtmf.ValidDigits(digits); err != nil {
		return err
	}
	cfg := dtmf.SendConfig{}
	if c.sess.CanSendEvents() {
		return c.sess.SendDTMF(ctx, digits, cfg)
	}
	for i := 0; i < len(digits); i++ {
		if i > 0 {
			// The far end hears an INFO as a press of Duration: wait it
			// and the gap, as the RTP path does.
			select {
			case <-time.After(dtmf.DefaultToneDuration + dtmf.DefaultGap):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		ct, body := dtmf.InfoBody(digits[i], dtmf.DefaultToneDuration)
		if err := c.dialog.SendInfo(ctx, ct, body); err != nil {
			return err
		}
	}
	return nil
}
