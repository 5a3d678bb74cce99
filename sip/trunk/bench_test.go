package trunk

import (
	"testing"
	"time"
)

// BenchmarkFilter: one datagram on each path; the allocation budgets are
// pinned in TestAllowedPathDoesNotAllocate and TestNotAllowedGrowsNothing.
func BenchmarkFilter(b *testing.B) {
	msg := invite("User-Agent: baresip v1.0.0 (x86_64/linux)\r\nContact: <sip:a@192.0.2.1>\r\nAllow: INVITE, ACK, BYE, CANCEL, OPTIONS\r\n",
		"v=0\r\no=- 1 1 IN IP4 192.0.2.1\r\ns=-\r\nc=IN IP4 192.0.2.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0 8 101\r\n")
	b.Run("allowed", func(b *testing.B) {
		p := newPolicy(b, Config{Rate: 1e12, Burst: 1 << 40})
		src, now := ap("192.0.2.1:5060"), t0
		b.ReportAllocs()
		b.SetBytes(int64(len(msg)))
		for b.Loop() {
			now = now.Add(time.Microsecond)
			if p.Filter(src, msg, now) != Pass {
				b.Fatal("dropped")
			}
		}
	})
	b.Run("not_allowed", func(b *testing.B) {
		p := newPolicy(b, Config{Allow: open()[1:]}) // IPv6 only
		src := ap("192.0.2.1:5060")
		b.ReportAllocs()
		for b.Loop() {
			if p.Filter(src, msg, t0) != DropNotAllowed {
				b.Fatal("passed")
			}
		}
	})
	b.Run("blocked", func(b *testing.B) {
		p := newPolicy(b, Config{Rate: 1, Burst: 1})
		src := ap("192.0.2.1:5060")
		p.Filter(src, msg, t0)
		b.ReportAllocs()
		for b.Loop() {
			p.Filter(src, msg, t0)
		}
	})
}

func BenchmarkVerify(b *testing.B) {
	for _, alg := range []string{AlgorithmMD5, AlgorithmSHA256} {
		b.Run(alg, func(b *testing.B) {
			p := newPolicy(b, Config{Users: map[string]string{"alice": "s3cret"}, Algorithm: alg, MaxPending: 1 << 20})
			t := &testing.T{}
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				v, _ := p.Challenge(t0)
				h := answer{user: "alice", pass: "s3cret", uri: uri}.header(t, challengeParams(t, v), "INVITE")
				b.StartTimer()
				if err := p.Verify("INVITE", uri, h, t0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
