package signal

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emiago/sipgo/sip"
	"github.com/rs/zerolog"
)

const testSDP = "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 6000 RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n"

// msg builds a SIP message from lines, with Content-Length computed.
func msg(t testing.TB, body string, lines ...string) *sip.Request {
	t.Helper()
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l)
		b.WriteString("\r\n")
	}
	if body != "" {
		b.WriteString("Content-Type: application/sdp\r\n")
	}
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s", len(body), body)
	m, err := sip.ParseMessage([]byte(b.String()))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	req, ok := m.(*sip.Request)
	if !ok {
		t.Fatalf("not a request")
	}
	req.SetSource("127.0.0.1:5070")
	req.SetTransport("UDP")
	return req
}

// inviteLines is an INVITE from 127.0.0.1:5070 with extra header lines.
func inviteLines(extra ...string) []string {
	return append([]string{
		"INVITE sip:bot@127.0.0.1:5060 SIP/2.0",
		"Via: SIP/2.0/UDP 127.0.0.1:5070;branch=z9hG4bK-inv1",
		"From: <sip:caller@127.0.0.1:5070>;tag=caller1",
		"To: <sip:bot@127.0.0.1:5060>",
		"Call-ID: call-1@test",
		"CSeq: 1 INVITE",
		"Contact: <sip:caller@127.0.0.1:5070>",
		"Max-Forwards: 70",
	}, extra...)
}

// inDialogLines is a request of the caller in dialog d.
func inDialogLines(d *Dialog, method string, cseq int, extra ...string) []string {
	return append([]string{
		method + " sip:caller@127.0.0.1:5060 SIP/2.0",
		fmt.Sprintf("Via: SIP/2.0/UDP 127.0.0.1:5070;branch=z9hG4bK-%s%d", strings.ToLower(method), cseq),
		"From: <sip:caller@127.0.0.1:5070>;tag=caller1",
		"To: <sip:bot@127.0.0.1:5060>;tag=" + d.localTag,
		"Call-ID: call-1@test",
		fmt.Sprintf("CSeq: %d %s", cseq, method),
		"Contact: <sip:caller@127.0.0.1:5070>",
		"Max-Forwards: 70",
	}, extra...)
}

// sent is one message our side put on the fake wire.
type sent struct {
	at   time.Time
	kind string // "resend", "request", "ack"
	msg  sip.Message
}

// fakeWire records what a dialog sends; answer decides the final
// response to each request (nil: 200 OK).
type fakeWire struct {
	mu     sync.Mutex
	log    []sent
	answer func(req *sip.Request) (*sip.Response, error)
}

var _ wire = (*fakeWire)(nil)

func (w *fakeWire) add(kind string, m sip.Message) {
	w.mu.Lock()
	w.log = append(w.log, sent{time.Now(), kind, m})
	w.mu.Unlock()
}

func (w *fakeWire) resend(res *sip.Response) error { w.add("resend", res); return nil }
func (w *fakeWire) ack(req *sip.Request) error     { w.add("ack", req); return nil }
func (w *fakeWire) request(ctx context.Context, req *sip.Request) (*sip.Response, error) {
	w.add("request", req)
	w.mu.Lock()
	answer := w.answer
	w.mu.Unlock()
	if answer != nil {
		return answer(req)
	}
	return sip.NewResponseFromRequest(req, 200, "OK", nil), nil
}

func (w *fakeWire) sent(kind string) []sent {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []sent
	for _, s := range w.log {
		if s.kind == kind {
			out = append(out, s)
		}
	}
	return out
}

// methods are the methods of the requests sent, in order.
func (w *fakeWire) methods() []string {
	var out []string
	for _, s := range w.sent("request") {
		out = append(out, string(s.msg.(*sip.Request).Method))
	}
	return out
}

// fakeTx records the responses to one request.
type fakeTx struct {
	mu       sync.Mutex
	res      []*sip.Response
	onCancel sip.FnTxCancel
	fail     error
}

var _ inviteTx = (*fakeTx)(nil)

func (tx *fakeTx) Respond(res *sip.Response) error {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	if tx.fail != nil {
		return tx.fail
	}
	tx.res = append(tx.res, res)
	return nil
}

func (tx *fakeTx) OnCancel(f sip.FnTxCancel) bool {
	tx.mu.Lock()
	tx.onCancel = f
	tx.mu.Unlock()
	return true
}

func (tx *fakeTx) codes() []int {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	var out []int
	for _, r := range tx.res {
		out = append(out, r.StatusCode)
	}
	return out
}

func (tx *fakeTx) last() *sip.Response {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	if len(tx.res) == 0 {
		return nil
	}
	return tx.res[len(tx.res)-1]
}

// fakeMedia records the dialog's calls.
type fakeMedia struct {
	mu        sync.Mutex
	reoffers  [][]byte
	answers   [][]byte
	infos     []string
	confirmed int
	ended     []error
	reoffer   func(offer []byte) ([]byte, error)
}

var _ Media = (*fakeMedia)(nil)

func (m *fakeMedia) Reoffer(offer []byte) ([]byte, error) {
	m.mu.Lock()
	m.reoffers = append(m.reoffers, offer)
	f := m.reoffer
	m.mu.Unlock()
	if f != nil {
		return f(offer)
	}
	return []byte(testSDP), nil
}

func (m *fakeMedia) Answer(a []byte) error {
	m.mu.Lock()
	m.answers = append(m.answers, a)
	m.mu.Unlock()
	return nil
}

func (m *fakeMedia) Info(ct string, _ []byte) int {
	m.mu.Lock()
	m.infos = append(m.infos, ct)
	m.mu.Unlock()
	return 200
}

func (m *fakeMedia) Confirmed() {
	m.mu.Lock()
	m.confirmed++
	m.mu.Unlock()
}

func (m *fakeMedia) Ended(cause error) {
	m.mu.Lock()
	m.ended = append(m.ended, cause)
	m.mu.Unlock()
}

func (m *fakeMedia) endedWith() []error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]error(nil), m.ended...)
}

// testEnv is an env over a fake wire.
func testEnv(cfg Config, w wire, tasks *sync.WaitGroup) *env {
	if len(cfg.Listen) == 0 {
		cfg.Listen = []Listen{{Network: "udp", Addr: "127.0.0.1:0"}}
	}
	return &env{
		cfg:    cfg.withDefaults(),
		log:    zerolog.Nop(),
		stats:  newCounters(),
		wire:   w,
		tasks:  tasks,
		byeCtx: context.Background(),
		forget: func(*Dialog) {},
		rng:    rand.New(rand.NewPCG(1, 2)),
	}
}

// answeredDialog is a dialog whose 200 to inv was just handed over.
func answeredDialog(t testing.TB, e *env, inv *sip.Request, m Media) *Dialog {
	t.Helper()
	d := newDialog(e, inv, netip.MustParseAddrPort("127.0.0.1:5070"), "127.0.0.1", 5060)
	se, ref, r := negotiate(inv, &e.cfg)
	if r != nil {
		t.Fatalf("negotiate: %d", r.Code)
	}
	res := buildResponse(inv, 200, "", []byte(testSDP), d.localTag, d.okHeaders(se, ref, inv)...)
	d.start(answer{media: m, local: []byte(testSDP), res: res, offerInOK: len(inv.Body()) == 0, se: se, refresher: ref}, inv)
	return d
}

// offsets are the times of sends relative to t0.
func offsets(t0 time.Time, ss []sent) []time.Duration {
	var out []time.Duration
	for _, s := range ss {
		out = append(out, s.at.Sub(t0))
	}
	return out
}
