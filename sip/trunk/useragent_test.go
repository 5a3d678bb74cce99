package trunk

import (
	"os"
	"strings"
	"testing"
)

func TestScannerUserAgents(t *testing.T) {
	tests := []struct {
		name string
		msg  string
		want Verdict
	}{
		{"svmap's default", string(invite("User-Agent: friendly-scanner\r\n", "")), DropScanner},
		{"case-insensitive value", string(invite("User-Agent: Friendly-Scanner\r\n", "")), DropScanner},
		{"case-insensitive name", string(invite("user-agent: sipcli/v1.8\r\n", "")), DropScanner},
		{"space before the colon", string(invite("User-Agent  : VaxSIPUserAgent/3.1\r\n", "")), DropScanner},
		{"a word inside a longer value", string(invite("User-Agent: Mozilla (compatible; SIPScan 2.0)\r\n", "")), DropScanner},
		{"the second User-Agent", string(invite("User-Agent: Linphone\r\nUser-Agent: sundayddr\r\n", "")), DropScanner},
		// Mutation: scanning only the first line of a header misses it.
		{"folded onto a continuation line", string(invite("User-Agent: Foo\r\n  sipvicious\r\n", "")), DropScanner},
		{"bare LF line ends", strings.ReplaceAll(string(invite("User-Agent: iWar\r\n", "")), "\r\n", "\n"), DropScanner},
		{"configured extension", string(invite("User-Agent: evil-dialer 1.0\r\n", "")), DropScanner},
		{"baresip", string(invite("User-Agent: baresip v1.0.0 (x86_64/linux)\r\n", "")), Pass},
		{"sipp", string(invite("User-Agent: sipp\r\n", "")), Pass},
		{"no User-Agent", string(invite("", "")), Pass},
		// Mutation: matching substrings instead of words drops these.
		{"a word as part of a longer one", string(invite("User-Agent: Asmapper/2 Gulpy\r\n", "")), Pass},
		{"a word at the end of a longer one", string(invite("User-Agent: BigGulp 1.0 (Xsmap)\r\n", "")), Pass},
		// Mutation: scanning past the header section drops these.
		{"in the body", string(invite("", "User-Agent: friendly-scanner\r\n")), Pass},
		{"in the body after a bare LF blank line", "OPTIONS sip:a SIP/2.0\nVia: x\n\nUser-Agent: friendly-scanner\n", Pass},
		{"in another header", string(invite("Subject: friendly-scanner\r\nX-User-Agent: friendly-scanner\r\n", "")), Pass},
		{"in the request URI", "OPTIONS sip:friendly-scanner@a SIP/2.0\r\nVia: x\r\n\r\n", Pass},
		{"User-Agent without a colon", "OPTIONS sip:a SIP/2.0\r\nUser-Agent friendly-scanner\r\n\r\n", Pass},
		{"start line only", "OPTIONS sip:a SIP/2.0", Pass},
		{"empty", "", Pass},
	}
	p := newPolicy(t, Config{Scanners: []string{"evil-dialer"}})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := p.Filter(ap("192.0.2.1:5060"), []byte(tc.msg), t0); got != tc.want {
				t.Fatalf("Filter = %v, want %v", got, tc.want)
			}
		})
	}
}

// Every default scanner name is caught, and a scanner UA in the second
// message of a stream chunk too (but not one in the first message's
// body).
func TestScannerDefaultsAndStreams(t *testing.T) {
	p := newPolicy(t, Config{})
	for _, w := range DefaultScanners() {
		if v := p.Filter(ap("192.0.2.1:5060"), invite("User-Agent: "+w+"/1.0\r\n", ""), t0); v != DropScanner {
			t.Errorf("%s: %v", w, v)
		}
	}
	clean := invite("", "User-Agent: friendly-scanner\r\n")
	second := append(append([]byte{}, clean...), invite("User-Agent: sipvicious\r\n", "")...)
	tests := []struct {
		name  string
		chunk []byte
		msgs  int
		hit   bool
	}{
		{"one message, UA in the body", clean, 1, false},
		// Mutation: stopping after the first message's headers misses it.
		{"scanner in the second message", second, 2, true},
		{"keep-alive then a message", append([]byte("\r\n\r\n"), clean...), 1, false},
		{"cut in the headers", clean[:40], 1, false},
		{"Content-Length beyond the chunk", invite("", "v=0")[:len(invite("", "v=0"))-1], 1, false},
		{"compact Content-Length", []byte("OPTIONS sip:a SIP/2.0\r\nl: 3\r\n\r\nabcOPTIONS sip:b SIP/2.0\r\nUser-Agent: smap\r\n\r\n"), 2, true},
		{"bad Content-Length", []byte("OPTIONS sip:a SIP/2.0\r\nContent-Length: x\r\n\r\nOPTIONS sip:b SIP/2.0\r\n\r\n"), 1, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msgs, hit := p.scan.scan(tc.chunk, true)
			if msgs != tc.msgs || hit != tc.hit {
				t.Fatalf("scan = %d, %v; want %d, %v", msgs, hit, tc.msgs, tc.hit)
			}
		})
	}
}

// The User-Agent bytes compared are bounded: a name after the first KiB
// of User-Agent values is not looked for.
func TestScannerBudget(t *testing.T) {
	p := newPolicy(t, Config{MaxMessageBytes: 64 << 10})
	pad := strings.Repeat("x", maxAgentScan)
	if v := p.Filter(ap("192.0.2.1:5060"), invite("User-Agent: "+pad+" friendly-scanner\r\n", ""), t0); v != Pass {
		t.Fatalf("past the budget: %v", v)
	}
	many := strings.Repeat("User-Agent: "+strings.Repeat("y", 100)+"\r\n", 20)
	if v := p.Filter(ap("192.0.2.1:5060"), invite(many+"User-Agent: friendly-scanner\r\n", ""), t0); v != Pass {
		t.Fatalf("past the budget over several headers: %v", v)
	}
}

func TestParseLength(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"0", 0}, {"123", 123}, {"12 \r\n", 12}, {"", -1}, {"x", -1}, {"1x", -1},
		{"12345678901", -1}, {"1234567890", 1234567890},
	}
	for _, tc := range tests {
		if got := parseLength([]byte(tc.in)); got != tc.want {
			t.Errorf("parseLength(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// The datagrams svmap (sipvicious 0.3.3) sent to a listener on this
// machine: its default OPTIONS is dropped; its compact mode (-c) sends no
// User-Agent and passes this check (the allowlist is what stops it).
func TestRealSvmap(t *testing.T) {
	tests := []struct {
		file string
		want Verdict
	}{
		{"testdata/svmap-options.sip", DropScanner},
		{"testdata/svmap-compact-options.sip", Pass},
	}
	p := newPolicy(t, Config{})
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			msg, err := os.ReadFile(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			if v := p.Filter(ap("127.0.0.1:5060"), msg, t0); v != tc.want {
				t.Fatalf("Filter = %v, want %v", v, tc.want)
			}
		})
	}
}
