package register

import (
	"context"
	"errors"
	"net/netip"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/internal/leaktest"
	"github.com/brisvox/brisvox/sip/trunk"
	"github.com/emiago/sipgo/sip"
)

// sent is one REGISTER the fake registrar saw.
type sent struct {
	at      time.Time
	cseq    uint32
	callID  string
	expires uint32
	routes  []string
	auth    string
}

// fakeRegistrar is a Sender that answers with a script.
type fakeRegistrar struct {
	mu     sync.Mutex
	got    []sent
	answer func(ctx context.Context, n int, req *sip.Request) (*sip.Response, error)
}

func (f *fakeRegistrar) Request(ctx context.Context, req *sip.Request) (*sip.Response, error) {
	s := sent{at: time.Now(), cseq: req.CSeq().SeqNo, callID: req.CallID().Value()}
	if h := req.GetHeader("Expires"); h != nil {
		n, _ := strconv.ParseUint(h.Value(), 10, 32)
		s.expires = uint32(n)
	}
	for _, h := range req.GetHeaders("Route") {
		s.routes = append(s.routes, h.Value())
	}
	if h := req.GetHeader("Authorization"); h != nil {
		s.auth = h.Value()
	}
	f.mu.Lock()
	f.got = append(f.got, s)
	n := len(f.got)
	f.mu.Unlock()
	return f.answer(ctx, n, req)
}

func (f *fakeRegistrar) sent() []sent {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]sent(nil), f.got...)
}

func respond(req *sip.Request, code int, hs ...sip.Header) *sip.Response {
	res := sip.NewResponseFromRequest(req, code, "", nil)
	for _, h := range hs {
		res.AppendHeader(h)
	}
	return res
}

func ok(req *sip.Request, expires string) *sip.Response {
	if req.GetHeader("Expires").Value() == "0" {
		return respond(req, 200)
	}
	return respond(req, 200, sip.NewHeader("Expires", expires))
}

func testConfig() Config {
	return Config{
		Trunk: "carrier", Registrar: "sip:registrar.test", AOR: "alice@registrar.test",
		Contact: "sip:alice@127.0.0.1:5070", Seed: 7,
		Auth: &Credentials{User: "alice", Password: "secret"},
	}
}

// run starts a client in a bubble, lets f drive virtual time, closes it
// and checks that no goroutine is left.
func run(t *testing.T, cfg Config, f *fakeRegistrar, drive func(c *Client)) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		base := leaktest.Snapshot()
		c, err := New(cfg, f)
		if err != nil {
			t.Fatal(err)
		}
		c.Start()
		drive(c)
		c.Close()
		if st := c.State().State; st != StateUnregistered {
			t.Errorf("state after Close = %s", st)
		}
		synctest.Wait()
		if n := leaktest.Snapshot().NewSince(base); n != 0 {
			t.Errorf("%d goroutines left", n)
		}
	})
}

// TestRefreshBeforeExpiry: the binding is renewed at expiry minus
// min(expiry/2, 30 s), with the same Call-ID and a growing CSeq, and
// Close unregisters with Expires 0. Mutation caught: refreshing at the
// granted expiry itself (margin 0) or at the asked 3600 s instead of the
// granted 60 s moves the second REGISTER off 30 s; a new Call-ID per
// refresh (seen failing: callID check).
func TestRefreshBeforeExpiry(t *testing.T) {
	cases := []struct {
		name    string
		granted string
		want    time.Duration
	}{
		{"short binding refreshes at half", "40", 20 * time.Second},
		{"a minute", "60", 30 * time.Second},
		{"an hour refreshes 30 s early", "3600", 3570 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeRegistrar{answer: func(ctx context.Context, n int, req *sip.Request) (*sip.Response, error) {
				return ok(req, tc.granted), nil
			}}
			run(t, testConfig(), f, func(c *Client) {
				start := time.Now()
				synctest.Wait()
				if st := c.State(); st.State != StateRegistered || st.Code != 200 || st.Expires != time.Duration(mustAtoi(tc.granted))*time.Second {
					t.Errorf("status %+v", st)
				}
				time.Sleep(3*tc.want + time.Second)
				got := f.sent()
				if len(got) != 4 {
					t.Errorf("%d REGISTERs in %v, want 4", len(got), 3*tc.want+time.Second)
					return
				}
				for i, s := range got {
					if d := s.at.Sub(start); d != time.Duration(i)*tc.want {
						t.Errorf("REGISTER %d at %v, want %v", i, d, time.Duration(i)*tc.want)
					}
					if s.callID != got[0].callID {
						t.Errorf("REGISTER %d changed the Call-ID", i)
					}
					if i > 0 && s.cseq <= got[i-1].cseq {
						t.Errorf("CSeq %d after %d", s.cseq, got[i-1].cseq)
					}
					if s.expires != 3600 {
						t.Errorf("asked %d s, want 3600", s.expires)
					}
				}
			})
			last := f.sent()[len(f.sent())-1]
			if last.expires != 0 {
				t.Errorf("last REGISTER asks %d s, want the unregister (0)", last.expires)
			}
		})
	}
}

func mustAtoi(s string) int { n, _ := strconv.Atoi(s); return n }

// TestBackoffGrowsAndIsCapped: a registrar that answers 503 is asked
// again after 2, 4, 8... s less up to 20% jitter, never more than
// BackoffMax. Mutation caught: no doubling (all gaps 2 s) or no cap
// (gaps past 10 s).
func TestBackoffGrowsAndIsCapped(t *testing.T) {
	f := &fakeRegistrar{answer: func(ctx context.Context, n int, req *sip.Request) (*sip.Response, error) {
		return respond(req, 503), nil
	}}
	cfg := testConfig()
	cfg.BackoffMax = 10 * time.Second
	run(t, cfg, f, func(c *Client) {
		time.Sleep(2 * time.Minute)
		if st := c.State(); st.State != StateRetrying || st.Code != 503 {
			t.Errorf("status %+v", st)
		}
	})
	got := f.sent()
	if len(got) < 8 {
		t.Fatalf("%d REGISTERs in 2 minutes", len(got))
	}
	for i := 1; i < len(got); i++ {
		want := min(2*time.Second<<(i-1), 10*time.Second)
		gap := got[i].at.Sub(got[i-1].at)
		if gap > want || gap < want*8/10 {
			t.Errorf("gap %d = %v, want %v less at most 20%%", i, gap, want)
		}
	}
	for _, s := range got {
		if s.expires == 0 {
			t.Error("unregistered a binding we never had")
		}
	}
}

// TestIntervalTooBrief: a 423 is answered at once with its Min-Expires.
// Mutation caught: ignoring Min-Expires (the retry asks 3600 again).
func TestIntervalTooBrief(t *testing.T) {
	f := &fakeRegistrar{answer: func(ctx context.Context, n int, req *sip.Request) (*sip.Response, error) {
		if req.GetHeader("Expires").Value() == "3600" {
			return respond(req, 423, sip.NewHeader("Min-Expires", "7200")), nil
		}
		return ok(req, "7200"), nil
	}}
	run(t, testConfig(), f, func(c *Client) {
		synctest.Wait()
		if st := c.State(); st.State != StateRegistered || st.Expires != 2*time.Hour {
			t.Errorf("status %+v", st)
		}
		if c.Stats()["interval_too_brief"] != 1 {
			t.Errorf("stats %v", c.Stats())
		}
	})
	got := f.sent()
	if len(got) != 3 || got[0].expires != 3600 || got[1].expires != 7200 || got[1].at != got[0].at {
		t.Errorf("REGISTERs %+v", got)
	}
}

// TestChallengeAnswered: the digest our client computes passes
// sip/trunk's verifier (the one that guards our own INVITEs). Mutation
// caught: signing another URI than the Request-URI, or the wrong method.
func TestChallengeAnswered(t *testing.T) {
	pol, err := trunk.New(trunk.Config{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, Users: map[string]string{"alice": "secret"}})
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeRegistrar{answer: func(ctx context.Context, n int, req *sip.Request) (*sip.Response, error) {
		h := req.GetHeader("Authorization")
		if h != nil {
			if err := pol.Verify("REGISTER", req.Recipient.String(), h.Value(), time.Now()); err == nil {
				return ok(req, "60"), nil
			}
		}
		ch, err := pol.Challenge(time.Now())
		if err != nil {
			return nil, err
		}
		return respond(req, 401, sip.NewHeader("WWW-Authenticate", ch)), nil
	}}
	run(t, testConfig(), f, func(c *Client) {
		synctest.Wait()
		if st := c.State(); st.State != StateRegistered {
			t.Errorf("status %+v stats %v", st, c.Stats())
		}
	})
	got := f.sent()
	if len(got) < 2 || got[0].auth != "" || got[1].auth == "" {
		t.Errorf("REGISTERs %+v", got)
	}
}

// TestUnauthorizedForeverIsBounded: a registrar that answers 401 to
// every answer gets MaxAuthAttempts+1 REGISTERs per round, then the
// client is "failed" and backs off. Mutation caught: answering one
// challenge more than MaxAuthAttempts (4 REGISTERs).
func TestUnauthorizedForeverIsBounded(t *testing.T) {
	f := &fakeRegistrar{answer: func(ctx context.Context, n int, req *sip.Request) (*sip.Response, error) {
		return respond(req, 401, sip.NewHeader("WWW-Authenticate", `Digest realm="x", nonce="n`+strconv.Itoa(n)+`", algorithm=MD5, qop="auth"`)), nil
	}}
	run(t, testConfig(), f, func(c *Client) {
		synctest.Wait()
		if n := len(f.sent()); n != 3 {
			t.Errorf("%d REGISTERs in the first round, want 3", n)
		}
		st := c.State()
		if st.State != StateFailed || st.Code != 401 || st.Next.IsZero() {
			t.Errorf("status %+v", st)
		}
	})
}

// TestNoCredentialsFails: a challenge without credentials fails at once.
func TestNoCredentialsFails(t *testing.T) {
	f := &fakeRegistrar{answer: func(ctx context.Context, n int, req *sip.Request) (*sip.Response, error) {
		return respond(req, 407, sip.NewHeader("Proxy-Authenticate", `Digest realm="x", nonce="n"`)), nil
	}}
	cfg := testConfig()
	cfg.Auth = nil
	run(t, cfg, f, func(c *Client) {
		synctest.Wait()
		if st := c.State(); st.State != StateFailed || len(f.sent()) != 1 {
			t.Errorf("status %+v after %d", st, len(f.sent()))
		}
	})
}

// TestVanishedRegistrar: a registrar that stops answering after the
// first binding puts the client in retrying with no code; Close still
// ends in bounded time (the unregister's own timeout). Mutation caught:
// an unbounded unregister (Close waits for ever: the bubble deadlocks).
func TestVanishedRegistrar(t *testing.T) {
	f := &fakeRegistrar{answer: func(ctx context.Context, n int, req *sip.Request) (*sip.Response, error) {
		if n == 1 {
			return ok(req, "60"), nil
		}
		<-ctx.Done() // gone: no answer until the request's own timeout
		return nil, errors.New("no response")
	}}
	run(t, testConfig(), f, func(c *Client) {
		time.Sleep(70 * time.Second)
		if st := c.State(); st.State != StateRetrying || st.Code != 0 {
			t.Errorf("status %+v", st)
		}
		if c.Stats()["transport"] == 0 {
			t.Errorf("stats %v", c.Stats())
		}
		start := time.Now()
		c.Close()
		if d := time.Since(start); d != 5*time.Second {
			t.Errorf("Close took %v, want the unregister timeout 5s", d)
		}
	})
}

// TestRouteSet: the outbound proxy is the first Route, with lr, then the
// configured routes.
func TestRouteSet(t *testing.T) {
	f := &fakeRegistrar{answer: func(ctx context.Context, n int, req *sip.Request) (*sip.Response, error) { return ok(req, "60"), nil }}
	cfg := testConfig()
	cfg.OutboundProxy = "sip:proxy.test:5080"
	cfg.Routes = []string{"sip:edge.test;lr"}
	run(t, cfg, f, func(c *Client) { synctest.Wait() })
	r := f.sent()[0].routes
	if len(r) != 2 || r[0] != "<sip:proxy.test:5080;lr>" || r[1] != "<sip:edge.test;lr>" {
		t.Errorf("routes %q", r)
	}
}

func TestConfigValidate(t *testing.T) {
	cases := []struct {
		name string
		edit func(*Config)
	}{
		{"no trunk", func(c *Config) { c.Trunk = "" }},
		{"registrar not a uri", func(c *Config) { c.Registrar = "registrar.test" }},
		{"aor without user", func(c *Config) { c.AOR = "registrar.test" }},
		{"crlf in contact", func(c *Config) { c.Contact = "sip:a@b\r\nX: y" }},
		{"transport", func(c *Config) { c.Transport = "SCTP" }},
		{"jitter", func(c *Config) { c.Jitter = 1 }},
		{"backoff", func(c *Config) { c.BackoffMin, c.BackoffMax = time.Minute, time.Second }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			tc.edit(&cfg)
			if _, err := New(cfg, &fakeRegistrar{}); !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("err = %v", err)
			}
		})
	}
	if _, err := New(testConfig(), &fakeRegistrar{}); err != nil {
		t.Error(err)
	}
}
