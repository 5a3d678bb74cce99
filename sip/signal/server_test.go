package signal

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/emiago/sipgo/sip"
	"github.com/rs/zerolog"
)

// funcApp is an Application from a function.
type funcApp func(ctx context.Context, inv *Invite) (Media, []byte, error)

func (f funcApp) Invite(ctx context.Context, inv *Invite) (Media, []byte, error) { return f(ctx, inv) }

// answerWith answers every INVITE with m and testSDP.
func answerWith(m Media) funcApp {
	return func(context.Context, *Invite) (Media, []byte, error) { return m, []byte(testSDP), nil }
}

// newTestServer is a Server (never started) whose dialogs use a fake wire.
func newTestServer(t *testing.T, cfg Config, app Application, opts ...Option) (*Server, *fakeWire) {
	t.Helper()
	if len(cfg.Listen) == 0 {
		cfg.Listen = []Listen{{Network: "udp", Addr: "127.0.0.1:0"}}
	}
	cfg.Log = zerolog.Nop()
	s, err := New(cfg, app, append([]Option{WithSeed(1)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	w := &fakeWire{}
	s.env.wire = w
	return s, w
}

func hdr(m sip.Message, name string) string {
	v, _ := header(m, name, "")
	return v
}

type fakeAuth struct{}

func (fakeAuth) Challenge(error) string { return `Digest realm="brisvox", nonce="n1"` }
func (fakeAuth) Verify(method, uri, authz string) error {
	if strings.Contains(authz, `response="good"`) {
		return nil
	}
	return errors.New("bad credentials")
}

// TestRequestsOutsideDialogs pins the answer to each kind of request that
// has no dialog, and to each INVITE refused before Application.Invite.
// Mutations caught: 100rel taken as supported (the INVITE gets 200), the
// 422 check removed.
func TestRequestsOutsideDialogs(t *testing.T) {
	limitBusy := WithLimit(func(netip.AddrPort) (func(), error) { return nil, &Refusal{Code: 486} })
	cases := []struct {
		name     string
		body     string
		lines    []string
		opts     []Option
		cfg      Config
		app      Application
		want     []int
		wantHdrs map[string]string // header: substring
	}{
		{name: "options", lines: []string{"OPTIONS sip:bot@127.0.0.1 SIP/2.0", "Via: SIP/2.0/UDP 127.0.0.1:5070;branch=z9hG4bK-o1",
			"From: <sip:lb@127.0.0.1>;tag=lb1", "To: <sip:bot@127.0.0.1>", "Call-ID: o1", "CSeq: 1 OPTIONS", "Max-Forwards: 70"},
			want: []int{200}, wantHdrs: map[string]string{"Allow": "UPDATE", "Accept": "application/sdp", "Supported": "timer"}},
		{name: "register", lines: outOfDialog("REGISTER"), want: []int{405}, wantHdrs: map[string]string{"Allow": "INVITE"}},
		{name: "message", lines: outOfDialog("MESSAGE"), want: []int{405}},
		{name: "subscribe", lines: outOfDialog("SUBSCRIBE"), want: []int{405}},
		{name: "notify", lines: outOfDialog("NOTIFY"), want: []int{481}}, // RFC 6665 4.1.3: no such subscription
		{name: "publish", lines: outOfDialog("PUBLISH"), want: []int{405}},
		{name: "unknown method", lines: outOfDialog("FROB"), want: []int{501}},
		{name: "refer", lines: outOfDialog("REFER"), want: []int{481}}, // no dialog to transfer
		{name: "bye without a dialog", lines: outOfDialog("BYE"), want: []int{481}},
		{name: "cancel without an invite", lines: outOfDialog("CANCEL"), want: []int{481}},
		{name: "require 100rel", body: testSDP, lines: inviteLines("Require: 100rel"), want: []int{420},
			wantHdrs: map[string]string{"Unsupported": "100rel"}},
		{name: "session-expires below min-se", body: testSDP, lines: inviteLines("Session-Expires: 60"), want: []int{422},
			wantHdrs: map[string]string{"Min-SE": "90"}},
		{name: "bad session-expires", body: testSDP, lines: inviteLines("Session-Expires: soon"), want: []int{400}},
		{name: "max-forwards 0", body: testSDP, lines: append(inviteLines()[:7], "Max-Forwards: 0"), want: []int{483}},
		{name: "no credentials", body: testSDP, lines: inviteLines(), opts: []Option{WithAuth(fakeAuth{})}, want: []int{401},
			wantHdrs: map[string]string{"WWW-Authenticate": "nonce"}},
		{name: "wrong credentials", body: testSDP, lines: inviteLines(`Authorization: Digest username="u", response="bad"`),
			opts: []Option{WithAuth(fakeAuth{})}, want: []int{401}},
		{name: "good credentials", body: testSDP, lines: inviteLines(`Authorization: Digest username="u", response="good"`),
			opts: []Option{WithAuth(fakeAuth{})}, want: []int{100, 180, 200}},
		{name: "limit", body: testSDP, lines: inviteLines(), opts: []Option{limitBusy}, want: []int{486}},
		{name: "admission refused", body: testSDP, lines: inviteLines(),
			app: funcApp(func(context.Context, *Invite) (Media, []byte, error) {
				return nil, nil, &Refusal{Code: 503, RetryAfter: 7}
			}), want: []int{100, 180, 503}, wantHdrs: map[string]string{"Retry-After": "7"}},
		{name: "application error", body: testSDP, lines: inviteLines(),
			app:  funcApp(func(context.Context, *Invite) (Media, []byte, error) { return nil, nil, errors.New("x") }),
			want: []int{100, 180, 500}},
		{name: "application panics", body: testSDP, lines: inviteLines(),
			app:  funcApp(func(context.Context, *Invite) (Media, []byte, error) { panic("boom") }),
			want: []int{100, 180, 500}},
		{name: "media without sdp", body: testSDP, lines: inviteLines(),
			app:  funcApp(func(context.Context, *Invite) (Media, []byte, error) { return &fakeMedia{}, nil, nil }),
			want: []int{100, 180, 500}},
		{name: "ringing 183", body: testSDP, lines: inviteLines(), cfg: Config{Ringing: "183"}, want: []int{100, 183, 200}},
		{name: "ringing none", body: testSDP, lines: inviteLines(), cfg: Config{Ringing: "none"}, want: []int{100, 200},
			wantHdrs: map[string]string{"Session-Expires": "1800;refresher=uas", "Contact": "127.0.0.1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := &fakeMedia{}
				app := tc.app
				if app == nil {
					app = answerWith(m)
				}
				s, _ := newTestServer(t, tc.cfg, app, tc.opts...)
				tx := &fakeTx{}
				req := msg(t, tc.body, tc.lines...)
				s.serveRequest(req, tx, tx)
				if got := tx.codes(); !slices.Equal(got, tc.want) {
					t.Fatalf("answered %v, want %v", got, tc.want)
				}
				for name, want := range tc.wantHdrs {
					if got := hdr(tx.last(), name); !strings.Contains(got, want) {
						t.Errorf("%s: %q, want it to hold %q", name, got, want)
					}
				}
				res := tx.last()
				if res.StatusCode >= 200 && res.StatusCode != 100 && req.Method == sip.INVITE {
					if tag, ok := res.To().Params.Get("tag"); !ok || tag == "" {
						t.Errorf("final response without a To tag")
					}
				}
				if tc.name == "application panics" && s.Stats().Panics != 1 {
					t.Errorf("panics %d, want 1", s.Stats().Panics)
				}
				s.Close()
			})
		})
	}
}

func outOfDialog(method string) []string {
	return []string{
		method + " sip:bot@127.0.0.1:5060 SIP/2.0",
		"Via: SIP/2.0/UDP 127.0.0.1:5070;branch=z9hG4bK-" + strings.ToLower(method),
		"From: <sip:caller@127.0.0.1:5070>;tag=caller1",
		"To: <sip:bot@127.0.0.1:5060>",
		"Call-ID: ood-1@test",
		"CSeq: 1 " + method,
		"Max-Forwards: 70",
	}
}

// blockingApp waits in Invite until its ctx ends or release is closed,
// then returns its Media.
type blockingApp struct {
	m       Media
	entered chan *Invite
	release chan struct{}
}

func (a *blockingApp) Invite(ctx context.Context, inv *Invite) (Media, []byte, error) {
	a.entered <- inv
	select {
	case <-ctx.Done():
	case <-a.release:
	}
	return a.m, []byte(testSDP), nil
}

// raceTx is a transaction where a CANCEL wins the race with our 200: the
// FSM has sent 487 and swallows the 200 (as sipgo's does).
type raceTx struct{ fakeTx }

func (tx *raceTx) Respond(res *sip.Response) error {
	if res.StatusCode == 200 {
		tx.mu.Lock()
		f := tx.onCancel
		tx.mu.Unlock()
		f(nil)
		return nil
	}
	return tx.fakeTx.Respond(res)
}

// TestBeforeTheAnswer pins the ends of a call that was never confirmed:
// CANCEL while the Application decides (its ctx ends; its Media, if it
// returns one, gets Ended(ErrCancelled) and no 200 goes), CANCEL racing
// the 200, BYE in the early dialog (200, then 487), Hangup before the
// answer (480), Close (503), the same INVITE on another branch (482).
// Mutations caught: ignoring the cancelled flag after Respond (the call
// lives on, with retransmissions of a 200 never sent), no 487 after an
// early BYE, Ended not called for a Media returned after the CANCEL, no
// merged-request check (the second INVITE reaches the Application, which
// blocks: the bubble deadlocks).
func TestBeforeTheAnswer(t *testing.T) {
	cases := []struct {
		name      string
		tx        func() inviteTx
		act       func(t *testing.T, s *Server, inv *Invite, tx inviteTx, release chan struct{})
		want      []int
		wantCause error
		wantBye   int
	}{
		{
			name: "cancel while deciding",
			act: func(t *testing.T, s *Server, inv *Invite, tx inviteTx, _ chan struct{}) {
				tx.(*fakeTx).onCancel(nil)
			},
			want: []int{100, 180}, wantCause: ErrCancelled,
		},
		{
			name: "cancel races the 200",
			tx:   func() inviteTx { return &raceTx{} },
			act: func(t *testing.T, s *Server, inv *Invite, tx inviteTx, release chan struct{}) {
				close(release)
			},
			want: []int{100, 180}, wantCause: ErrCancelled,
		},
		{
			name: "bye in the early dialog",
			act: func(t *testing.T, s *Server, inv *Invite, _ inviteTx, _ chan struct{}) {
				bye := msg(t, "", inDialogLines(inv.Dialog, "BYE", 2)...)
				btx := &fakeTx{}
				s.serveRequest(bye, btx, btx)
				if got := btx.codes(); !slices.Equal(got, []int{200}) {
					t.Errorf("early BYE answered %v", got)
				}
			},
			want: []int{100, 180, 487}, wantCause: ErrRemoteBye,
		},
		{
			name: "update in the early dialog",
			act: func(t *testing.T, s *Server, inv *Invite, _ inviteTx, release chan struct{}) {
				upd := msg(t, testSDP, inDialogLines(inv.Dialog, "UPDATE", 2)...)
				utx := &fakeTx{}
				s.serveRequest(upd, utx, utx)
				if got := utx.codes(); !slices.Equal(got, []int{500}) || hdr(utx.last(), "Retry-After") == "" {
					t.Errorf("early UPDATE answered %v, Retry-After %q", got, hdr(utx.last(), "Retry-After"))
				}
				inv.Dialog.Hangup(nil)
			},
			want: []int{100, 180, 480}, wantCause: ErrLocalHangup,
		},
		{
			name: "the same INVITE on another branch",
			act: func(t *testing.T, s *Server, inv *Invite, _ inviteTx, _ chan struct{}) {
				lines := inviteLines()
				lines[1] = "Via: SIP/2.0/UDP 127.0.0.1:5070;branch=z9hG4bK-inv-forked"
				mtx := &fakeTx{}
				s.serveRequest(msg(t, testSDP, lines...), mtx, mtx)
				if got := mtx.codes(); !slices.Equal(got, []int{482}) {
					t.Errorf("merged INVITE answered %v, want 482", got)
				}
				inv.Dialog.Hangup(nil)
			},
			want: []int{100, 180, 480}, wantCause: ErrLocalHangup,
		},
		{
			name: "hangup before the answer",
			act: func(t *testing.T, s *Server, inv *Invite, _ inviteTx, _ chan struct{}) {
				inv.Dialog.Hangup(errors.New("agent busy"))
			},
			want: []int{100, 180, 480}, wantCause: ErrLocalHangup,
		},
		{
			name: "close before the answer",
			act: func(t *testing.T, s *Server, inv *Invite, _ inviteTx, _ chan struct{}) {
				go s.Close()
			},
			want: []int{100, 180, 503}, wantCause: ErrServerClosed,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := &fakeMedia{}
				app := &blockingApp{m: m, entered: make(chan *Invite, 1), release: make(chan struct{})}
				s, w := newTestServer(t, Config{}, app)
				var tx inviteTx = &fakeTx{}
				if tc.tx != nil {
					tx = tc.tx()
				}
				req := msg(t, testSDP, inviteLines()...)
				done := make(chan struct{})
				go func() {
					defer close(done)
					s.serveRequest(req, tx, tx)
				}()
				inv := <-app.entered
				tc.act(t, s, inv, tx, app.release)
				<-done
				synctest.Wait()
				var codes []int
				switch tx := tx.(type) {
				case *fakeTx:
					codes = tx.codes()
				case *raceTx:
					codes = tx.codes()
				}
				if !slices.Equal(codes, tc.want) {
					t.Errorf("INVITE answered %v, want %v", codes, tc.want)
				}
				ended := m.endedWith()
				if len(ended) != 1 || !errors.Is(ended[0], tc.wantCause) {
					t.Errorf("Ended %v, want once %v", ended, tc.wantCause)
				}
				if n := len(w.sent("request")) + len(w.sent("resend")); n != 0 {
					t.Errorf("%d messages sent for a call never answered", n)
				}
				if n := len(s.Dialogs()); n != 0 {
					t.Errorf("%d dialogs left", n)
				}
				s.Close()
			})
		})
	}
}

// panicMedia panics in Info.
type panicMedia struct{ fakeMedia }

func (m *panicMedia) Info(string, []byte) int { panic("media bug") }

// TestInDialog runs a whole dialog through serveRequest: INVITE, ACK,
// INFO, BYE; unknown tags get 481; a panic in one dialog answers 500,
// ends that dialog with ErrPanic and leaves another one alone.
// Mutations caught: matching dialogs by their tags only (the wrong Call-ID
// reaches a dialog), no recover around the dialog's events (the test
// binary dies), a handler that answers 481 when it sees the dialog end
// before its own event closed (the BYE answered 200 and 481; seen with
// -race -count=300).
func TestInDialog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		good := &fakeMedia{}
		bad := &panicMedia{}
		calls := 0
		app := funcApp(func(context.Context, *Invite) (Media, []byte, error) {
			calls++
			if calls == 1 {
				return good, []byte(testSDP), nil
			}
			return bad, []byte(testSDP), nil
		})
		s, w := newTestServer(t, Config{SessionExpires: -1}, app)
		invite := func(callID string) *Dialog {
			lines := inviteLines()
			lines[4] = "Call-ID: " + callID
			tx := &fakeTx{}
			s.serveRequest(msg(t, testSDP, lines...), tx, tx)
			if got := tx.codes(); !slices.Equal(got, []int{100, 180, 200}) {
				t.Fatalf("INVITE answered %v", got)
			}
			tag, _ := tx.last().To().Params.Get("tag")
			for _, d := range s.Dialogs() {
				if d.localTag == tag {
					return d
				}
			}
			t.Fatal("no dialog")
			return nil
		}
		in := func(d *Dialog, callID, method string, cseq int) []int {
			lines := inDialogLines(d, method, cseq)
			lines[4] = "Call-ID: " + callID
			tx := &fakeTx{}
			s.serveRequest(msg(t, "", lines...), tx, tx)
			return tx.codes()
		}
		d1, d2 := invite("one"), invite("two")
		for _, c := range []struct {
			d      *Dialog
			callID string
		}{{d1, "one"}, {d2, "two"}} {
			lines := inDialogLines(c.d, "ACK", 1)
			lines[4] = "Call-ID: " + c.callID
			tx := &fakeTx{}
			s.serveRequest(msg(t, "", lines...), tx, tx)
		}
		synctest.Wait()
		if d1.State() != StateConfirmed || d2.State() != StateConfirmed {
			t.Fatalf("states %v %v", d1.State(), d2.State())
		}
		if got := in(d1, "two", "INFO", 2); !slices.Equal(got, []int{481}) {
			t.Errorf("INFO with the wrong Call-ID answered %v, want 481", got)
		}
		if got := in(d1, "one", "INFO", 2); !slices.Equal(got, []int{200}) {
			t.Errorf("INFO answered %v", got)
		}
		if got := in(d2, "two", "INFO", 2); !slices.Equal(got, []int{500}) {
			t.Errorf("INFO into a panicking Media answered %v, want 500", got)
		}
		synctest.Wait()
		if d2.State() != StateTerminated || !errors.Is(d2.Describe().Cause, ErrPanic) {
			t.Errorf("panicked dialog %v cause %v", d2.State(), d2.Describe().Cause)
		}
		if d1.State() != StateConfirmed {
			t.Errorf("the other dialog is %v", d1.State())
		}
		if got := in(d1, "one", "BYE", 3); !slices.Equal(got, []int{200}) {
			t.Errorf("BYE answered %v", got)
		}
		synctest.Wait()
		if ended := good.endedWith(); len(ended) != 1 || !errors.Is(ended[0], ErrRemoteBye) {
			t.Errorf("Ended %v", ended)
		}
		if got := w.methods(); !slices.Equal(got, []string{"BYE"}) {
			t.Errorf("we sent %v, want the BYE of the panicked dialog", got)
		}
		if got := in(d1, "one", "BYE", 4); !slices.Equal(got, []int{481}) {
			t.Errorf("BYE after the end answered %v, want 481", got)
		}
		st := s.Stats()
		if st.Panics != 1 || st.Requests["INVITE"] != 2 || st.Responses[MethodCode{"INFO", 500}] != 1 {
			t.Errorf("stats %+v", st)
		}
		s.Close()
	})
}

// TestRetransmitted2xxGetsAck: when the peer missed the ACK of our
// refresh re-INVITE's 200 it sends the 200 again; no transaction is left
// to match it, so the stray-response path must find the dialog and send
// the ACK again (RFC 3261 13.2.2.4). Mutation caught: dropping every
// unmatched response (the peer would retransmit for 64*T1 and hang up).
func TestRetransmitted2xxGetsAck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, w := newTestServer(t, Config{}, answerWith(&fakeMedia{}))
		tx := &fakeTx{}
		s.serveRequest(msg(t, testSDP, inviteLines("Allow: INVITE, ACK, BYE", "Session-Expires: 120")...), tx, tx)
		tag, _ := tx.last().To().Params.Get("tag")
		d := s.Dialogs()[0]
		ack := msg(t, "", inDialogLines(d, "ACK", 1)...)
		s.serveRequest(ack, &fakeTx{}, nil)
		time.Sleep(61 * time.Second) // our re-INVITE at 60 s
		reqs := w.sent("request")
		if len(reqs) != 1 || len(w.sent("ack")) != 1 {
			t.Fatalf("sent %v and %d ACKs, want our re-INVITE and its ACK", w.methods(), len(w.sent("ack")))
		}
		reinv := reqs[0].msg.(*sip.Request)
		if got, _ := reinv.From().Params.Get("tag"); got != tag {
			t.Fatalf("re-INVITE From tag %q, want %q", got, tag)
		}
		again := sip.NewResponseFromRequest(reinv, 200, "OK", []byte(testSDP))
		s.onStrayResponse(again)
		synctest.Wait()
		if n := len(w.sent("ack")); n != 2 {
			t.Errorf("%d ACKs after the retransmitted 200, want 2", n)
		}
		other := sip.NewResponseFromRequest(reinv, 200, "OK", nil)
		other.CSeq().SeqNo = 99
		s.onStrayResponse(other)
		synctest.Wait()
		if n := len(w.sent("ack")); n != 2 || s.Stats().Drops["stray-response"] != 0 {
			// A 2xx of another CSeq reaches the dialog and is ignored there.
			t.Errorf("%d ACKs, drops %v", n, s.Stats().Drops)
		}
		s.Close()
	})
}
