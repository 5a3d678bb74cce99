package validate

import (
	"os"
	"testing"

	"github.com/emiago/sipgo/sip"
)

// BenchmarkCheck: Check on a typical INVITE from a trunk, and on one
// through a proxy chain (RFC 4475 longreq: 43 headers).
func BenchmarkCheck(b *testing.B) {
	cases := []struct {
		name string
		req  *sip.Request
	}{
		{"typical INVITE", parse(b, invite().text())},
		{"longreq", parse(b, string(mustRead(b, tortureDir+"/valid/longreq.dat")))},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			o := Options{Supported: []string{"timer"}}
			if r := Check(c.req, o); r != nil {
				b.Fatal(r)
			}
			b.ReportAllocs()
			for b.Loop() {
				if Check(c.req, o) != nil {
					b.Fatal("refused")
				}
			}
		})
	}
}

// BenchmarkCheckTooManyHeaders: the 10 000-Via request costs a count.
func BenchmarkCheckTooManyHeaders(b *testing.B) {
	req := sip.NewRequest(sip.INVITE, sip.Uri{Scheme: "sip", Host: "b.example"})
	for i := 0; i < 10000; i++ {
		req.AppendHeader(&sip.ViaHeader{ProtocolName: "SIP", ProtocolVersion: "2.0", Transport: "UDP", Host: "192.0.2.1"})
	}
	b.ReportAllocs()
	for b.Loop() {
		if r := Check(req, Options{}); r == nil || r.Cause != CauseTooManyHeaders {
			b.Fatal(r)
		}
	}
}

// TestCheckAllocs pins the budget: a request that passes costs no
// allocation, with the default Options and with a map of our own.
func TestCheckAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation counts")
	}
	req := parse(t, invite().with("Require: timer", "Accept: application/sdp").text())
	for _, o := range []Options{
		{Supported: []string{"timer"}},
		{Stream: true, Supported: []string{"timer"}},
		{Supported: []string{"timer"}, Accept: map[sip.RequestMethod][]string{sip.INVITE: {"application/sdp"}}},
	} {
		if r := Check(req, o); r != nil {
			t.Fatal(r)
		}
		if n := testing.AllocsPerRun(100, func() { Check(req, o) }); n != 0 {
			t.Errorf("%v allocations per Check with %+v; want 0", n, o)
		}
	}
}

func mustRead(b *testing.B, path string) []byte {
	b.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	return data
}
