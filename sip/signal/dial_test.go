package signal

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/emiago/sipgo/sip"
)

// fakeInviteTx is one INVITE client transaction the test scripts.
type fakeInviteTx struct {
	req  *sip.Request
	res  chan *sip.Response
	done chan struct{}
	once sync.Once
}

func (tx *fakeInviteTx) Responses() <-chan *sip.Response { return tx.res }
func (tx *fakeInviteTx) Done() <-chan struct{}           { return tx.done }
func (tx *fakeInviteTx) Err() error                      { return sip.ErrTransactionTimeout }
func (tx *fakeInviteTx) Terminate()                      { tx.once.Do(func() { close(tx.done) }) }

// reply is a response of the far end to tx's INVITE, with its To tag.
func (tx *fakeInviteTx) reply(code int, tag string, body []byte) *sip.Response {
	res := sip.NewResponseFromRequest(tx.req, code, "", body)
	if tag != "" {
		res.To().Params.Add("tag", tag)
		res.AppendHeader(&sip.ContactHeader{Address: sip.Uri{Scheme: "sip", Host: "127.0.0.9", Port: 5099}})
	}
	return res
}

// fakeInviter hands each INVITE to script (in its own goroutine).
type fakeInviter struct {
	mu     sync.Mutex
	txs    []*fakeInviteTx
	script func(n int, tx *fakeInviteTx)
}

func (f *fakeInviter) invite(_ context.Context, req *sip.Request, _ func(*sip.Response)) (inviteTxn, error) {
	tx := &fakeInviteTx{req: req.Clone(), res: make(chan *sip.Response, 8), done: make(chan struct{})}
	f.mu.Lock()
	f.txs = append(f.txs, tx)
	n := len(f.txs)
	f.mu.Unlock()
	go f.script(n, tx)
	return tx, nil
}

func (f *fakeInviter) last() *fakeInviteTx {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.txs[len(f.txs)-1]
}

func dialServer(t *testing.T, script func(n int, tx *fakeInviteTx)) (*Server, *fakeWire, *fakeInviter) {
	s, w := newTestServer(t, Config{Listen: []Listen{{Network: "udp", Addr: "127.0.0.1:5060"}}}, answerWith(&fakeMedia{}))
	fi := &fakeInviter{script: script}
	s.inviter = fi
	return s, w, fi
}

func outbound(m Media) Outbound {
	return Outbound{Target: "sip:+15551234@127.0.0.9:5099", From: "sip:+15559876@127.0.0.1",
		Offer: []byte(testSDP), Answered: func([]byte) (Media, error) { return m, nil }}
}

// TestDialOutcomes pins the typed end of each final answer and local end.
// Mutations caught: the auth bound dropped (the 401-forever trunk loops:
// 101 INVITEs, not 3) and 486 mapped to rejected, both seen failing.
func TestDialOutcomes(t *testing.T) {
	for _, tc := range []struct {
		name     string
		auth     *Credentials
		ring     time.Duration
		script   func(n int, tx *fakeInviteTx)
		outcome  DialOutcome
		code     int
		invites  int
		requests []string // CANCEL, BYE sent
		no487    bool     // the far end answers the CANCEL with no 487
	}{
		{name: "busy", script: func(_ int, tx *fakeInviteTx) { tx.res <- tx.reply(486, "b", nil) },
			outcome: DialBusy, code: 486, invites: 1},
		{name: "unavailable", script: func(_ int, tx *fakeInviteTx) { tx.res <- tx.reply(503, "b", nil) },
			outcome: DialUnavailable, code: 503, invites: 1},
		{name: "no credentials", script: func(_ int, tx *fakeInviteTx) {
			r := tx.reply(401, "b", nil)
			r.AppendHeader(sip.NewHeader("WWW-Authenticate", `Digest realm="t", nonce="n1"`))
			tx.res <- r
		}, outcome: DialAuthFailed, code: 401, invites: 1},
		{name: "401 forever", auth: &Credentials{User: "u", Password: "p"}, script: func(_ int, tx *fakeInviteTx) {
			r := tx.reply(401, "b", nil)
			r.AppendHeader(sip.NewHeader("WWW-Authenticate", `Digest realm="t", nonce="n1"`))
			tx.res <- r
		}, outcome: DialAuthFailed, code: 401, invites: 1 + MaxAuthAttempts},
		{name: "ring timeout", ring: 30 * time.Second, script: func(_ int, tx *fakeInviteTx) {
			tx.res <- tx.reply(180, "b", nil)
		}, outcome: DialNoAnswer, code: 0, invites: 1, requests: []string{"CANCEL"}},
		{name: "200 races the CANCEL", ring: 30 * time.Second, script: func(_ int, tx *fakeInviteTx) {
			tx.res <- tx.reply(180, "b", nil)
			time.Sleep(30*time.Second + time.Millisecond)
			tx.res <- tx.reply(200, "b", []byte(testSDP))
		}, outcome: DialNoAnswer, code: 0, invites: 1, requests: []string{"CANCEL", "BYE"}, no487: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s, w, fi := dialServer(t, tc.script)
				w.answer = func(req *sip.Request) (*sip.Response, error) {
					if req.Method == sip.CANCEL && !tc.no487 {
						fi.last().res <- fi.last().reply(487, "b", nil)
					}
					return sip.NewResponseFromRequest(req, 200, "OK", nil), nil
				}
				o := outbound(&fakeMedia{})
				o.Auth, o.RingTimeout = tc.auth, tc.ring
				d, err := s.Dial(context.Background(), o)
				var de *DialError
				if d != nil || !errors.As(err, &de) || !errors.Is(err, ErrDialFailed) {
					t.Fatalf("Dial = %v, %v", d, err)
				}
				if de.Outcome != tc.outcome || de.Code != tc.code {
					t.Errorf("outcome %s %d, want %s %d", de.Outcome, de.Code, tc.outcome, tc.code)
				}
				synctest.Wait()
				if len(fi.txs) != tc.invites {
					t.Errorf("%d INVITEs, want %d", len(fi.txs), tc.invites)
				}
				for i, tx := range fi.txs {
					if got := tx.req.CSeq().SeqNo; got != uint32(i+1) {
						t.Errorf("INVITE %d CSeq %d", i, got)
					}
					if i > 0 && hdr(tx.req, "Authorization") == "" {
						t.Errorf("INVITE %d without Authorization", i)
					}
				}
				if got := w.methods(); len(got) != len(tc.requests) {
					t.Errorf("requests %v, want %v", got, tc.requests)
				}
				if s.Stats().Dials[string(tc.outcome)] != 1 {
					t.Errorf("dials %v", s.Stats().Dials)
				}
				s.Close()
			})
		})
	}
}

// TestDialAnswered: the 200 is acknowledged, Media.Confirmed called, each
// retransmitted 200 gets the same ACK again, a forked 200 its ACK and a
// BYE, and Hangup sends BYE. Mutation caught (seen failing): lastAck not
// set to the INVITE's ACK (the retransmitted 200 gets no ACK: 1 ACK, not 3).
func TestDialAnswered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, w, fi := dialServer(t, func(_ int, tx *fakeInviteTx) {
			tx.res <- tx.reply(183, "a", []byte(testSDP))
			tx.res <- tx.reply(200, "a", []byte(testSDP))
		})
		m := &fakeMedia{}
		o := outbound(m)
		var progress []int
		o.Progress = func(code int, sdp []byte) {
			if len(sdp) > 0 {
				progress = append(progress, code)
			}
		}
		d, err := s.Dial(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if m.confirmed != 1 || d.State() != StateConfirmed || len(progress) != 1 {
			t.Fatalf("confirmed %d, state %v, progress %v", m.confirmed, d.State(), progress)
		}
		tx := fi.last()
		s.onStrayResponse(tx.reply(200, "a", []byte(testSDP)))
		s.onStrayResponse(tx.reply(200, "a", []byte(testSDP)))
		synctest.Wait()
		acks := w.sent("ack")
		if len(acks) != 3 {
			t.Fatalf("%d ACKs, want 3", len(acks))
		}
		ack := acks[0].msg.(*sip.Request)
		if ack.Recipient.Host != "127.0.0.9" || ack.CSeq().SeqNo != 1 {
			t.Errorf("ACK to %s CSeq %d", ack.Recipient.Host, ack.CSeq().SeqNo)
		}
		s.onStrayResponse(tx.reply(200, "fork", []byte(testSDP)))
		synctest.Wait()
		if n := len(w.sent("ack")); n != 4 || len(w.methods()) != 1 || w.methods()[0] != "BYE" {
			t.Errorf("fork: %d ACKs, requests %v", n, w.methods())
		}
		d.Hangup(nil)
		synctest.Wait()
		<-d.Done()
		if got := w.methods(); len(got) != 2 || got[1] != "BYE" {
			t.Errorf("requests %v", got)
		}
		if len(m.endedWith()) != 1 {
			t.Errorf("ended %v", m.endedWith())
		}
		s.Close()
	})
}

// TestDialBadAnswer: Answered refuses the 200's SDP: ACK, then BYE with a
// Reason, and an error wrapping ErrBadAnswer.
func TestDialBadAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, w, _ := dialServer(t, func(_ int, tx *fakeInviteTx) { tx.res <- tx.reply(200, "a", []byte("v=0\r\n")) })
		o := outbound(nil)
		o.Answered = func([]byte) (Media, error) { return nil, errors.New("no codec") }
		_, err := s.Dial(context.Background(), o)
		if !errors.Is(err, ErrBadAnswer) {
			t.Fatalf("err %v", err)
		}
		synctest.Wait()
		reqs := w.sent("request")
		if len(w.sent("ack")) != 1 || len(reqs) != 1 || hdr(reqs[0].msg, "Reason") == "" {
			t.Errorf("ACKs %d, requests %v", len(w.sent("ack")), w.methods())
		}
		s.Close()
	})
}

// TestDialClose: Close ends a dial in flight with CANCEL.
func TestDialClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, w, fi := dialServer(t, func(_ int, tx *fakeInviteTx) { tx.res <- tx.reply(180, "b", nil) })
		w.answer = func(req *sip.Request) (*sip.Response, error) {
			if req.Method == sip.CANCEL {
				fi.last().res <- fi.last().reply(487, "b", nil)
			}
			return sip.NewResponseFromRequest(req, 200, "OK", nil), nil
		}
		errc := make(chan error, 1)
		go func() { _, err := s.Dial(context.Background(), outbound(&fakeMedia{})); errc <- err }()
		synctest.Wait()
		s.Close()
		var de *DialError
		if err := <-errc; !errors.As(err, &de) || de.Outcome != DialCancelled {
			t.Fatalf("err %v", err)
		}
		if got := w.methods(); len(got) != 1 || got[0] != "CANCEL" {
			t.Errorf("requests %v", got)
		}
	})
}

func TestDialInvalid(t *testing.T) {
	s, _, _ := dialServer(t, nil)
	defer s.Close()
	for _, o := range []Outbound{
		{Target: "sip:a@b\r\nX: y", From: "sip:c@d", Offer: []byte("x"), Answered: func([]byte) (Media, error) { return nil, nil }},
		{Target: "sip:a@b", From: "sip:c@d"},
		{Target: "sip:a@b", From: "sip:c@d", Transport: "SCTP", Offer: []byte("x"), Answered: func([]byte) (Media, error) { return nil, nil }},
	} {
		if _, err := s.Dial(context.Background(), o); !errors.Is(err, ErrInvalidDial) {
			t.Errorf("err %v", err)
		}
	}
}

// TestDialSessionTimer pins RFC 4028 on a call we placed: the refresher is
// the one the 200 names (uac is us), uac when its Session-Expires names
// none; we refresh at half the interval (UPDATE, refresher=uac: we stay
// the refresher) only when we are the refresher; when the callee is, its
// refresh (refresher=uac in its own request: itself) moves the expiry,
// and without one BYE at the interval less a third.
// Mutations caught (seen failing): the 200's refresher flipped as before
// (refresher=uac taken as the callee's: no refresh, BYE at 60 s), a peer's
// refresh taken in its transaction's roles (we start refreshing: UPDATEs
// every 45 s and the dialog never ends).
func TestDialSessionTimer(t *testing.T) {
	for _, tc := range []struct {
		name        string
		se          string          // the 200's Session-Expires, "" none
		peerRefresh []time.Duration // UPDATEs from the callee at these times
		run         time.Duration   // then Hangup (0: wait for the end)
		refresher   string
		wantReqs    []string
		wantAt      []time.Duration
	}{
		{name: "200 names us", se: "90;refresher=uac", run: 100 * time.Second, refresher: "uac",
			wantReqs: []string{"UPDATE", "UPDATE", "BYE"}, wantAt: secs(45, 90, 100)},
		{name: "200 names none", se: "90", run: 100 * time.Second, refresher: "uac",
			wantReqs: []string{"UPDATE", "UPDATE", "BYE"}, wantAt: secs(45, 90, 100)},
		{name: "200 names the callee", se: "90;refresher=uas", refresher: "uas",
			wantReqs: []string{"BYE"}, wantAt: secs(60)},
		{name: "the callee refreshes once", se: "90;refresher=uas", peerRefresh: secs(40), refresher: "uas",
			wantReqs: []string{"BYE"}, wantAt: secs(100)},
		{name: "no session timer", run: time.Hour, wantReqs: []string{"BYE"}, wantAt: secs(3600)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s, w, _ := dialServer(t, func(_ int, tx *fakeInviteTx) {
					res := tx.reply(200, "a", []byte(testSDP))
					res.AppendHeader(sip.NewHeader("Allow", "INVITE, ACK, BYE, UPDATE"))
					res.AppendHeader(sip.NewHeader("Supported", "timer"))
					if tc.se != "" {
						res.AppendHeader(sip.NewHeader("Session-Expires", tc.se))
					}
					tx.res <- res
				})
				t0 := time.Now()
				m := &fakeMedia{}
				d, err := s.Dial(context.Background(), outbound(m))
				if err != nil {
					t.Fatal(err)
				}
				if got := d.Describe().Refresher; got != tc.refresher {
					t.Errorf("refresher %q, want %q", got, tc.refresher)
				}
				for i, at := range tc.peerRefresh {
					time.Sleep(at - time.Since(t0))
					upd := msg(t, "", "UPDATE sip:bot@127.0.0.1:5060 SIP/2.0",
						"Via: SIP/2.0/UDP 127.0.0.9:5099;branch=z9hG4bK-upd"+strconv.Itoa(i),
						"From: <sip:+15551234@127.0.0.9>;tag=a",
						"To: <sip:+15559876@127.0.0.1>;tag="+d.localTag,
						"Call-ID: "+d.callID,
						"CSeq: "+strconv.Itoa(i+1)+" UPDATE",
						"Contact: <sip:127.0.0.9:5099>",
						"Max-Forwards: 70",
						"Supported: timer",
						"Session-Expires: 90;refresher=uac")
					ftx := &fakeTx{}
					s.serveRequest(upd, ftx, nil)
					if got := ftx.codes(); !slices.Equal(got, []int{200}) {
						t.Fatalf("refresh answered %v", got)
					}
					if v, _ := header(ftx.last(), "Session-Expires", ""); v != "90;refresher=uac" {
						t.Errorf("our 200 to the refresh: Session-Expires %q", v)
					}
				}
				if tc.run > 0 {
					time.Sleep(tc.run - time.Since(t0))
					d.Hangup(nil)
				}
				select {
				case <-d.Done():
				case <-time.After(10 * time.Minute):
					t.Error("the dialog did not end in 10 min")
					d.Hangup(nil)
					<-d.Done()
				}
				synctest.Wait()
				if got := w.methods(); !slices.Equal(got, tc.wantReqs) {
					t.Fatalf("requests %v, want %v", got, tc.wantReqs)
				}
				if at := offsets(t0, w.sent("request")); !slices.Equal(at, tc.wantAt) {
					t.Fatalf("requests at %v, want %v", at, tc.wantAt)
				}
				for _, r := range w.sent("request") {
					req := r.msg.(*sip.Request)
					if req.Method != sip.UPDATE {
						continue
					}
					if v, _ := header(req, "Session-Expires", ""); v != "90;refresher=uac" {
						t.Errorf("our UPDATE: Session-Expires %q, want 90;refresher=uac", v)
					}
				}
				s.Close()
			})
		})
	}
}

// TestDialEarlyDialog: the callee's requests in the early dialog of our
// dial (after its 183 with a To tag, before a 200) get their answers, not
// 481; another tag still gets 481; the callee's BYE ends the dial (our
// CANCEL, DialRejected code 0), and then the early dialog is gone.
// Mutations caught (seen failing): the early lookup dropped from inDialog
// (every request 481), the dial not ending on the early BYE (no_answer at
// the ring timeout, not rejected).
func TestDialEarlyDialog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, w, fi := dialServer(t, func(_ int, tx *fakeInviteTx) { tx.res <- tx.reply(183, "e", []byte(testSDP)) })
		w.answer = func(req *sip.Request) (*sip.Response, error) {
			if req.Method == sip.CANCEL {
				fi.last().res <- fi.last().reply(487, "e", nil)
			}
			return sip.NewResponseFromRequest(req, 200, "OK", nil), nil
		}
		type result struct {
			d   *Dialog
			err error
		}
		done := make(chan result, 1)
		go func() {
			o := outbound(&fakeMedia{})
			o.RingTimeout = time.Minute
			d, err := s.Dial(context.Background(), o)
			done <- result{d, err}
		}()
		synctest.Wait()
		inv := fi.last().req
		ours, _ := inv.From().Params.Get("tag")
		cseq := 0
		send := func(method, tag, body string) []int {
			cseq++
			lines := []string{method + " sip:+15559876@127.0.0.1:5060 SIP/2.0",
				"Via: SIP/2.0/UDP 127.0.0.9:5099;branch=z9hG4bK-early" + strconv.Itoa(cseq),
				"From: <sip:+15551234@127.0.0.9>;tag=" + tag,
				"To: <sip:+15559876@127.0.0.1>;tag=" + ours,
				"Call-ID: " + inv.CallID().Value(),
				"CSeq: " + strconv.Itoa(cseq) + " " + method,
				"Max-Forwards: 70"}
			if method == "INFO" {
				lines = append(lines, "Content-Type: application/dtmf-relay")
			}
			tx := &fakeTx{}
			s.serveRequest(msg(t, body, lines...), tx, nil)
			return tx.codes()
		}
		for _, tc := range []struct {
			method, tag, body string
			want              int
		}{
			{"OPTIONS", "e", "", 200},
			{"UPDATE", "e", "", 200},
			{"UPDATE", "e", testSDP, 491},
			{"INFO", "e", "", 200},
			{"REFER", "e", "", 403},
			{"NOTIFY", "e", "", 481},
			{"OPTIONS", "fork", "", 481},
		} {
			if got := send(tc.method, tc.tag, tc.body); !slices.Equal(got, []int{tc.want}) {
				t.Errorf("%s with tag %s in the early dialog answered %v, want %d", tc.method, tc.tag, got, tc.want)
			}
		}
		if got := send("BYE", "e", ""); !slices.Equal(got, []int{200}) {
			t.Errorf("BYE in the early dialog answered %v, want 200", got)
		}
		r := <-done
		var de *DialError
		if r.d != nil || !errors.As(r.err, &de) || de.Outcome != DialRejected || de.Code != 0 {
			t.Fatalf("Dial = %v, %v; want rejected 0", r.d, r.err)
		}
		synctest.Wait()
		if got := w.methods(); !slices.Equal(got, []string{"CANCEL"}) {
			t.Errorf("requests %v, want [CANCEL]", got)
		}
		if got := send("OPTIONS", "e", ""); !slices.Equal(got, []int{481}) {
			t.Errorf("OPTIONS after the dial answered %v, want 481", got)
		}
		s.Close()
	})
}
