package httpllm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/brisvox/brisvox/providers"
)

// TestErrorMapping: which error a failed request or body read becomes,
// by what ended it. The caller's context comes first, then the stream's
// own cause, then the failure itself.
// Mutations seen failing: the stream's cause checked before the caller's
// ("caller cancelled during a timeout" returns the Timeout); io.EOF kept
// in a cut (not an ErrUnexpectedEOF); a Protocol of the reader mapped to
// a Disconnected.
func TestErrorMapping(t *testing.T) {
	errNet := errors.New("connection reset")
	timeout := &providers.Timeout{Op: "event gap"}
	closed := fmt.Errorf("%w: response released", providers.ErrClosed)
	protocol := &providers.Protocol{Detail: "line too long"}
	cancelled := func() context.Context {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx
	}
	expired := func() context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), -1)
		defer cancel()
		return ctx
	}
	withCause := func(cause error) context.Context {
		ctx, cancel := context.WithCancelCause(context.Background())
		t.Cleanup(func() { cancel(nil) })
		if cause != nil {
			cancel(cause)
		}
		return ctx
	}
	isTimeout := func(op string) func(error) bool {
		return func(err error) bool {
			var to *providers.Timeout
			return errors.As(err, &to) && to.Op == op
		}
	}
	cases := []struct {
		name      string
		parent    context.Context
		ctx       context.Context
		err       error
		request   func(error) bool // requestErr
		body      func(error) bool // bodyErr
		bodyMatch string           // bodyErr's text, when set
	}{
		{"caller cancelled", cancelled(), withCause(nil), errNet,
			func(err error) bool { return errors.Is(err, context.Canceled) && !errors.Is(err, providers.ErrTimeout) },
			func(err error) bool { return errors.Is(err, context.Canceled) }, ""},
		{"caller cancelled during a timeout", cancelled(), withCause(timeout), errNet,
			func(err error) bool { return errors.Is(err, context.Canceled) },
			func(err error) bool { return errors.Is(err, context.Canceled) }, ""},
		{"caller's deadline", expired(), withCause(nil), errNet,
			func(err error) bool {
				return isTimeout("caller's deadline")(err) && errors.Is(err, context.DeadlineExceeded)
			},
			func(err error) bool {
				return isTimeout("caller's deadline")(err) && errors.Is(err, context.DeadlineExceeded)
			}, ""},
		{"stream's deadline", context.Background(), withCause(timeout), errNet,
			isTimeout("event gap"), isTimeout("event gap"), ""},
		{"stream closed", context.Background(), withCause(closed), errNet,
			func(err error) bool { return errors.Is(err, providers.ErrClosed) },
			func(err error) bool { return errors.Is(err, providers.ErrClosed) }, ""},
		{"lost connection", context.Background(), withCause(nil), errNet,
			func(err error) bool { return errors.Is(err, providers.ErrDisconnected) && errors.Is(err, errNet) },
			func(err error) bool { return errors.Is(err, providers.ErrDisconnected) && errors.Is(err, errNet) },
			"provider disconnected: cut here: connection reset"},
		{"body ended", context.Background(), withCause(nil), io.EOF,
			func(err error) bool { return errors.Is(err, providers.ErrDisconnected) },
			func(err error) bool { return errors.Is(err, io.ErrUnexpectedEOF) }, ""},
		{"protocol", context.Background(), withCause(nil), protocol,
			func(err error) bool { return errors.Is(err, providers.ErrDisconnected) },
			func(err error) bool { return err == protocol }, ""},
		{"protocol after the caller cancelled", cancelled(), withCause(nil), protocol,
			func(err error) bool { return errors.Is(err, context.Canceled) },
			func(err error) bool { return err == protocol }, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := requestErr(c.parent, c.ctx, c.err); !c.request(err) {
				t.Errorf("requestErr: %v", err)
			}
			err := bodyErr(c.parent, c.ctx, c.err, "cut here")
			if !c.body(err) {
				t.Errorf("bodyErr: %v", err)
			}
			if c.bodyMatch != "" && err.Error() != c.bodyMatch {
				t.Errorf("bodyErr %q, want %q", err.Error(), c.bodyMatch)
			}
		})
	}
}
