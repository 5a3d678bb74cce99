package signal

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/emiago/sipgo/sip"
)

// FuzzSessionTimer feeds the peer's Session-Expires and Min-SE values
// (outside input: parseSessionExpires, parseMinSE, negotiate) and checks
// what negotiate may answer: 400 or 422 only, an interval never below our
// Min-SE nor above a day, a refresher always named, and a value that
// parses formats back to itself.
func FuzzSessionTimer(f *testing.F) {
	for _, seed := range [][2]string{
		{"90;refresher=uac", ""}, {"1800", "90"}, {"60", ""}, {"4294967296", ""},
		{" 120 ; refresher = UAS ;x=y", "100;ext"}, {"abc", ""}, {"90;refresher=nobody", ""}, {"", "0"},
	} {
		f.Add(seed[0], seed[1])
	}
	cfg := (&Config{Listen: []Listen{{Network: "udp", Addr: "127.0.0.1:0"}}}).withDefaults()
	f.Fuzz(func(t *testing.T, se, minSE string) {
		if secs, r, err := parseSessionExpires(se); err == nil {
			if secs == 0 || secs > maxDelta {
				t.Fatalf("%q parsed to %d", se, secs)
			}
			back := strconv.Itoa(int(secs))
			if r != refresherNone {
				back += ";refresher=" + string(r)
			}
			s2, r2, err := parseSessionExpires(back)
			if err != nil || s2 != secs || r2 != r {
				t.Fatalf("%q -> %q does not parse back: %d %q %v", se, back, s2, r2, err)
			}
		}
		req := sip.NewRequest(sip.INVITE, sip.Uri{Scheme: "sip", Host: "127.0.0.1"})
		req.AppendHeader(sip.NewHeader("Supported", "timer"))
		if se != "" {
			req.AppendHeader(sip.NewHeader("Session-Expires", se))
		}
		if minSE != "" {
			req.AppendHeader(sip.NewHeader("Min-SE", minSE))
		}
		got, r, refusal := negotiate(req, &cfg)
		if refusal != nil {
			if refusal.Code != 400 && refusal.Code != 422 {
				t.Fatalf("refused %d", refusal.Code)
			}
			return
		}
		if got < cfg.MinSE || got > maxDelta*time.Second {
			t.Fatalf("interval %v out of [%v, 1 day]", got, cfg.MinSE)
		}
		if r != refresherUAC && r != refresherUAS {
			t.Fatalf("refresher %q", r)
		}
	})
}

// FuzzServeRequest feeds whole requests (parsed by sipgo, as the network
// would deliver them) to the request handling with fake transactions:
// no handler may panic (a recovered panic is still a bug on that input),
// every answer is a valid final or provisional code, and Close leaves no
// dialog.
func FuzzServeRequest(f *testing.F) {
	for _, seed := range fuzzSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := sip.ParseMessage(raw)
		if err != nil {
			return
		}
		req, ok := m.(*sip.Request)
		if !ok {
			return
		}
		req.SetSource("127.0.0.1:5070")
		req.SetTransport("UDP")
		s, _ := newTestServer(t, Config{SessionExpires: -1}, answerWith(&fakeMedia{}))
		tx := &fakeTx{}
		s.serveRequest(req, tx, tx)
		for _, code := range tx.codes() {
			if code < 100 || code > 699 {
				t.Fatalf("answered %d", code)
			}
		}
		s.Close()
		if st := s.Stats(); st.Panics != 0 {
			t.Fatalf("%d panics", st.Panics)
		}
		if n := len(s.Dialogs()); n != 0 {
			t.Fatalf("%d dialogs after Close", n)
		}
	})
}

func fuzzSeeds(tb testing.TB) [][]byte {
	join := func(body string, lines ...string) []byte {
		return []byte(strings.Join(lines, "\r\n") + "\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
	}
	return [][]byte{
		join(testSDP, inviteLines("Content-Type: application/sdp", "Supported: timer", "Session-Expires: 90;refresher=uac")...),
		join("", inviteLines("Require: 100rel")...),
		join("", outOfDialog("OPTIONS")...),
		join("", outOfDialog("BYE")...),
		join("", outOfDialog("FROB")...),
		join("", "INVITE sip:x SIP/2.0", "Via: SIP/2.0/UDP h;branch=z9hG4bK-1", "CSeq: 1 INVITE", "Call-ID: c"),
	}
}
