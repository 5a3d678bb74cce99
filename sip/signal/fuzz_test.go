package signal

import (
	"strconv"
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
