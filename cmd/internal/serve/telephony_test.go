package serve

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/actors/session"
	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/sim"
)

// phoneConn is a fakeConn with the call-control faces of a SIP call.
type phoneConn struct {
	*fakeConn
	err     error
	mu      sync.Mutex
	targets []string
	digits  []string
}

func (c *phoneConn) Transfer(_ context.Context, target string) error {
	c.mu.Lock()
	c.targets = append(c.targets, target)
	c.mu.Unlock()
	return c.err
}

func (c *phoneConn) SendDTMF(_ context.Context, digits string) error {
	c.mu.Lock()
	c.digits = append(c.digits, digits)
	c.mu.Unlock()
	return c.err
}

var errRefused = fmt.Errorf("%w: busy (486)", conn.ErrTransferFailed)

// TestServeTelephony: the tools reach the live call's Conn; a successful
// transfer ends the call, a failed one leaves it live; a Conn without the
// faces answers ErrNotSupported; an unknown call ErrUnknownCall.
func TestServeTelephony(t *testing.T) {
	tests := []struct {
		name     string
		phone    bool
		err      error
		wantErr  error
		wantLive bool
	}{
		// Catches the session left running after the caller went elsewhere.
		{name: "transferred: the call ends", phone: true},
		// Catches a failed transfer that ends the call anyway.
		{name: "failed: the call goes on", phone: true, err: errRefused, wantErr: conn.ErrTransferFailed, wantLive: true},
		{name: "not a phone call", wantErr: conn.ErrNotSupported, wantLive: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s, _, stop := serving(t, Config{MaxCalls: 2}, &phoneAgent{simAgent{responses: []providertest.Response{{Text: "Hi."}}}})
				fc := newFakeConn("c1", sim.NewScenario("t").Silence(20*time.Second))
				var c Conn = fc
				pc := &phoneConn{fakeConn: fc, err: tt.err}
				if tt.phone {
					c = pc
				}
				s.Start(c)
				time.Sleep(2 * time.Second)
				err := s.TransferCall(context.Background(), "c1", "+33123456789")
				if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
					t.Errorf("TransferCall: %v, want %v", err, tt.wantErr)
				}
				dErr := s.SendDTMF(context.Background(), "c1", "12#")
				time.Sleep(2 * time.Second)
				if live := len(s.Live()) == 1; live != tt.wantLive {
					t.Errorf("live %v, want %v", live, tt.wantLive)
				}
				if tt.phone {
					if len(pc.targets) != 1 || pc.targets[0] != "+33123456789" {
						t.Errorf("targets %q", pc.targets)
					}
					if tt.wantLive && (dErr != nil && !errors.Is(dErr, errRefused) || len(pc.digits) != 1) {
						t.Errorf("SendDTMF: %v, digits %q", dErr, pc.digits)
					}
				} else if !errors.Is(dErr, conn.ErrNotSupported) {
					t.Errorf("SendDTMF: %v, want ErrNotSupported", dErr)
				}
				if err := s.TransferCall(context.Background(), "nope", "+33123456789"); !errors.Is(err, ErrUnknownCall) {
					t.Errorf("unknown call: %v", err)
				}
				fc.HangUp()
				time.Sleep(time.Second)
				if err := stop(); err != nil {
					t.Fatal(err)
				}
				_ = fc.Close()
			})
		})
	}
}

// phoneAgent is simAgent for a phoneConn.
type phoneAgent struct{ simAgent }

func (a *phoneAgent) Session(env CallEnv) (session.Config, error) {
	if pc, ok := env.Conn.(*phoneConn); ok {
		env.Conn = pc.fakeConn
	}
	return a.simAgent.Session(env)
}
