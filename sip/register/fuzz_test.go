package register

import (
	"context"
	"testing"

	"github.com/emiago/sipgo/sip"
)

// FuzzResponse feeds a registrar's answer (parsed by sipgo) to the
// client's reading of it: the granted expiry, Min-Expires and the digest
// challenge must never panic, and a success must grant a positive time.
func FuzzResponse(f *testing.F) {
	f.Add([]byte("SIP/2.0 200 OK\r\nContact: <sip:alice@127.0.0.1:5070>;expires=60\r\nExpires: 3600\r\nContent-Length: 0\r\n\r\n"))
	f.Add([]byte("SIP/2.0 423 Interval Too Brief\r\nMin-Expires: 7200\r\nContent-Length: 0\r\n\r\n"))
	f.Add([]byte("SIP/2.0 401 Unauthorized\r\nWWW-Authenticate: Digest realm=\"x\", nonce=\"abc\", qop=\"auth\", algorithm=SHA-256\r\nContent-Length: 0\r\n\r\n"))
	f.Add([]byte("SIP/2.0 407 Proxy Authentication Required\r\nProxy-Authenticate: Digest realm=\"x\"\r\nContent-Length: 0\r\n\r\n"))
	parser := sip.NewParser()
	f.Fuzz(func(t *testing.T, data []byte) {
		msg, err := parser.ParseSIP(data)
		if err != nil {
			return
		}
		res, isRes := msg.(*sip.Response)
		if !isRes {
			return
		}
		c, err := New(testConfig(), senderFunc(func(ctx context.Context, req *sip.Request) (*sip.Response, error) {
			out := res.Clone()
			return out, nil
		}))
		if err != nil {
			t.Fatal(err)
		}
		o := c.send(context.Background(), 3600e9)
		if o.err == nil && res.StatusCode < 300 && o.granted <= 0 {
			t.Fatalf("success with no binding: %+v", o)
		}
	})
}

type senderFunc func(ctx context.Context, req *sip.Request) (*sip.Response, error)

func (f senderFunc) Request(ctx context.Context, req *sip.Request) (*sip.Response, error) {
	return f(ctx, req)
}
