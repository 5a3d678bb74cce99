package sip

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/sip/dtmf"
	"github.com/brisvox/brisvox/sip/rtp"
	"github.com/brisvox/brisvox/sip/signal"
)

// The call-control faces of a SIP call (the transfer_call and send_dtmf
// tools, through the serve layer).
var (
	_ conn.Transferrer = (*Call)(nil)
	_ conn.DTMFSender  = (*Call)(nil)
)

// Transfer hands the caller to target the way the call's trunk wants
// (TrunkConfig.Transfer; a call that came in follows
// Config.TransferTrunk's, none: REFER).
//
// By REFER, a blind transfer (RFC 3515, signal.Dialog.Refer): on the far
// end's sipfrag 2xx the call is hung up (BYE) and Transfer returns nil; a
// refusal, a failed sipfrag or no NOTIFY in time returns an error
// wrapping conn.ErrTransferFailed that says the stage and the code, and
// the call goes on. A number ("+33123456789") is referred as a tel: URI.
//
// Bridged (bridged.go): target, a number, is dialled through the trunk
// and, once answered, the two calls' media are relayed; Transfer returns
// nil and the call is the bridge's (its ReadFrame ends, Close does not
// hang it up). A failed dial wraps conn.ErrTransferFailed in the same
// kind of words and the call goes on.
func (c *Call) Transfer(ctx context.Context, target string) error {
	if target == "" || strings.ContainsAny(target, "\r\n\x00") {
		return fmt.Errorf("%w: a forbidden character in the target", conn.ErrTransferFailed)
	}
	if trunk, t, ok := c.transferTrunk(); ok && t.Transfer == TransferBridge {
		return c.bridgeTo(ctx, trunk, target)
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

// SendDTMF presses digits on the call the way its trunk wants them
// (TrunkConfig.DTMF; a call that came in is DTMFAuto): auto sends RFC
// 4733 events on the RTP stream when the far end negotiated
// telephone-event, else one SIP INFO per digit (application/dtmf-relay,
// RFC 6086), waiting for each answer; rfc4733 sends events only, and
// without telephone-event it fails with an error wrapping
// conn.ErrNotSupported and rtp.ErrNoTelephoneEvent (nothing is sent);
// info always sends INFO. The digits are never logged nor put in an
// error.
func (c *Call) SendDTMF(ctx context.Context, digits string) error {
	if err := dtmf.ValidDigits(digits); err != nil {
		return err
	}
	mode := DTMFAuto
	if _, t, ok := c.Trunk(); ok && t.DTMF != "" {
		mode = t.DTMF
	}
	way, err := dtmfWay(mode, c.sess.CanSendEvents())
	if err != nil {
		return err
	}
	if way == dtmfEvents {
		return c.sess.SendDTMF(ctx, digits, dtmf.SendConfig{})
	}
	return c.sendInfo(ctx, digits)
}

// The two ways a key press goes out.
const (
	dtmfEvents = "rfc4733"
	dtmfINFO   = "info"
)

// dtmfWay picks how keys go out for a trunk's DTMF mode, given whether
// the far end negotiated telephone-event.
func dtmfWay(mode string, events bool) (string, error) {
	switch mode {
	case DTMFInfo:
		return dtmfINFO, nil
	case DTMFRFC4733:
		if !events {
			return "", fmt.Errorf("%w: %w: the trunk takes keys as RFC 4733 events only and the far end negotiated none",
				conn.ErrNotSupported, rtp.ErrNoTelephoneEvent)
		}
		return dtmfEvents, nil
	case DTMFAuto, "":
		if events {
			return dtmfEvents, nil
		}
		return dtmfINFO, nil
	}
	return "", fmt.Errorf("%w: unknown DTMF mode %q", ErrInvalidConfig, mode)
}

// sendInfo sends one INFO per digit, with the tone and the gap between
// them as the RTP path has.
func (c *Call) sendInfo(ctx context.Context, digits string) error {
	for i := 0; i < len(digits); i++ {
		if i > 0 {
			// The far end hears an INFO as a press of Duration: wait it
			// and the gap, as the RTP path does.
			t := time.NewTimer(dtmf.DefaultToneDuration + dtmf.DefaultGap)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
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
