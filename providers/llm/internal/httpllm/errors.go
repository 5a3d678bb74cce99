package httpllm

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/brisvox/brisvox/providers"
)

// Failures of a request or a stream are the typed errors of package
// providers (Rejected, Timeout, Disconnected, Protocol); a request that
// cannot be built wraps the adapter's own sentinel
// (ClientConfig.InvalidConfig). The package adds no sentinel of its own.

// Cut is the error of a response body that ended, or failed, before the
// vendor's end of response: a Disconnected whose cause starts with detail
// ("stream ended before [DONE]"). A clean end of the body (io.EOF) is an
// io.ErrUnexpectedEOF here.
func Cut(detail string, err error) error {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return &providers.Disconnected{Cause: fmt.Errorf("%s: %w", detail, err)}
}

// endedBy is the error of a request that the caller or the stream itself
// ended: the caller's cancellation first, then the stream's own deadline,
// then a closed stream; nil when neither did.
func endedBy(parent, ctx context.Context) error {
	if parent.Err() != nil {
		return ctxErr(parent)
	}
	var t *providers.Timeout
	if cause := context.Cause(ctx); errors.As(cause, &t) {
		return t
	} else if errors.Is(cause, providers.ErrClosed) {
		return cause
	}
	return nil
}

// requestErr maps a failed request (before the body): what ended it, else
// a lost connection.
func requestErr(parent, ctx context.Context, err error) error {
	if e := endedBy(parent, ctx); e != nil {
		return e
	}
	return &providers.Disconnected{Cause: err}
}

// bodyErr maps a failed read of the body: a Protocol of the event reader
// as it is, then what ended the request, else a cut stream.
func bodyErr(parent, ctx context.Context, err error, cut string) error {
	var p *providers.Protocol
	if errors.As(err, &p) {
		return err
	}
	if e := endedBy(parent, ctx); e != nil {
		return e
	}
	return Cut(cut, err)
}

// ctxErr is the error of a done caller context: a deadline is a Timeout
// (still matching context.DeadlineExceeded), a cancellation is the
// context's error as it is.
func ctxErr(ctx context.Context) error {
	err := ctx.Err()
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", &providers.Timeout{Op: "caller's deadline"}, err)
	}
	return err
}
