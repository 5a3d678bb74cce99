package signal

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/emiago/sipgo/sip"
)

// SendInfo sends an INFO in the dialog (a DTMF relay body, RFC 6086) and
// waits for its final response: nil on 2xx, else an error wrapping
// ErrInfoFailed (or ErrTransport when nothing came back).
func (d *Dialog) SendInfo(ctx context.Context, contentType string, body []byte) error {
	if contentType == "" || strings.ContainsAny(contentType, "\r\n\x00") {
		return fmt.Errorf("%w: bad content type", ErrInfoFailed)
	}
	if len(body) > d.env.cfg.MaxBody {
		return fmt.Errorf("%w: body over MaxBody", ErrInfoFailed)
	}
	var req *sip.Request
	built := make(chan struct{})
	if !d.isStarted() || !d.post(func() {
		defer close(built)
		req = d.newRequest(sip.INFO)
		req.AppendHeader(d.contact)
		req.AppendHeader(sip.NewHeader("Content-Type", contentType))
		req.SetBody(body)
	}) {
		return fmt.Errorf("%w: the dialog is not confirmed or has ended", ErrInfoFailed)
	}
	select {
	case <-built:
	case <-d.done:
		return fmt.Errorf("%w: the dialog ended", ErrInfoFailed)
	}
	res, err := d.env.wire.request(ctx, req)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInfoFailed, err)
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return fmt.Errorf("%w: answered %s", ErrInfoFailed, strconv.Itoa(res.StatusCode))
	}
	return nil
}
