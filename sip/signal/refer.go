package signal

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/brisvox/brisvox/sip/sipfrag"
	"github.com/emiago/sipgo/sip"
)

// Stages of a ReferError.
const (
	ReferStageRefer   = "refer"   // the REFER got a final answer other than 2xx
	ReferStageNotify  = "notify"  // a NOTIFY reported a final failure, or ended the subscription without one
	ReferStageTimeout = "timeout" // no final NOTIFY within Config.ReferTimeout
)

// ReferError is a blind transfer that did not happen; the dialog goes on.
type ReferError struct {
	// Code is the REFER's final status or the sipfrag's, 0 for a timeout
	// or a subscription ended without a final status.
	Code int
	// Stage is ReferStageRefer, ReferStageNotify or ReferStageTimeout.
	Stage string
}

// Error says the stage and the code in fixed words.
func (e *ReferError) Error() string {
	return "signal: transfer failed at " + e.Stage + " with " + strconv.Itoa(e.Code)
}

// Unwrap is ErrReferFailed.
func (e *ReferError) Unwrap() error { return ErrReferFailed }

var _ error = (*ReferError)(nil)

// referState is the implicit subscription of one REFER of ours (RFC 3515
// 2.4.4), owned by the dialog's loop.
type referState struct {
	id    uint32 // the REFER's CSeq, the Event id
	final chan error
	done  bool // a final status was reported; later NOTIFYs are answered 200
}

// finish reports the outcome once.
func (r *referState) finish(err error) {
	if r.done {
		return
	}
	r.done = true
	r.final <- err
}

// checkTarget refuses a transfer target that is not a sip:, sips: or tel:
// URI, or that could break out of its header.
func checkTarget(target string) error {
	if target == "" || len(target) > 1024 || strings.ContainsAny(target, "\r\n\x00<>\" ,") {
		return fmt.Errorf("%w: empty, too long or holding a forbidden character", ErrBadTarget)
	}
	lower := strings.ToLower(target)
	switch {
	case strings.HasPrefix(lower, "sip:"), strings.HasPrefix(lower, "sips:"):
		var u sip.Uri
		if err := sip.ParseUri(target, &u); err != nil || u.Host == "" {
			return fmt.Errorf("%w: not a SIP URI", ErrBadTarget)
		}
	case strings.HasPrefix(lower, "tel:"):
		num := target[len("tel:"):]
		if i := strings.IndexByte(num, ';'); i >= 0 {
			num = num[:i]
		}
		if strings.Trim(num, "+0123456789-.()*#abcdefABCDEF") != "" || strings.Trim(num, "+-.()") == "" {
			return fmt.Errorf("%w: not a telephone number", ErrBadTarget)
		}
	default:
		return fmt.Errorf("%w: not a sip:, sips: or tel: URI", ErrBadTarget)
	}
	return nil
}

// Refer asks the far end to call target (RFC 3515 blind transfer) and
// waits for the outcome: the REFER answered 202, then NOTIFYs carrying
// message/sipfrag. A sipfrag 2xx is success (Refer returns nil; the
// caller then hangs up with Hangup). A non-2xx to the REFER, a final
// non-2xx sipfrag, a subscription ended without a final status or no
// final NOTIFY within Config.ReferTimeout return a *ReferError wrapping
// ErrReferFailed; the dialog goes on. One Refer at a time per dialog.
func (d *Dialog) Refer(ctx context.Context, target string) error {
	if err := checkTarget(target); err != nil {
		return err
	}
	st := &referState{final: make(chan error, 1)}
	var (
		req  *sip.Request
		busy bool
	)
	built := make(chan struct{})
	if !d.isStarted() || !d.post(func() {
		defer close(built)
		if d.refer != nil && !d.refer.done {
			busy = true
			return
		}
		req = d.newRequest(sip.REFER)
		req.AppendHeader(d.contact)
		req.AppendHeader(sip.NewHeader("Refer-To", "<"+target+">"))
		req.AppendHeader(sip.NewHeader("Referred-By", "<"+d.local.Address.String()+">"))
		st.id = req.CSeq().SeqNo
		d.refer = st
	}) {
		return fmt.Errorf("%w: the dialog is not confirmed or has ended", ErrReferFailed)
	}
	select {
	case <-built:
	case <-d.done:
		return fmt.Errorf("%w: the dialog ended", ErrReferFailed)
	}
	if busy {
		return fmt.Errorf("%w: a transfer is already pending", ErrReferFailed)
	}
	d.env.stats.refer("sent")
	defer d.post(func() {
		if d.refer == st {
			st.done = true
		}
	})

	timer := time.NewTimer(d.env.cfg.ReferTimeout)
	defer timer.Stop()
	rctx, cancel := context.WithCancel(ctx)
	type result struct {
		res *sip.Response
		err error
	}
	answered := make(chan result, 1)
	go func() {
		res, err := d.env.wire.request(rctx, req)
		answered <- result{res, err}
	}()
	defer func() {
		cancel()
		<-answered
	}()
	wait := answered
	for {
		select {
		case r := <-wait:
			answered <- r // for the deferred wait
			if r.err != nil {
				d.env.stats.refer("failed")
				return fmt.Errorf("%w: %w", ErrReferFailed, r.err)
			}
			if c := r.res.StatusCode; c < 200 || c > 299 {
				d.env.stats.refer("refused")
				return &ReferError{Code: c, Stage: ReferStageRefer}
			}
			wait = nil
		case err := <-st.final:
			if err == nil {
				d.env.stats.refer("succeeded")
			} else {
				d.env.stats.refer("failed")
			}
			return err
		case <-timer.C:
			d.env.stats.refer("timeout")
			return &ReferError{Code: 0, Stage: ReferStageTimeout}
		case <-ctx.Done():
			return fmt.Errorf("%w: %w", ErrReferFailed, ctx.Err())
		case <-d.done:
			return fmt.Errorf("%w: the dialog ended", ErrReferFailed)
		}
	}
}

// onNotify takes a NOTIFY in the dialog: the progress of our REFER
// (RFC 3515 2.4.5), else 481 (RFC 6665 4.1.3: no such subscription).
func (d *Dialog) onNotify(req *sip.Request, tx serverTx) {
	st := d.refer
	event, _ := header(req, "Event", "o")
	pkg, params, _ := strings.Cut(strings.TrimSpace(event), ";")
	if st == nil || !strings.EqualFold(strings.TrimSpace(pkg), "refer") {
		d.env.stats.refer("notify_unknown")
		d.reply(tx, req, 481, "", nil)
		return
	}
	if id, ok := eventID(params); ok && id != strconv.FormatUint(uint64(st.id), 10) {
		d.env.stats.refer("notify_unknown")
		d.reply(tx, req, 481, "", nil)
		return
	}
	state, _ := header(req, "Subscription-State", "")
	terminated := strings.EqualFold(strings.TrimSpace(strings.SplitN(state, ";", 2)[0]), "terminated")
	status, err := sipfrag.Parse(req.Body())
	if err != nil && !terminated {
		d.reply(tx, req, 400, "", nil)
		return
	}
	d.reply(tx, req, 200, "OK", nil)
	if terminated {
		d.refer = nil
	}
	switch {
	case err != nil || !status.Final():
		if err == nil {
			d.env.stats.refer("progress")
		}
		if terminated {
			st.finish(&ReferError{Code: 0, Stage: ReferStageNotify})
		}
	case status.Success():
		st.finish(nil)
	default:
		st.finish(&ReferError{Code: status.Code, Stage: ReferStageNotify})
	}
}

// eventID is the id parameter of an Event header's parameters.
func eventID(params string) (string, bool) {
	for p := range strings.SplitSeq(params, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		if strings.EqualFold(k, "id") {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}
