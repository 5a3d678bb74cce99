package conn_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/brisvox/brisvox/media/conn"
)

// TestReasonOf pins the end reason of each way a ReadFrame ends, however
// deeply the cause is wrapped. Mutation caught: a case of ReasonOf dropped
// or reordered so that ErrClosed alone wins (every call "hangup").
func TestReasonOf(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{conn.ErrClosed, conn.ReasonHangup},
		{fmt.Errorf("webrtc: %w", conn.ErrClosed), conn.ReasonHangup},
		{fmt.Errorf("%w: %w", conn.ErrClosed, conn.ErrVanished), conn.ReasonVanished},
		{fmt.Errorf("twilio: %w", fmt.Errorf("%w: %w", conn.ErrClosed, conn.ErrStoppedReading)), conn.ReasonStoppedReading},
		{fmt.Errorf("%w: %w", conn.ErrClosed, conn.ErrSilentInput), conn.ReasonSilentInput},
		{fmt.Errorf("%w: %w: bad UTF-8", conn.ErrClosed, conn.ErrProtocol), conn.ReasonProtocol},
		{errors.New("something else"), conn.ReasonHangup},
		{nil, conn.ReasonHangup},
	}
	for _, c := range cases {
		if got := conn.ReasonOf(c.err); got != c.want {
			t.Errorf("ReasonOf(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}

// TestRefusal pins what a client is told: the error text, the Retry-After
// seconds (rounded up, at least 1) and that an untyped error still becomes
// a typed refusal. Mutation caught: RetryAfterSeconds truncating (1.2 s ->
// 1) or returning 0 for a zero RetryAfter.
func TestRefusal(t *testing.T) {
	cases := []struct {
		r          conn.Refusal
		text       string
		retryAfter int
	}{
		{conn.Refusal{Cause: conn.RefusedFull, RetryAfter: time.Second}, "transport: call not admitted: full", 1},
		{conn.Refusal{Cause: conn.RefusedFull, Detail: "20 calls", RetryAfter: 1200 * time.Millisecond}, "transport: call not admitted: full (20 calls)", 2},
		{conn.Refusal{Cause: conn.RefusedDraining, RetryAfter: 30 * time.Second}, "transport: call not admitted: draining", 30},
		{conn.Refusal{Cause: conn.RefusedRateLimited}, "transport: call not admitted: rate_limited", 1},
	}
	for _, c := range cases {
		r := c.r
		if got := r.Error(); got != c.text {
			t.Errorf("Error() = %q, want %q", got, c.text)
		}
		if got := r.RetryAfterSeconds(); got != c.retryAfter {
			t.Errorf("%s: RetryAfterSeconds() = %d, want %d", c.text, got, c.retryAfter)
		}
		wrapped := fmt.Errorf("webrtc: offer: %w", &r)
		if !errors.Is(wrapped, conn.ErrRefused) {
			t.Errorf("%s: not an ErrRefused", c.text)
		}
		if got := conn.RefusalOf(wrapped); got != &r {
			t.Errorf("%s: RefusalOf lost the refusal in the chain: %+v", c.text, got)
		}
	}
	got := conn.RefusalOf(errors.New("port range exhausted"))
	if got.Cause != conn.RefusedFull || got.RetryAfterSeconds() != 1 {
		t.Errorf("RefusalOf(untyped) = %+v, want full, retry after 1 s", got)
	}
}

// TestEndKindNames pins the names the metrics and logs carry.
func TestEndKindNames(t *testing.T) {
	want := map[conn.EndKind]string{
		conn.EndNormal: "normal", conn.EndTryLater: "try_later",
		conn.EndInternal: "internal", conn.EndGoingAway: "going_away", conn.EndKind(99): "unknown",
	}
	for k, name := range want {
		if got := k.String(); got != name {
			t.Errorf("EndKind(%d) = %q, want %q", k, got, name)
		}
	}
}
