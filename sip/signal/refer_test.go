package signal

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/emiago/sipgo/sip"
)

// referRig is a confirmed dialog over a fake wire that answers REFER
// with referCode.
type referRig struct {
	w     *fakeWire
	tasks sync.WaitGroup
	d     *Dialog
	m     *fakeMedia
	cseq  int
}

func newReferRig(t *testing.T, cfg Config, referCode int) *referRig {
	r := &referRig{w: &fakeWire{}, m: &fakeMedia{}, cseq: 2}
	r.w.answer = func(req *sip.Request) (*sip.Response, error) {
		if req.Method == sip.REFER {
			return sip.NewResponseFromRequest(req, referCode, "", nil), nil
		}
		return sip.NewResponseFromRequest(req, 200, "OK", nil), nil
	}
	e := testEnv(cfg, r.w, &r.tasks)
	r.d = answeredDialog(t, e, msg(t, testSDP, inviteLines()...), r.m)
	ack := msg(t, "", inDialogLines(r.d, "ACK", 1)...)
	r.d.post(func() { r.d.onAck(ack) })
	return r
}

// notify delivers a NOTIFY of the far end and returns its answer codes.
func (r *referRig) notify(t *testing.T, event, state, frag string) []int {
	t.Helper()
	lines := inDialogLines(r.d, "NOTIFY", r.cseq, "Event: "+event, "Subscription-State: "+state)
	r.cseq++
	req := msg(t, frag, lines...)
	tx := &fakeTx{}
	r.d.post(func() { r.d.onRequest(req, tx) })
	synctest.Wait()
	return tx.codes()
}

// referID is the Event id of the REFER we sent.
func (r *referRig) referID(t *testing.T) string {
	t.Helper()
	for _, s := range r.w.sent("request") {
		if req := s.msg.(*sip.Request); req.Method == sip.REFER {
			return fmt.Sprint(req.CSeq().SeqNo)
		}
	}
	t.Fatal("no REFER sent")
	return ""
}

func (r *referRig) close(t *testing.T) {
	r.d.Hangup(nil)
	waitEnd(t, r.d)
	r.tasks.Wait()
}

func TestRefer(t *testing.T) {
	type note struct{ state, frag string }
	cases := []struct {
		name      string
		referCode int
		notes     []note
		wantErr   error
		wantCode  int
		wantStage string
		wantAt    time.Duration
	}{
		{name: "trying then ok: transferred", referCode: 202,
			notes: []note{{"active;expires=60", "SIP/2.0 100 Trying\r\n"}, {"terminated;reason=noresource", "SIP/2.0 200 OK\r\n"}}},
		{name: "trying then unavailable", referCode: 202,
			notes:   []note{{"active;expires=60", "SIP/2.0 100 Trying\r\n"}, {"terminated;reason=noresource", "SIP/2.0 503 Service Unavailable\r\n"}},
			wantErr: ErrReferFailed, wantCode: 503, wantStage: ReferStageNotify},
		{name: "busy", referCode: 202,
			notes:   []note{{"terminated", "SIP/2.0 486 Busy Here\r\n"}},
			wantErr: ErrReferFailed, wantCode: 486, wantStage: ReferStageNotify},
		{name: "terminated without a final", referCode: 202,
			notes:   []note{{"active", "SIP/2.0 100 Trying\r\n"}, {"terminated;reason=timeout", "SIP/2.0 180 Ringing\r\n"}},
			wantErr: ErrReferFailed, wantCode: 0, wantStage: ReferStageNotify},
		{name: "nothing after 202: timeout", referCode: 202,
			wantErr: ErrReferFailed, wantCode: 0, wantStage: ReferStageTimeout, wantAt: DefaultReferTimeout},
		{name: "progress only: timeout", referCode: 202, notes: []note{{"active", "SIP/2.0 100 Trying\r\n"}},
			wantErr: ErrReferFailed, wantCode: 0, wantStage: ReferStageTimeout, wantAt: DefaultReferTimeout},
		{name: "REFER not allowed", referCode: 405,
			wantErr: ErrReferFailed, wantCode: 405, wantStage: ReferStageRefer},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newReferRig(t, Config{}, tc.referCode)
				t0 := time.Now()
				done := make(chan error, 1)
				go func() { done <- r.d.Refer(context.Background(), "sip:+15550100@pbx.example;transport=tcp") }()
				synctest.Wait()
				id := r.referID(t)
				for _, n := range tc.notes {
					if got := r.notify(t, "refer;id="+id, n.state, n.frag); !slices.Equal(got, []int{200}) {
						t.Fatalf("NOTIFY answered %v", got)
					}
				}
				err := <-done
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Refer = %v, want %v", err, tc.wantErr)
				}
				if tc.wantErr != nil {
					var re *ReferError
					if !errors.As(err, &re) || re.Code != tc.wantCode || re.Stage != tc.wantStage {
						t.Fatalf("Refer = %#v, want code %d stage %s", err, tc.wantCode, tc.wantStage)
					}
				}
				if got := time.Since(t0); got != tc.wantAt {
					t.Fatalf("Refer returned after %v, want %v", got, tc.wantAt)
				}
				// The dialog goes on either way: the caller hangs up.
				if s := r.d.State(); s == StateTerminated {
					t.Fatalf("dialog ended by the transfer")
				}
				req := r.w.sent("request")[0].msg.(*sip.Request)
				if v, _ := header(req, "Refer-To", "r"); v != "<sip:+15550100@pbx.example;transport=tcp>" {
					t.Fatalf("Refer-To %q", v)
				}
				if v, _ := header(req, "Referred-By", "b"); v != "<sip:bot@127.0.0.1:5060>" {
					t.Fatalf("Referred-By %q", v)
				}
				r.close(t)
				if got := r.w.methods(); !slices.Equal(got, []string{"REFER", "BYE"}) {
					t.Fatalf("requests %v", got)
				}
			})
		})
	}
}

// TestReferNotifyBefore202: over UDP the first NOTIFY may overtake the
// 202; a final one is the outcome all the same.
func TestReferNotifyBefore202(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newReferRig(t, Config{}, 202)
		release := make(chan struct{})
		r.w.answer = func(req *sip.Request) (*sip.Response, error) {
			if req.Method == sip.REFER {
				<-release
				return sip.NewResponseFromRequest(req, 202, "Accepted", nil), nil
			}
			return sip.NewResponseFromRequest(req, 200, "OK", nil), nil
		}
		done := make(chan error, 1)
		go func() { done <- r.d.Refer(context.Background(), "tel:+15550100") }()
		synctest.Wait()
		if got := r.notify(t, "refer", "terminated", "SIP/2.0 200 OK"); !slices.Equal(got, []int{200}) {
			t.Fatalf("NOTIFY answered %v", got)
		}
		close(release)
		if err := <-done; err != nil {
			t.Fatalf("Refer = %v", err)
		}
		r.close(t)
	})
}

// TestNotifyWithoutRefer: a NOTIFY naming no subscription of ours gets
// 481 (RFC 6665 4.1.3), in and out of a pending REFER.
// Mutation: answering it 200 (or handing it to the pending REFER) fails.
func TestNotifyWithoutRefer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newReferRig(t, Config{}, 202)
		if got := r.notify(t, "refer;id=1", "active", "SIP/2.0 100 Trying"); !slices.Equal(got, []int{481}) {
			t.Fatalf("NOTIFY with no REFER answered %v", got)
		}
		done := make(chan error, 1)
		ctx, cancel := context.WithCancel(context.Background())
		go func() { done <- r.d.Refer(ctx, "sip:desk@pbx.example") }()
		synctest.Wait()
		if got := r.notify(t, "refer;id=999", "terminated", "SIP/2.0 200 OK"); !slices.Equal(got, []int{481}) {
			t.Fatalf("NOTIFY of another id answered %v", got)
		}
		if got := r.notify(t, "presence", "terminated", "SIP/2.0 200 OK"); !slices.Equal(got, []int{481}) {
			t.Fatalf("NOTIFY of another package answered %v", got)
		}
		// A second Refer while one is pending is refused.
		if err := r.d.Refer(context.Background(), "sip:other@pbx.example"); !errors.Is(err, ErrReferFailed) {
			t.Fatalf("second Refer = %v", err)
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled Refer = %v", err)
		}
		if got := r.d.env.stats.snapshot().Refers["notify_unknown"]; got != 3 {
			t.Fatalf("notify_unknown = %d, want 3", got)
		}
		r.close(t)
	})
}

func TestReferBadTarget(t *testing.T) {
	bad := []string{"", "http://x.example", "sip:a@b\r\nX: y", "sip:a@b\x00", "sip:a@b>;x", "tel:", "tel:abc xyz", "mailto:a@b", "sip:"}
	synctest.Test(t, func(t *testing.T) {
		r := newReferRig(t, Config{}, 202)
		for _, target := range bad {
			if err := r.d.Refer(context.Background(), target); !errors.Is(err, ErrBadTarget) {
				t.Errorf("Refer(%q) = %v, want ErrBadTarget", target, err)
			}
		}
		r.close(t)
		if got := r.w.methods(); !slices.Equal(got, []string{"BYE"}) {
			t.Fatalf("requests %v: a bad target was sent", got)
		}
	})
}

func TestSendInfo(t *testing.T) {
	for _, tc := range []struct {
		code    int
		wantErr error
	}{{200, nil}, {415, ErrInfoFailed}, {481, ErrInfoFailed}} {
		t.Run(fmt.Sprint(tc.code), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newReferRig(t, Config{}, 202)
				r.w.answer = func(req *sip.Request) (*sip.Response, error) {
					if req.Method == sip.INFO {
						return sip.NewResponseFromRequest(req, tc.code, "", nil), nil
					}
					return sip.NewResponseFromRequest(req, 200, "OK", nil), nil
				}
				err := r.d.SendInfo(context.Background(), "application/dtmf-relay", []byte("Signal=5\r\nDuration=100\r\n"))
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("SendInfo = %v, want %v", err, tc.wantErr)
				}
				info := r.w.sent("request")[0].msg.(*sip.Request)
				if info.Method != sip.INFO || string(info.Body()) != "Signal=5\r\nDuration=100\r\n" || contentType(info) != "application/dtmf-relay" {
					t.Fatalf("sent %s %q", info.Method, info.Body())
				}
				r.close(t)
			})
		})
	}
}

func TestReferTimeoutValidated(t *testing.T) {
	for _, tc := range []struct {
		d  time.Duration
		ok bool
	}{{0, true}, {time.Second, true}, {5 * time.Minute, true}, {-time.Second, false}, {5*time.Minute + 1, false}} {
		cfg := Config{Listen: []Listen{{Network: "udp", Addr: "127.0.0.1:0"}}, ReferTimeout: tc.d}
		if err := cfg.Validate(); (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrInvalidConfig)) {
			t.Errorf("ReferTimeout %v: %v", tc.d, err)
		}
	}
	if got := (&Config{}).withDefaults().ReferTimeout; got != DefaultReferTimeout {
		t.Errorf("default %v", got)
	}
}
