package sip_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/sip"
	"github.com/brisvox/brisvox/sip/rtp"
	sipmsg "github.com/emiago/sipgo/sip"
)

// ledger is a test Admitter that books every slot it hands out: each
// ends released (Release) or started (OnCall, as the server's Start
// takes it), exactly once. gate, when set, holds Admit until closed (a
// CANCEL arrives while the INVITE is being admitted).
type ledger struct {
	mu                          sync.Mutex
	reserved, released, started int
	gate                        chan struct{}
}

// ticket is one slot of the ledger.
type ticket struct {
	l     *ledger
	state int // 0 reserved, 1 started, 2 released
}

var _ conn.Admission = (*ticket)(nil)

func (l *ledger) admit() (conn.Admission, error) {
	l.mu.Lock()
	l.reserved++
	gate := l.gate
	l.mu.Unlock()
	if gate != nil {
		<-gate
	}
	return &ticket{l: l}, nil
}

func (t *ticket) Release() {
	t.l.mu.Lock()
	defer t.l.mu.Unlock()
	if t.state == 0 {
		t.state = 2
		t.l.released++
	}
}

// start is the server's Start: the slot is the call's from here.
func (l *ledger) start(c *sip.Call) {
	t, ok := c.Admission().(*ticket)
	l.mu.Lock()
	defer l.mu.Unlock()
	if ok && t.state == 0 {
		t.state = 1
		l.started++
	}
}

// outstanding is the number of slots neither released nor started.
func (l *ledger) outstanding() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.reserved - l.released - l.started
}

func (l *ledger) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return fmt.Sprintf("reserved %d released %d started %d", l.reserved, l.released, l.started)
}

// inviteWith is an INVITE from p with body as its SDP offer (none when
// empty).
func (h *hostile) inviteWith(p *peer, callID, body string) []byte {
	var b strings.Builder
	uri := "sip:" + h.addr(p.network).String()
	fmt.Fprintf(&b, "INVITE %s SIP/2.0\r\n", uri)
	fmt.Fprintf(&b, "Via: SIP/2.0/%s %s;branch=z9hG4bK-%s-1\r\n", strings.ToUpper(p.network), p.local(), callID)
	fmt.Fprintf(&b, "From: <sip:caller@%s>;tag=t-%s\r\nTo: <%s>\r\nCall-ID: %s\r\nCSeq: 1 INVITE\r\n", p.local().Addr(), callID, uri, callID)
	fmt.Fprintf(&b, "Contact: <sip:caller@%s>\r\nMax-Forwards: 70\r\n", p.local())
	if body == "" {
		b.WriteString("Content-Length: 0\r\n\r\n")
	} else {
		fmt.Fprintf(&b, "Content-Type: application/sdp\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	}
	return []byte(b.String())
}

// inDialog sends method (ACK, BYE) in the dialog res (a 200) made.
func (h *hostile) inDialog(t *testing.T, p *peer, res *sipmsg.Response, method string, cseq int) {
	t.Helper()
	id := res.CallID().Value()
	if err := p.send([]byte(request(p, method, "sip:bot@"+h.addr(p.network).String(), id, cseq,
		"From: "+res.From().Value(), "To: "+res.To().Value()))); err != nil {
		t.Fatal(err)
	}
}

// g729Offer offers only G.729, which no config takes: 488.
const g729Offer = "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 40000 RTP/AVP 18\r\na=rtpmap:18 G729/8000\r\n"

// TestAdmissionReleasedOnEveryPath: every slot Invite reserves ends
// exactly once, released or started, on each way an INVITE can go: a
// call ACKed and hung up (started), an offer refused (488), the RTP range
// exhausted (503), a CANCEL while the INVITE was being admitted (487), a
// 200 never ACKed (the 64*T1 timeout), a BYE before the ACK, an ACK
// without the answer to our offer (late offer). Mutations caught (each
// seen failing): Invite's deferred Release removed ("488", "no rtp
// ports", "cancel" left a slot outstanding); Call.Close not releasing
// ("no ack", "bye before ack", "ack without answer" left one).
func TestAdmissionReleasedOnEveryPath(t *testing.T) {
	tests := []struct {
		name string
		// run drives the server; it returns when the server's answer
		// came (the ledger is then checked, after a bounded wait).
		run          func(t *testing.T, h *hostile, l *ledger, p *peer)
		released     int
		started      int
		narrowPorts  bool
		admitGated   bool
		wantRefusals map[string]uint64
	}{
		{name: "call ACKed and hung up", started: 1, run: func(t *testing.T, h *hostile, l *ledger, p *peer) {
			res := h.answer(t, p, "call-1", offerSDP, 200)
			h.finish(t, p, nil, res)
		}},
		{name: "488", released: 1, wantRefusals: map[string]uint64{"refused_sdp": 1}, run: func(t *testing.T, h *hostile, l *ledger, p *peer) {
			res := h.answer(t, p, "call-488", g729Offer, 488)
			h.finish(t, p, h.inviteWith(p, "call-488", g729Offer), res)
		}},
		{name: "no rtp ports", narrowPorts: true, started: 1, released: 1, wantRefusals: map[string]uint64{"refused_no_ports": 1}, run: func(t *testing.T, h *hostile, l *ledger, p *peer) {
			first := h.answer(t, p, "call-a", offerSDP, 200)
			h.inDialog(t, p, first, "ACK", 1)
			c := h.took(t)
			second := h.answer(t, p, "call-b", offerSDP, 503)
			if second.GetHeader("Retry-After") == nil {
				t.Error("the 503 has no Retry-After")
			}
			h.finish(t, p, h.inviteWith(p, "call-b", offerSDP), second)
			h.inDialog(t, p, first, "BYE", 2)
			if bye := p.response("call-a", 5*time.Second); bye == nil || bye.StatusCode != 200 {
				t.Errorf("the BYE was answered %v", bye)
			}
			_ = c.Close()
		}},
		{name: "cancel", admitGated: true, released: 1, run: func(t *testing.T, h *hostile, l *ledger, p *peer) {
			inv := h.inviteWith(p, "call-cancel", offerSDP)
			if err := p.send(inv); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the INVITE reached Admit", func() bool { return l.outstanding() == 1 })
			m, _ := sipmsg.ParseMessage(inv)
			req := m.(*sipmsg.Request)
			var b strings.Builder
			fmt.Fprintf(&b, "CANCEL %s SIP/2.0\r\nVia: %s\r\nFrom: %s\r\nTo: %s\r\nCall-ID: call-cancel\r\nCSeq: 1 CANCEL\r\nMax-Forwards: 70\r\nContent-Length: 0\r\n\r\n",
				req.Recipient.String(), req.Via().Value(), req.From().Value(), req.To().Value())
			if err := p.send([]byte(b.String())); err != nil {
				t.Fatal(err)
			}
			var got []int
			for len(got) < 2 {
				res := p.response("call-cancel", 5*time.Second)
				if res == nil {
					t.Fatalf("answers to the CANCEL and the INVITE: %v, want 200 and 487", got)
				}
				got = append(got, res.StatusCode)
				if res.StatusCode == 487 {
					h.finish(t, p, inv, res)
				}
			}
			close(l.gate) // Admit returns after the CANCEL
		}},
		{name: "no ack", released: 1, run: func(t *testing.T, h *hostile, l *ledger, p *peer) {
			h.answer(t, p, "call-noack", offerSDP, 200)
			// 64*T1 (640 ms) later the server gives up with a BYE.
			for end := time.Now().Add(10 * time.Second); time.Now().Before(end); {
				m := p.next(time.Until(end))
				if req, ok := m.(*sipmsg.Request); ok && req.Method == sipmsg.BYE {
					return
				}
			}
			t.Error("no BYE after the 200 was never ACKed")
		}},
		{name: "bye before ack", released: 1, run: func(t *testing.T, h *hostile, l *ledger, p *peer) {
			res := h.answer(t, p, "call-bye", offerSDP, 200)
			h.inDialog(t, p, res, "BYE", 2)
			if bye := p.response("call-bye", 5*time.Second); bye == nil {
				t.Error("the BYE got no answer")
			}
		}},
		{name: "ack without answer", released: 1, run: func(t *testing.T, h *hostile, l *ledger, p *peer) {
			res := h.answer(t, p, "call-late", "", 200)
			h.inDialog(t, p, res, "ACK", 1)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &ledger{}
			if tt.admitGated {
				l.gate = make(chan struct{})
			}
			h := newHostile(t, func(c *sip.Config) {
				c.Admit = l.admit
				calls := c.OnCall
				c.OnCall = func(call *sip.Call) { l.start(call); calls(call) }
				c.Signal.T1 = 10 * time.Millisecond
				c.Signal.T2 = 40 * time.Millisecond
				if tt.narrowPorts {
					c.Ports = rtp.PortsConfig{Addr: c.Ports.Addr, Min: 32300, Max: 32301}
				}
			})
			p := dial(t, "udp", h.udp.Addr(), h.udp)
			tt.run(t, h, l, p)
			waitFor(t, "every slot released or started ("+l.String()+")", func() bool { return l.outstanding() == 0 })
			waitFor(t, "no call left", func() bool { return len(h.srv.Calls()) == 0 })
			l.mu.Lock()
			released, started := l.released, l.started
			l.mu.Unlock()
			if released != tt.released || started != tt.started {
				t.Errorf("released %d started %d, want %d and %d", released, started, tt.released, tt.started)
			}
			for k, want := range tt.wantRefusals {
				if got := h.stat(k); got != want {
					t.Errorf("%s = %d, want %d", k, got, want)
				}
			}
		})
	}
}

// answer sends an INVITE with body and wants its final answer code.
func (h *hostile) answer(t *testing.T, p *peer, callID, body string, code int) *sipmsg.Response {
	t.Helper()
	if err := p.send(h.inviteWith(p, callID, body)); err != nil {
		t.Fatal(err)
	}
	res := p.response(callID, 5*time.Second)
	if res == nil || res.StatusCode != code {
		t.Fatalf("INVITE %s answered %v, want %d", callID, res, code)
	}
	return res
}

// took is the call OnCall had.
func (h *hostile) took(t *testing.T) *sip.Call {
	t.Helper()
	select {
	case c := <-h.calls:
		return c
	case <-time.After(5 * time.Second):
		t.Fatal("the ACKed call did not reach OnCall")
		return nil
	}
}
