package trunk

import (
	"net/netip"
	"testing"
	"time"
)

// countingReader yields the bytes 0, 1, 2, ... (mod 256): a Policy built
// with it has opaque "1011121314151617" and hands out the nonce
// "202122232425262728292a2b2c2d2e2f" first, the values the captured
// sipp and baresip headers answer.
type countingReader struct{ n byte }

func (r *countingReader) Read(b []byte) (int, error) {
	for i := range b {
		b[i] = r.n
		r.n++
	}
	return len(b), nil
}

// t0 is the explicit time of the tests that need no bubble.
var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func open() []netip.Prefix {
	return []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0"), netip.MustParsePrefix("::/0")}
}

func newPolicy(t testing.TB, cfg Config, opts ...Option) *Policy {
	t.Helper()
	if cfg.Allow == nil {
		cfg.Allow = open()
	}
	p, err := New(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func ap(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }

// invite is a small valid INVITE with the given extra header lines and
// body.
func invite(headers, body string) []byte {
	return []byte("INVITE sip:1000@127.0.0.1 SIP/2.0\r\n" +
		"Via: SIP/2.0/UDP 127.0.0.2:5060;branch=z9hG4bK1\r\n" +
		"From: <sip:a@127.0.0.2>;tag=1\r\nTo: <sip:1000@127.0.0.1>\r\n" +
		"Call-ID: c1\r\nCSeq: 1 INVITE\r\nMax-Forwards: 70\r\n" + headers +
		"Content-Length: " + itoa(len(body)) + "\r\n\r\n" + body)
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}
