package twilio

import (
	"context"
	"errors"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/brisvox/brisvox/media/carrier/internal/carriertest"
	"github.com/brisvox/brisvox/media/conn"
	"github.com/coder/websocket"
	"github.com/rs/zerolog"
)

// TestHangupCloseCodes: the way the server ends a stream is the close
// code Twilio reads: 1013 and 1011 for a call ended for capacity or an
// error, never 1000. Mutation caught (seen failing in pcmws, the same
// CloseCode): 1000 for every kind.
func TestHangupCloseCodes(t *testing.T) {
	for _, tc := range []struct {
		kind conn.EndKind
		code websocket.StatusCode
	}{
		{conn.EndTryLater, websocket.StatusTryAgainLater},
		{conn.EndInternal, websocket.StatusInternalError},
		{conn.EndGoingAway, websocket.StatusGoingAway},
		{conn.EndNormal, websocket.StatusNormalClosure},
	} {
		t.Run(tc.kind.String(), func(t *testing.T) {
			inBubble(t, Config{}, func(r *rig) {
				f, call := r.open()
				call.Hangup(tc.kind, "the call could not be started")
				if ce := f.readClose(); ce.Code != tc.code {
					t.Fatalf("close %+v, want %d", ce, tc.code)
				}
				<-call.Done()
			})
		})
	}
}

// TestInvalidUTF8 closes the stream with 1007, a protocol error, before
// and after the start. Mutation caught (seen failing): no UTF-8 check
// (the message is counted as bad JSON and the stream goes on).
func TestInvalidUTF8(t *testing.T) {
	inBubble(t, Config{}, func(r *rig) {
		f, call := r.open()
		f.sendRaw(websocket.MessageText, []byte("{\"event\":\"mark\",\"mark\":{\"name\":\"\xc3\x28\"}}"))
		if ce := f.readClose(); ce.Code != websocket.StatusInvalidFramePayloadData {
			t.Fatalf("close %+v, want 1007", ce)
		}
		<-call.Done()
		if !errors.Is(call.Err(), conn.ErrProtocol) {
			t.Fatalf("end %v", call.Err())
		}
		f2 := r.dial()
		f2.sendRaw(websocket.MessageText, []byte("\xff"))
		if ce := f2.readClose(); ce.Code != websocket.StatusInvalidFramePayloadData {
			t.Fatalf("before start: close %+v, want 1007", ce)
		}
		synctest.Wait()
		if r.h.Stats()["invalid_utf8"] != 2 {
			t.Fatalf("invalid_utf8 %d", r.h.Stats()["invalid_utf8"])
		}
	})
}

// opensslSignature is Twilio's signature of url computed by an
// independent implementation: openssl's HMAC-SHA1, base64.
func opensslSignature(t *testing.T, token, url string) string {
	t.Helper()
	cmd := exec.Command("sh", "-c", `printf %s "$URL" | openssl dgst -sha1 -hmac "$TOKEN" -binary | base64`)
	cmd.Env = []string{"URL=" + url, "TOKEN=" + token, "PATH=/usr/bin:/bin:/usr/local/bin"}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("openssl: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// TestSignature: with an AuthToken, the upgrade must carry the
// X-Twilio-Signature of the URL Twilio requested (PublicURL and the
// path, or wss:// and the Host), the URL with or without its port (the
// variant Twilio's own validators accept), or is refused with 403 before
// admission. Vectors are computed with openssl. The defect: /twilio
// accepted any client. Mutations caught (each seen failing): no check
// (every bad case upgraded), the port variant not tried (the cases
// without the port refused).
func TestSignature(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl not installed: no independent implementation to compare with")
	}
	const token = "12345"
	cases := []struct {
		name      string
		publicURL string
		path      string
		signed    string // the URL the signature is over; "" sends none
		key       string
		ok        bool
	}{
		{name: "host header", path: "/twilio", signed: "wss://pipe.invalid:80/twilio", ok: true},
		{name: "without the port", path: "/twilio", signed: "wss://pipe.invalid/twilio", ok: true},
		{name: "another port", path: "/twilio", signed: "wss://pipe.invalid:443/twilio"},
		{name: "trailing slash", path: "/twilio", signed: "wss://pipe.invalid:80/twilio/"},
		{name: "http scheme", path: "/twilio", signed: "https://pipe.invalid:80/twilio"},
		{name: "query signed", path: "/twilio?agent=a%20b", signed: "wss://pipe.invalid:80/twilio?agent=a%20b", ok: true},
		{name: "query not signed", path: "/twilio?agent=x", signed: "wss://pipe.invalid:80/twilio"},
		{name: "wrong token", path: "/twilio", signed: "wss://pipe.invalid:80/twilio", key: "54321"},
		{name: "missing", path: "/twilio"},
		{name: "public URL", publicURL: "wss://voice.example.com/base/", path: "/twilio",
			signed: "wss://voice.example.com/base/twilio", ok: true},
		{name: "public URL with its standard port", publicURL: "wss://voice.example.com/base", path: "/twilio",
			signed: "wss://voice.example.com:443/base/twilio", ok: true},
		{name: "public URL, host signed", publicURL: "wss://voice.example.com", path: "/twilio",
			signed: "wss://pipe.invalid:80/twilio"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				adm := &carriertest.Admitter{Limit: 10}
				h, err := New(Config{AuthToken: token, PublicURL: tc.publicURL, Admit: adm.Admit, OnCall: func(*Call) {}})
				if err != nil {
					t.Fatal(err)
				}
				srv := carriertest.NewPipeServer(h)
				defer func() { h.Close(); srv.Close() }()
				var hdr http.Header
				if tc.signed != "" {
					key := tc.key
					if key == "" {
						key = token
					}
					sig := opensslSignature(t, key, tc.signed)
					if key == token && sig != Signature([]byte(token), tc.signed) {
						t.Fatalf("Signature(%q) differs from openssl's %q", tc.signed, sig)
					}
					hdr = carriertest.Header(SignatureHeader, sig)
				}
				c, resp, body, err := carriertest.DialRaw(context.Background(), srv, tc.path, hdr)
				if tc.ok {
					if err != nil {
						t.Fatalf("refused: %v %s", err, body)
					}
					c.Close()
					return
				}
				if resp == nil || resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), SignatureHeader) {
					t.Fatalf("%v %s, want 403", err, body)
				}
				if adm.Admitted() != 0 || h.Stats()["forbidden"] != 1 {
					t.Fatalf("admitted %d, forbidden %d: the check must come before admission", adm.Admitted(), h.Stats()["forbidden"])
				}
			})
		})
	}
	for _, bad := range []Config{{PublicURL: "wss://x.example"}, {AuthToken: "t", PublicURL: "https://x.example"},
		{AuthToken: "t", PublicURL: "wss://x.example/?q=1"}} {
		bad.OnCall = func(*Call) {}
		if _, err := New(bad); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("config %+v accepted: %v", bad, err)
		}
	}
}

// TestLogLinesStrictJSON: every line the handler logs over a refusal, a
// denial and a stream is one JSON object with no key twice, and none
// holds the signature or Twilio's ids. Mutation caught (seen failing in
// pcmws, the same end line): call_id added twice.
func TestLogLinesStrictJSON(t *testing.T) {
	var log carriertest.LogBuffer
	inBubble(t, Config{Logger: zerolog.New(&log), Admit: (&carriertest.Admitter{Limit: 1}).Admit}, func(r *rig) {
		f, call := r.open()
		if _, resp, err := r.srv.Dial(context.Background(), "/twilio"); err == nil || resp.StatusCode != 503 {
			t.Fatalf("second stream: %v", err)
		}
		f.stop()
		<-call.Done()
	})
	lines := log.Bytes()
	if n := carriertest.StrictJSONLines(t, lines); n < 3 {
		t.Fatalf("%d log lines, want start, refusal and end:\n%s", n, lines)
	}
	for _, secret := range []string{testCallSID, testStreamSID, testAccount, "+1555"} {
		if strings.Contains(string(lines), secret) {
			t.Fatalf("the log holds %q:\n%s", secret, lines)
		}
	}
}

// FuzzPortVariant: the port variant of any URL never panics, keeps the
// scheme and everything after the host as sent, and toggles the port:
// the variant of a URL with a port has none, and the variant of that is
// the URL with the scheme's standard port.
func FuzzPortVariant(f *testing.F) {
	for _, s := range []string{"wss://voice.example.com/twilio", "wss://h:443/t?x=a%20b", "wss://[::1]:8443/t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		v, ok := portVariant(raw)
		if !ok {
			return
		}
		scheme, rest, _ := strings.Cut(raw, "://")
		vs, vrest, _ := strings.Cut(v, "://")
		tail := rest[strings.IndexAny(rest+"/", "/?#"):]
		if vs != scheme || !strings.HasSuffix(vrest, tail) {
			t.Fatalf("%q -> %q: scheme or tail changed", raw, v)
		}
		v2, ok := portVariant(v)
		if !ok {
			t.Fatalf("%q -> %q has no variant", raw, v)
		}
		if v3, _ := portVariant(v2); v3 != v {
			t.Fatalf("%q -> %q -> %q -> %q: the port does not toggle", raw, v, v2, v3)
		}
	})
}
