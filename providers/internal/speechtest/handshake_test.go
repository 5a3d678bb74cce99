package speechtest_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/speechtest"
	"github.com/brisvox/brisvox/providers/internal/wsmock"
	"github.com/brisvox/brisvox/providers/providertest"
)

// retryable wraps an error and says whether a retry helps, whatever the
// error it wraps says: providers.Retryable asks it first.
type retryable struct {
	error
	retry bool
}

func (r retryable) Retryable() bool { return r.retry }
func (r retryable) Unwrap() error   { return r.error }

// Mutations caught: the status or the detail not compared, a refusal
// that is not a Rejected let through, retryability not checked (either
// way), the fault not queued as a refusal with the body.
func TestCheckRefused(t *testing.T) {
	const body = `{"code":"bad_key"}`
	cases := []struct {
		name   string
		status int
		err    error
		want   string
		fatal  bool
	}{
		{"kept", 429, &providers.Rejected{Status: 429, Detail: "bad_key"}, "", false},
		{"401 kept", 401, &providers.Rejected{Status: 401, Detail: "bad_key"}, "", false},
		{"status lost", 429, &providers.Rejected{Detail: "bad_key"}, "want status 429, detail bad_key", false},
		{"detail lost", 429, &providers.Rejected{Status: 429}, "want status 429, detail bad_key", false},
		{"not a Rejected", 429, &providers.Protocol{Detail: "x"}, "is not a *providers.Rejected", true},
		{"401 retryable", 401, retryable{&providers.Rejected{Status: 401, Detail: "bad_key"}, true}, "retryable true for 401", false},
		{"503 not retryable", 503, retryable{&providers.Rejected{Status: 503, Detail: "bad_key"}, false}, "retryable false for 503", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var faults []wsmock.Fault
			inject := func(f wsmock.Fault) { faults = append(faults, f) }
			connect := func(context.Context) (providers.TTSSession, error) { return nil, tc.err }
			r := run(t, func(tb testing.TB) { speechtest.CheckRefused(tb, inject, connect, tc.status, body, "bad_key") })
			r.want(t, tc.want, tc.fatal)
			if want := (wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultReject, Status: tc.status}, RefuseBody: body}); len(faults) != 1 || faults[0] != want {
				t.Errorf("injected %+v, want %+v", faults, want)
			}
		})
	}
}

// fakeSession records its Close.
type fakeSession struct{ closed bool }

func (s *fakeSession) Close() error { s.closed = true; return nil }

// fakeDialer is an adapter's Connect over a mock's faults: a handshake
// stalled for longer than timeout (or for good) fails with a Timeout of
// op after timeout; a shorter stall only slows the connect.
type fakeDialer struct {
	timeout time.Duration
	op      string
	faults  []wsmock.Fault
	last    *fakeSession
}

func (d *fakeDialer) inject(f wsmock.Fault) { d.faults = append(d.faults, f) }

func (d *fakeDialer) connect(context.Context) (*fakeSession, error) {
	var f wsmock.Fault
	if len(d.faults) > 0 {
		f, d.faults = d.faults[0], d.faults[1:]
	}
	if f.Kind == providertest.FaultConnectStall && (f.Duration == 0 || f.Duration >= d.timeout) {
		time.Sleep(d.timeout)
		return nil, &providers.Timeout{Op: d.op}
	}
	time.Sleep(f.Duration)
	d.last = &fakeSession{}
	return d.last, nil
}

// Mutations caught: the time to the Timeout not compared with the
// deadline (a hard-coded or missing deadline passes), the op not checked,
// the slow connect not made or its failure let through, its session left
// open.
func TestCheckConnectDeadline(t *testing.T) {
	cases := []struct {
		name    string
		timeout time.Duration
		op      string
		want    string
		fatal   bool
	}{
		{"the deadline", 2 * time.Second, "connect", "", false},
		{"a longer one", 3 * time.Second, "connect", "timed out after 3s, want 2s", false},
		{"another op", 2 * time.Second, "reply", `op "reply"`, false},
		{"shorter than the slow connect", 900 * time.Millisecond, "connect", "slow connect", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				d := &fakeDialer{timeout: tc.timeout, op: tc.op}
				r := run(t, func(tb testing.TB) { speechtest.CheckConnectDeadline(tb, d.inject, d.connect, 2*time.Second) })
				r.want(t, tc.want, tc.fatal)
				if !tc.fatal && (d.last == nil || !d.last.closed) {
					t.Error("the slow connect's session was not closed")
				}
			})
		})
	}
}

// fakeWarm is an adapter whose Warm dials a connection that the next
// Connect takes (unless it forgets it) and whose Connect runs the
// websocket handshake; a Warm that handshakes runs one too.
type fakeWarm struct {
	forget, handshake bool
	fail              error
	kept              bool
	dials, hands      int
}

func (a *fakeWarm) warm(context.Context) error {
	if a.fail != nil {
		return a.fail
	}
	if !a.kept {
		a.dials++
		a.kept = !a.forget
		if a.handshake {
			a.hands++
		}
	}
	return nil
}

func (a *fakeWarm) connect(context.Context) (*fakeSession, error) {
	if !a.kept {
		a.dials++
	}
	a.kept = false
	a.hands++
	return &fakeSession{}, nil
}

// Mutations caught: the dials not counted (a Warm that leaves nothing for
// Connect passes), the handshakes not counted (a Warm that runs its own
// handshake passes), a Warm error let through, the session not returned
// or closed before the end of the test.
func TestCheckWarm(t *testing.T) {
	cases := []struct {
		name  string
		a     *fakeWarm
		want  string
		fatal bool
	}{
		{"kept", &fakeWarm{}, "", false},
		{"forgotten", &fakeWarm{forget: true}, "3 dials for two Warms and a Connect, want 1", false},
		{"handshaking", &fakeWarm{handshake: true}, "2 handshakes", false},
		{"failed", &fakeWarm{fail: errBoom}, "boom", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var s *fakeSession
			dials := func() int { return tc.a.dials }
			hands := func() int { return tc.a.hands }
			r := run(t, func(tb testing.TB) { s = speechtest.CheckWarm(tb, tc.a.warm, tc.a.connect, dials, hands) })
			r.want(t, tc.want, tc.fatal)
			if !tc.fatal && (s == nil || s.closed) {
				t.Errorf("returned %+v, want the open session", s)
			}
		})
	}
}
