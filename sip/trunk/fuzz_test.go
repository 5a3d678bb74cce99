package trunk

import (
	"bytes"
	"net/netip"
	"strings"
	"testing"
)

// FuzzFilter: no input panics the filter; a source outside the allowlist
// is always dropped, grows no state and allocates nothing; a scanner
// verdict needs a User-Agent header holding a listed word.
func FuzzFilter(f *testing.F) {
	f.Add([]byte{192, 0, 2, 1}, uint16(5060), invite("User-Agent: friendly-scanner\r\n", ""), false)
	f.Add([]byte{192, 0, 2, 1}, uint16(5060), invite("", "User-Agent: sipvicious\r\n"), true)
	f.Add([]byte{10, 0, 0, 1}, uint16(5060), invite("", ""), false)
	f.Add(netip.MustParseAddr("2001:db8::1").AsSlice(), uint16(5061), []byte("\r\n\r\nOPTIONS sip:a SIP/2.0\r\nl: 2\r\n\r\nxxBYE sip:b SIP/2.0\r\nuser-agent : x\r\n\tsipcli\r\n\r\n"), true)
	f.Add(netip.MustParseAddr("::ffff:192.0.2.9").AsSlice(), uint16(0), []byte{0, 1, 2, 0xff}, false)
	allow := []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24"), netip.MustParsePrefix("2001:db8::/32")}
	p := newPolicy(f, Config{Allow: allow, Rate: 1e9, Burst: 1e9, MaxSources: 64, Scanners: []string{"evil-dialer"}})
	words := p.cfg.Scanners
	f.Fuzz(func(t *testing.T, addr []byte, port uint16, data []byte, stream bool) {
		a, ok := netip.AddrFromSlice(addr)
		if !ok {
			return
		}
		src := netip.AddrPortFrom(a, port)
		filter := p.Filter
		if stream {
			filter = p.FilterStream
		}
		before := p.Stats()[StatSources]
		v := filter(src, data, t0)
		if !p.allowed(a.Unmap()) {
			if v != DropNotAllowed {
				t.Fatalf("source outside the allowlist: %v", v)
			}
			if p.Stats()[StatSources] != before {
				t.Fatal("a source outside the allowlist grew state")
			}
			if !raceEnabled {
				if n := testing.AllocsPerRun(5, func() { filter(src, data, t0) }); n != 0 {
					t.Fatalf("not-allowed path allocates %v times", n)
				}
			}
			return
		}
		if v == DropNotAllowed {
			t.Fatal("an allowed source refused")
		}
		if v == DropScanner {
			low := bytes.ToLower(data)
			if !bytes.Contains(low, []byte("user-agent")) {
				t.Fatal("scanner verdict without a User-Agent header")
			}
			found := false
			for _, w := range words {
				found = found || bytes.Contains(low, []byte(strings.ToLower(w)))
			}
			if !found {
				t.Fatal("scanner verdict without a listed word")
			}
		}
		if v == DropOversize && (stream || len(data) <= p.cfg.MaxMessageBytes) {
			t.Fatalf("oversize verdict for %d bytes (stream %v)", len(data), stream)
		}
	})
}

// FuzzAuthorization: the parser never panics; what it accepts survives a
// round trip through quoting; Verify refuses whatever it is given (no
// nonce of this policy can be answered without the password).
func FuzzAuthorization(f *testing.F) {
	for _, c := range captured {
		f.Add(c.header)
	}
	f.Add(`Digest username="a\"b", realm="brisvox", nonce="n", uri="sip:x", response="00", qop=auth, nc=00000001, cnonce="c"`)
	f.Add(`Digest a=1, a=2`)
	f.Add("Digest a=\"\r\n\"")
	f.Add(`Basic YWxpY2U6czNjcmV0`)
	p := newPolicy(f, Config{Users: map[string]string{"alice": "s3cret"}})
	for range 4 {
		if _, err := p.Challenge(t0); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		scheme, params, err := parseAuthorization(s, nil)
		if err == nil {
			var b strings.Builder
			b.WriteString(scheme)
			for i, q := range params {
				if i == 0 {
					b.WriteByte(' ')
				} else {
					b.WriteString(", ")
				}
				b.WriteString(q.name)
				b.WriteByte('=')
				quote(&b, q.value)
			}
			if b.Len() <= MaxAuthorizationBytes {
				scheme2, params2, err := parseAuthorization(b.String(), nil)
				if err != nil || scheme2 != scheme || len(params2) != len(params) {
					t.Fatalf("round trip of %q: %q %v %v", s, b.String(), params2, err)
				}
				for i := range params {
					if params[i] != params2[i] {
						t.Fatalf("round trip of %q: %v != %v", s, params[i], params2[i])
					}
				}
			}
			for _, q := range params {
				for j := 0; j < len(q.value); j++ {
					if q.value[j] == '\r' || q.value[j] == '\n' || q.value[j] == 0 {
						t.Fatalf("control character in %q", q.value)
					}
				}
			}
		}
		if err := p.Verify("INVITE", "sip:1000@127.0.0.1", s, t0); err == nil {
			t.Fatalf("Verify accepted %q", s)
		}
	})
}
