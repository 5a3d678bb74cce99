package signal

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/emiago/sipgo/sip"
)

// waitEnd waits (in virtual time) for d to end; a dialog still alive
// after an hour fails the test and is hung up.
func waitEnd(t *testing.T, d *Dialog) {
	t.Helper()
	select {
	case <-d.Done():
	case <-time.After(time.Hour):
		t.Errorf("dialog still %v after an hour", d.State())
		d.Hangup(nil)
		<-d.Done()
	}
}

func secs(fs ...float64) []time.Duration {
	out := make([]time.Duration, len(fs))
	for i, f := range fs {
		out[i] = time.Duration(f * float64(time.Second))
	}
	return out
}

// TestAckWait pins RFC 3261 13.3.1.4: the 2xx goes again at T1 doubling
// to T2 until the ACK, and without one a BYE follows at 64*T1.
// Mutations caught: doubling without the T2 cap (8 s gaps appear), a
// fixed 4 s interval after the first (sipgo's own schedule), no BYE on
// the ACK timeout, no retransmission on TCP (RFC 3261 13.3.1.4 asks for
// it on every transport: seen failing), retransmitting after the ACK.
func TestAckWait(t *testing.T) {
	cases := []struct {
		name        string
		transport   string
		ackAt       time.Duration // 0: never
		wantResends []time.Duration
		wantBye     time.Duration // 0: none
		wantCause   error
	}{
		{
			name:        "udp no ack",
			transport:   "UDP",
			wantResends: secs(0.5, 1.5, 3.5, 7.5, 11.5, 15.5, 19.5, 23.5, 27.5, 31.5),
			wantBye:     32 * time.Second,
			wantCause:   ErrAckTimeout,
		},
		{
			name:        "udp ack after the third",
			transport:   "UDP",
			ackAt:       4 * time.Second,
			wantResends: secs(0.5, 1.5, 3.5),
		},
		{
			name:        "tcp no ack",
			transport:   "TCP",
			wantResends: secs(0.5, 1.5, 3.5, 7.5, 11.5, 15.5, 19.5, 23.5, 27.5, 31.5),
			wantBye:     32 * time.Second,
			wantCause:   ErrAckTimeout,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := &fakeWire{}
				var tasks sync.WaitGroup
				e := testEnv(Config{SessionExpires: -1}, w, &tasks)
				inv := msg(t, testSDP, inviteLines()...)
				inv.SetTransport(tc.transport)
				m := &fakeMedia{}
				t0 := time.Now()
				d := answeredDialog(t, e, inv, m)
				if tc.ackAt > 0 {
					time.Sleep(tc.ackAt)
					ack := msg(t, "", inDialogLines(d, "ACK", 1)...)
					d.post(func() { d.onAck(ack) })
					time.Sleep(time.Minute)
					if d.State() != StateConfirmed {
						t.Fatalf("state %v after the ACK", d.State())
					}
					d.Hangup(nil)
				}
				waitEnd(t, d)
				tasks.Wait()
				if got := offsets(t0, w.sent("resend")); !slices.Equal(got, tc.wantResends) {
					t.Errorf("2xx retransmissions at %v, want %v", got, tc.wantResends)
				}
				reqs := w.sent("request")
				if tc.wantBye > 0 {
					if len(reqs) != 1 || reqs[0].msg.(*sip.Request).Method != sip.BYE || reqs[0].at.Sub(t0) != tc.wantBye {
						t.Fatalf("requests %v at %v, want one BYE at %v", w.methods(), offsets(t0, reqs), tc.wantBye)
					}
				}
				ended := m.endedWith()
				if len(ended) != 1 {
					t.Fatalf("Ended called %d times", len(ended))
				}
				if tc.wantCause != nil && !errors.Is(ended[0], tc.wantCause) {
					t.Errorf("cause %v, want %v", ended[0], tc.wantCause)
				}
				if tc.ackAt > 0 && (m.confirmed != 1 || !errors.Is(ended[0], ErrLocalHangup)) {
					t.Errorf("confirmed %d, cause %v", m.confirmed, ended[0])
				}
			})
		})
	}
}

// TestLateOffer: our offer goes in the 200 and the answer must come in
// the ACK. Mutation caught: treating an ACK without a body as fine (no
// BYE, Confirmed called).
func TestLateOffer(t *testing.T) {
	cases := []struct {
		name      string
		ackBody   string
		wantCause error // nil: confirmed
	}{
		{"answer in the ack", testSDP, nil},
		{"no answer in the ack", "", ErrNoAnswerInAck},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := &fakeWire{}
				var tasks sync.WaitGroup
				e := testEnv(Config{SessionExpires: -1}, w, &tasks)
				m := &fakeMedia{}
				d := answeredDialog(t, e, msg(t, "", inviteLines()...), m)
				ack := msg(t, tc.ackBody, inDialogLines(d, "ACK", 1)...)
				d.post(func() { d.onAck(ack) })
				synctest.Wait()
				if tc.wantCause == nil {
					if d.State() != StateConfirmed || len(m.answers) != 1 || string(m.answers[0]) != testSDP {
						t.Fatalf("state %v, answers %d", d.State(), len(m.answers))
					}
					d.Hangup(nil)
				}
				waitEnd(t, d)
				tasks.Wait()
				ended := m.endedWith()
				if tc.wantCause != nil {
					if len(ended) != 1 || !errors.Is(ended[0], tc.wantCause) || m.confirmed != 0 {
						t.Fatalf("ended %v confirmed %d, want %v", ended, m.confirmed, tc.wantCause)
					}
					if got := w.methods(); !slices.Equal(got, []string{"BYE"}) {
						t.Fatalf("requests %v, want a BYE", got)
					}
				}
			})
		})
	}
}

// TestSessionTimer pins RFC 4028: when the peer refreshes and stops, BYE
// at SE - min(32 s, SE/3); a refresh from the peer moves the expiry; when
// we refresh, UPDATE (or re-INVITE with our SDP) at SE/2.
// Mutations caught: expiry at SE (not SE - SE/3), a refresh that does not
// re-arm the expiry, refreshing when the peer is the refresher, a
// re-INVITE refresh without our SDP, our refresh naming refresher=uas
// (asking the peer to take the refreshes over, RFC 4028 7.4: seen failing).
func TestSessionTimer(t *testing.T) {
	cases := []struct {
		name        string
		extra       []string
		peerRefresh []time.Duration // UPDATEs from the peer at these times
		run         time.Duration   // then Hangup (0: wait for the end)
		wantReqs    []string
		wantAt      []time.Duration
		wantCause   error
	}{
		{
			name:      "peer refreshes, stops",
			extra:     []string{"Supported: timer", "Session-Expires: 90;refresher=uac"},
			wantReqs:  []string{"BYE"},
			wantAt:    secs(60),
			wantCause: ErrSessionExpired,
		},
		{
			name:        "peer refreshes once, then stops",
			extra:       []string{"Supported: timer", "Session-Expires: 90;refresher=uac"},
			peerRefresh: secs(40),
			wantReqs:    []string{"BYE"},
			wantAt:      secs(100),
			wantCause:   ErrSessionExpired,
		},
		{
			name:     "we refresh with UPDATE",
			extra:    []string{"Allow: INVITE, ACK, BYE, UPDATE", "Session-Expires: 120"},
			run:      200 * time.Second,
			wantReqs: []string{"UPDATE", "UPDATE", "UPDATE", "BYE"},
			wantAt:   secs(60, 120, 180, 200),
		},
		{
			name:     "we refresh with re-INVITE",
			extra:    []string{"Allow: INVITE, ACK, BYE", "Session-Expires: 120"},
			run:      100 * time.Second,
			wantReqs: []string{"INVITE", "BYE"},
			wantAt:   secs(60, 100),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := &fakeWire{}
				var tasks sync.WaitGroup
				e := testEnv(Config{}, w, &tasks)
				m := &fakeMedia{}
				t0 := time.Now()
				d := answeredDialog(t, e, msg(t, testSDP, inviteLines(tc.extra...)...), m)
				ack := msg(t, "", inDialogLines(d, "ACK", 1)...)
				d.post(func() { d.onAck(ack) })
				cseq := 2
				for _, at := range tc.peerRefresh {
					time.Sleep(at - time.Since(t0))
					upd := msg(t, "", inDialogLines(d, "UPDATE", cseq, "Supported: timer", "Session-Expires: 90;refresher=uac")...)
					cseq++
					tx := &fakeTx{}
					d.post(func() { d.onRequest(upd, tx) })
					synctest.Wait()
					if got := tx.codes(); !slices.Equal(got, []int{200}) {
						t.Fatalf("refresh answered %v", got)
					}
				}
				if tc.run > 0 {
					time.Sleep(tc.run - time.Since(t0))
					d.Hangup(nil)
				}
				waitEnd(t, d)
				tasks.Wait()
				if got := w.methods(); !slices.Equal(got, tc.wantReqs) {
					t.Fatalf("requests %v, want %v", got, tc.wantReqs)
				}
				if at := offsets(t0, w.sent("request")); !slices.Equal(at, tc.wantAt) {
					t.Fatalf("requests at %v, want %v", at, tc.wantAt)
				}
				for _, s := range w.sent("request") {
					r := s.msg.(*sip.Request)
					if r.Method == sip.BYE {
						continue
					}
					if v, _ := header(r, "Session-Expires", ""); v != "120;refresher=uac" {
						t.Errorf("%s refresh Session-Expires %q", r.Method, v)
					}
				}
				if tc.name == "we refresh with re-INVITE" {
					reinv := w.sent("request")[0].msg.(*sip.Request)
					if string(reinv.Body()) != testSDP {
						t.Errorf("refresh re-INVITE body %q, want our SDP", reinv.Body())
					}
					if len(w.sent("ack")) != 1 {
						t.Errorf("%d ACKs for the refresh's 200", len(w.sent("ack")))
					}
				}
				ended := m.endedWith()
				if len(ended) != 1 || (tc.wantCause != nil && !errors.Is(ended[0], tc.wantCause)) {
					t.Fatalf("ended %v, want %v", ended, tc.wantCause)
				}
			})
		})
	}
}

// TestOfferRules pins the overlap rules: their re-INVITE while ours is in
// flight or while our 2xx waits for its ACK gets 491 (RFC 3261 14.2);
// their UPDATE with an offer while our offer is open gets 491 (RFC 3311);
// an offerless re-INVITE gets our offer and takes the answer from the
// ACK; a lower CSeq gets 500.
// Mutations caught: dropping the glare check (200 instead of 491),
// accepting an UPDATE offer over ours, not passing the ACK's answer.
func TestOfferRules(t *testing.T) {
	cases := []struct {
		name string
		// setup runs first in the loop (after the ACK of the first 2xx).
		setup func(t *testing.T, d *Dialog, w *fakeWire, release chan struct{})
		req   func(t *testing.T, d *Dialog) *sip.Request
		want  int
		check func(t *testing.T, d *Dialog, m *fakeMedia)
	}{
		{
			name: "re-INVITE with hold",
			req: func(t *testing.T, d *Dialog) *sip.Request {
				return msg(t, testSDP+"a=sendonly\r\n", inDialogLines(d, "INVITE", 2)...)
			},
			want: 200,
			check: func(t *testing.T, d *Dialog, m *fakeMedia) {
				if len(m.reoffers) != 1 || string(m.reoffers[0]) != testSDP+"a=sendonly\r\n" {
					t.Errorf("reoffers %q", m.reoffers)
				}
			},
		},
		{
			name: "re-INVITE while ours is in flight",
			setup: func(t *testing.T, d *Dialog, w *fakeWire, release chan struct{}) {
				w.answer = func(req *sip.Request) (*sip.Response, error) {
					<-release
					return sip.NewResponseFromRequest(req, 200, "OK", nil), nil
				}
				d.post(func() { d.sendRefresh(sip.INVITE, 0) })
			},
			req: func(t *testing.T, d *Dialog) *sip.Request {
				return msg(t, testSDP, inDialogLines(d, "INVITE", 2)...)
			},
			want: 491,
		},
		{
			name: "UPDATE offer while our offer is open",
			setup: func(t *testing.T, d *Dialog, w *fakeWire, release chan struct{}) {
				w.answer = func(req *sip.Request) (*sip.Response, error) {
					<-release
					return sip.NewResponseFromRequest(req, 200, "OK", nil), nil
				}
				d.post(func() { d.sendRefresh(sip.INVITE, 0) })
			},
			req: func(t *testing.T, d *Dialog) *sip.Request {
				return msg(t, testSDP, inDialogLines(d, "UPDATE", 2)...)
			},
			want: 491,
		},
		{
			name: "re-INVITE before the ACK of the last",
			setup: func(t *testing.T, d *Dialog, w *fakeWire, release chan struct{}) {
				reinv := msg(t, testSDP, inDialogLines(d, "INVITE", 2)...)
				d.post(func() { d.onRequest(reinv, &fakeTx{}) })
			},
			req: func(t *testing.T, d *Dialog) *sip.Request {
				return msg(t, testSDP, inDialogLines(d, "INVITE", 3)...)
			},
			want: 491,
		},
		{
			name: "offerless re-INVITE",
			req: func(t *testing.T, d *Dialog) *sip.Request {
				return msg(t, "", inDialogLines(d, "INVITE", 2)...)
			},
			want: 200,
			check: func(t *testing.T, d *Dialog, m *fakeMedia) {
				if len(m.reoffers) != 1 || m.reoffers[0] != nil {
					t.Fatalf("reoffers %q, want one nil", m.reoffers)
				}
				ack := msg(t, testSDP, inDialogLines(d, "ACK", 2)...)
				d.post(func() { d.onAck(ack) })
				synctest.Wait()
				if len(m.answers) != 1 {
					t.Errorf("answers %d, want the ACK's", len(m.answers))
				}
			},
		},
		{
			name: "lower CSeq",
			setup: func(t *testing.T, d *Dialog, w *fakeWire, release chan struct{}) {
				info := msg(t, "", inDialogLines(d, "INFO", 5)...)
				d.post(func() { d.onRequest(info, &fakeTx{}) })
			},
			req: func(t *testing.T, d *Dialog) *sip.Request {
				return msg(t, "", inDialogLines(d, "INFO", 4)...)
			},
			want: 500,
		},
		{
			name: "REFER",
			req: func(t *testing.T, d *Dialog) *sip.Request {
				return msg(t, "", inDialogLines(d, "REFER", 2)...)
			},
			want: 403,
		},
		{
			name: "OPTIONS in the dialog",
			req: func(t *testing.T, d *Dialog) *sip.Request {
				return msg(t, "", inDialogLines(d, "OPTIONS", 2)...)
			},
			want: 200,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := &fakeWire{}
				var tasks sync.WaitGroup
				e := testEnv(Config{SessionExpires: -1}, w, &tasks)
				m := &fakeMedia{}
				d := answeredDialog(t, e, msg(t, testSDP, inviteLines()...), m)
				ack := msg(t, "", inDialogLines(d, "ACK", 1)...)
				d.post(func() { d.onAck(ack) })
				release := make(chan struct{})
				if tc.setup != nil {
					tc.setup(t, d, w, release)
				}
				synctest.Wait()
				tx := &fakeTx{}
				req := tc.req(t, d)
				d.post(func() { d.onRequest(req, tx) })
				synctest.Wait()
				if got := tx.codes(); len(got) != 1 || got[0] != tc.want {
					t.Fatalf("answered %v, want %d", got, tc.want)
				}
				if tc.check != nil {
					tc.check(t, d, m)
				}
				close(release)
				d.Hangup(nil)
				waitEnd(t, d)
				tasks.Wait()
			})
		})
	}
}

// TestHangupWaitsForAck pins RFC 3261 15: our BYE waits for the ACK of
// our 2xx. Mutation caught: ending at once on Hangup (the BYE at 1 s,
// before the ACK).
func TestHangupWaitsForAck(t *testing.T) {
	cases := []struct {
		name      string
		ackAt     time.Duration // 0: never
		wantBye   time.Duration
		wantCause error
	}{
		{"ack comes", 2 * time.Second, 2 * time.Second, ErrLocalHangup},
		{"ack never comes", 0, 32 * time.Second, ErrAckTimeout},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := &fakeWire{}
				var tasks sync.WaitGroup
				e := testEnv(Config{SessionExpires: -1}, w, &tasks)
				m := &fakeMedia{}
				t0 := time.Now()
				d := answeredDialog(t, e, msg(t, testSDP, inviteLines()...), m)
				time.Sleep(time.Second)
				d.Hangup(nil)
				if tc.ackAt > 0 {
					time.Sleep(tc.ackAt - time.Since(t0))
					ack := msg(t, "", inDialogLines(d, "ACK", 1)...)
					d.post(func() { d.onAck(ack) })
				}
				waitEnd(t, d)
				tasks.Wait()
				reqs := w.sent("request")
				if len(reqs) != 1 || reqs[0].at.Sub(t0) != tc.wantBye {
					t.Fatalf("requests %v at %v, want a BYE at %v", w.methods(), offsets(t0, reqs), tc.wantBye)
				}
				if ended := m.endedWith(); len(ended) != 1 || !errors.Is(ended[0], tc.wantCause) || m.confirmed != 0 {
					t.Fatalf("ended %v confirmed %d", ended, m.confirmed)
				}
			})
		})
	}
}

// TestOurRequestsInTheDialog pins RFC 3261 12.2.1.1 for what we send:
// the Request-URI is the remote target (the Contact, refreshed by their
// re-INVITE), the Route set is the Record-Route in its order, the tags
// are swapped, the CSeq grows by one. Mutations caught: the Route set
// reversed (that is the UAC's order), the remote target not refreshed by
// a re-INVITE's Contact, the CSeq not incremented.
func TestOurRequestsInTheDialog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &fakeWire{}
		var tasks sync.WaitGroup
		e := testEnv(Config{}, w, &tasks)
		m := &fakeMedia{}
		inv := msg(t, testSDP, inviteLines(
			"Record-Route: <sip:p1.example;lr>, <sip:p2.example;lr>",
			"Allow: INVITE, ACK, BYE, UPDATE",
			"Session-Expires: 100",
		)...)
		d := answeredDialog(t, e, inv, m)
		ack := msg(t, "", inDialogLines(d, "ACK", 1)...)
		d.post(func() { d.onAck(ack) })
		time.Sleep(60 * time.Second) // our UPDATE at 50 s
		lines := inDialogLines(d, "INVITE", 2)
		lines[6] = "Contact: <sip:caller@10.0.0.9:5080>"
		reinv := msg(t, testSDP, lines...)
		tx := &fakeTx{}
		d.post(func() { d.onRequest(reinv, tx) })
		synctest.Wait()
		ack2 := msg(t, "", inDialogLines(d, "ACK", 2)...)
		d.post(func() { d.onAck(ack2) })
		d.Hangup(nil)
		waitEnd(t, d)
		tasks.Wait()
		reqs := w.sent("request")
		if got := w.methods(); !slices.Equal(got, []string{"UPDATE", "BYE"}) {
			t.Fatalf("sent %v", got)
		}
		for i, s := range reqs {
			r := s.msg.(*sip.Request)
			if r.CSeq().SeqNo != uint32(i+1) {
				t.Errorf("%s CSeq %d, want %d", r.Method, r.CSeq().SeqNo, i+1)
			}
			var routes []string
			for _, h := range r.GetHeaders("Route") {
				routes = append(routes, h.Value())
			}
			if want := []string{"<sip:p1.example;lr>", "<sip:p2.example;lr>"}; !slices.Equal(routes, want) {
				t.Errorf("%s Route %v, want %v", r.Method, routes, want)
			}
			if tag, _ := r.From().Params.Get("tag"); tag != d.localTag {
				t.Errorf("%s From tag %q", r.Method, tag)
			}
			if tag, _ := r.To().Params.Get("tag"); tag != "caller1" {
				t.Errorf("%s To tag %q", r.Method, tag)
			}
			if r.CallID().Value() != "call-1@test" {
				t.Errorf("%s Call-ID %q", r.Method, r.CallID().Value())
			}
		}
		if u := reqs[0].msg.(*sip.Request).Recipient; u.Host != "127.0.0.1" || u.Port != 5070 {
			t.Errorf("UPDATE to %s, want the INVITE's Contact", u.String())
		}
		if u := reqs[1].msg.(*sip.Request).Recipient; u.Host != "10.0.0.9" || u.Port != 5080 {
			t.Errorf("BYE to %s, want the re-INVITE's Contact", u.String())
		}
	})
}
