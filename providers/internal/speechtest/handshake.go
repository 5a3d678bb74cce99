package speechtest

import (
	"context"
	"testing"
	"time"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/wsmock"
	"github.com/brisvox/brisvox/providers/providertest"
)

// CheckRefused checks that a refused handshake keeps what the service
// said: with a refusal of status and body queued by inject (a mock's
// Inject) for the next handshake, connect (the adapter's Connect) fails
// with a *providers.Rejected of that status whose Detail is detail (the
// service's code in body), retryable unless the status is 401.
func CheckRefused[S any](t testing.TB, inject func(wsmock.Fault), connect func(context.Context) (S, error), status int, body, detail string) {
	t.Helper()
	inject(wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultReject, Status: status}, RefuseBody: body})
	_, err := connect(context.Background())
	r := AsType[*providers.Rejected](t, err)
	if r.Status != status || r.Detail != detail {
		t.Errorf("got %+v, want status %d, detail %s", r, status, detail)
	}
	if providers.Retryable(err) != (status != 401) {
		t.Errorf("retryable %v for %d", providers.Retryable(err), status)
	}
}

// CheckConnectDeadline checks the connect deadline: with a handshake that
// stalls for good queued by inject, connect fails with a
// *providers.Timeout of Op "connect" exactly deadline after it began
// (virtual time: it must run inside a bubble); with one slowed by half the
// deadline, it connects.
func CheckConnectDeadline[S interface{ Close() error }](t testing.TB, inject func(wsmock.Fault), connect func(context.Context) (S, error), deadline time.Duration) {
	t.Helper()
	inject(wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultConnectStall}})
	start := time.Now()
	_, err := connect(context.Background())
	if tm := AsType[*providers.Timeout](t, err); tm.Op != "connect" {
		t.Errorf("op %q", tm.Op)
	}
	if took := time.Since(start); took != deadline {
		t.Errorf("timed out after %v, want %v", took, deadline)
	}
	// A slow connect inside the deadline succeeds.
	inject(wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultConnectStall, Duration: deadline / 2}})
	s, err := connect(context.Background())
	if err != nil {
		t.Fatalf("slow connect: %v", err)
	}
	_ = s.Close()
}

// CheckWarm checks that Warm leaves its connection for Connect: after two
// Warms (warm, an adapter's Warm) and a Connect, the adapter dialed once
// (dials, a Dials' Count) and the mock counted one websocket handshake
// (handshakes, a mock's Handshakes): the Connect's, over the connection of
// the first Warm. It returns the session, closed at the end of the test.
func CheckWarm[S interface{ Close() error }](t testing.TB, warm func(context.Context) error, connect func(context.Context) (S, error), dials, handshakes func() int) S {
	t.Helper()
	for range 2 {
		if err := warm(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	s := Connect(t, connect)
	if n := dials(); n != 1 {
		t.Errorf("%d dials for two Warms and a Connect, want 1", n)
	}
	if n := handshakes(); n != 1 {
		t.Errorf("%d handshakes", n)
	}
	return s
}
