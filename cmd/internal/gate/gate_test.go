package gate

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestConfigValidate(t *testing.T) {
	long := strings.Repeat("k", MinSecretLen)
	cases := []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"defaults, nothing to check", Config{}, true},
		{"token and secret", Config{Token: long, Secret: []byte(long)}, true},
		{"short token", Config{Token: long[1:]}, false},
		{"token too long", Config{Token: strings.Repeat("k", MaxTokenLen+1)}, false},
		{"longest token", Config{Token: strings.Repeat("k", MaxTokenLen)}, true},
		{"short secret", Config{Secret: []byte(long[1:])}, false},
		{"negative ttl", Config{MaxTTL: -time.Second}, false},
		{"negative rate", Config{RatePerSec: -1}, false},
		{"absurd rate", Config{RatePerSec: 1e10}, false},
		{"negative burst", Config{Burst: -1}, false},
		{"negative sources", Config{MaxSources: -1}, false},
		{"too many sources", Config{MaxSources: 1<<24 + 1}, false},
		{"negative log interval", Config{LogEvery: -time.Second}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, err := New(c.cfg)
			if c.ok != (err == nil) {
				t.Fatalf("New: %v, want ok=%v", err, c.ok)
			}
			if err != nil {
				if !errors.Is(err, ErrInvalidConfig) {
					t.Errorf("%v is not ErrInvalidConfig", err)
				}
				if strings.Contains(err.Error(), long[1:]) {
					t.Errorf("the error shows the secret: %v", err)
				}
				return
			}
			g.Close()
		})
	}
}

func TestDefaults(t *testing.T) {
	c := Config{}.withDefaults()
	if c.MaxTTL != time.Hour || c.RatePerSec != 5 || c.Burst != 20 || c.MaxSources != DefaultMaxSources || c.LogEvery != time.Second {
		t.Fatalf("defaults %+v", c)
	}
}

// TestAuthorize is the rules of the credentials, one request each from
// a fresh source, for a gate with both a token and a secret.
// Mutations caught (each seen failing): verifying against a fixed path
// or method instead of the request's ("another path", "another
// method" pass); leaving the other parameters out of the canonical
// string ("extra param", "changed param" pass); `now.After(exp)` for
// `!now.Before(exp)` ("exp is now" passes); no MaxTTL check ("far
// ahead" passes); refusing a wrong token before trying the signed URL
// ("wrong token, good signature" fails).
func TestAuthorize(t *testing.T) {
	bearer := "Bearer " + testToken
	q := url.Values{"call": {"c1"}, "lang": {"en", "fr"}}
	cases := []struct {
		name   string
		method string
		target func(now time.Time) string
		auth   string
		status int
		cause  string
	}{
		{"nothing", "GET", fixed("/pcm"), "", 401, CauseUnauthorized},
		{"token", "GET", fixed("/pcm"), bearer, 200, ""},
		{"token, scheme in lower case", "GET", fixed("/pcm"), "bearer " + testToken, 200, ""},
		{"token, two spaces", "GET", fixed("/pcm"), "Bearer  " + testToken, 200, ""},
		{"wrong token", "GET", fixed("/pcm"), "Bearer " + strings.ToUpper(testToken), 403, CauseForbidden},
		{"token's prefix", "GET", fixed("/pcm"), bearer[:len(bearer)-1], 403, CauseForbidden},
		{"token and more", "GET", fixed("/pcm"), bearer + "x", 403, CauseForbidden},
		{"token over the longest", "GET", fixed("/pcm"), bearer + strings.Repeat("x", MaxTokenLen), 403, CauseForbidden},
		{"empty bearer", "GET", fixed("/pcm"), "Bearer ", 401, CauseUnauthorized},
		{"basic scheme", "GET", fixed("/pcm"), "Basic " + testToken, 401, CauseUnauthorized},
		{"token in the query is no credential", "GET", fixed("/pcm?access_token=" + testToken), "", 401, CauseUnauthorized},
		{"signed", "GET", func(now time.Time) string {
			return signed(testSecret, "GET", "/pcm", q, now.Add(time.Minute))
		}, "", 200, ""},
		{"signed, no other parameter", "GET", func(now time.Time) string {
			return signed(testSecret, "GET", "/pcm", nil, now.Add(time.Minute))
		}, "", 200, ""},
		{"signed, parameters reordered and escaped otherwise", "GET", func(now time.Time) string {
			u := signed(testSecret, "GET", "/pcm", url.Values{"a": {"x y"}, "b": {"2"}}, now.Add(time.Minute))
			v, _ := url.Parse(u)
			qs := v.Query()
			return "/pcm?sig=" + qs.Get("sig") + "&b=2&exp=" + qs.Get("exp") + "&a=x%20y"
		}, "", 200, ""},
		{"another method", "POST", func(now time.Time) string {
			return signed(testSecret, "GET", "/pcm", q, now.Add(time.Minute))
		}, "", 403, CauseForbidden},
		{"another path", "GET", func(now time.Time) string {
			u := signed(testSecret, "GET", "/pcm", q, now.Add(time.Minute))
			return "/twilio" + strings.TrimPrefix(u, "/pcm")
		}, "", 403, CauseForbidden},
		{"extra param", "GET", func(now time.Time) string {
			return signed(testSecret, "GET", "/pcm", q, now.Add(time.Minute)) + "&agent=paid"
		}, "", 403, CauseForbidden},
		{"changed param", "GET", func(now time.Time) string {
			return strings.Replace(signed(testSecret, "GET", "/pcm", q, now.Add(time.Minute)), "call=c1", "call=c2", 1)
		}, "", 403, CauseForbidden},
		{"values of a key reordered", "GET", func(now time.Time) string {
			return strings.Replace(signed(testSecret, "GET", "/pcm", q, now.Add(time.Minute)), "lang=en&lang=fr", "lang=fr&lang=en", 1)
		}, "", 403, CauseForbidden},
		{"exp moved", "GET", func(now time.Time) string {
			u := signed(testSecret, "GET", "/pcm", q, now.Add(time.Minute))
			return replaceParam(u, "exp", itoa(now.Add(2*time.Minute).Unix()))
		}, "", 403, CauseForbidden},
		{"exp not canonical", "GET", func(now time.Time) string {
			u := signed(testSecret, "GET", "/pcm", q, now.Add(time.Minute))
			return replaceParam(u, "exp", "0"+itoa(now.Add(time.Minute).Unix()))
		}, "", 403, CauseForbidden},
		{"sig flipped", "GET", func(now time.Time) string {
			u := signed(testSecret, "GET", "/pcm", q, now.Add(time.Minute))
			sig := param(u, "sig")
			flip := "A"
			if sig[0] == 'A' {
				flip = "B"
			}
			return replaceParam(u, "sig", flip+sig[1:])
		}, "", 403, CauseForbidden},
		{"sig padded", "GET", func(now time.Time) string {
			u := signed(testSecret, "GET", "/pcm", q, now.Add(time.Minute))
			return replaceParam(u, "sig", param(u, "sig")+"=")
		}, "", 403, CauseForbidden},
		{"sig twice", "GET", func(now time.Time) string {
			u := signed(testSecret, "GET", "/pcm", q, now.Add(time.Minute))
			return u + "&sig=" + param(u, "sig")
		}, "", 403, CauseForbidden},
		{"sig without exp", "GET", fixed("/pcm?sig=AAAA"), "", 403, CauseForbidden},
		{"exp without sig", "GET", func(now time.Time) string { return "/pcm?exp=" + itoa(now.Unix()+60) }, "", 403, CauseForbidden},
		{"query does not parse", "GET", func(now time.Time) string {
			return signed(testSecret, "GET", "/pcm", q, now.Add(time.Minute)) + "&x=%zz"
		}, "", 403, CauseForbidden},
		{"another secret", "GET", func(now time.Time) string {
			return signed(strings.ToUpper(testSecret), "GET", "/pcm", q, now.Add(time.Minute))
		}, "", 403, CauseForbidden},
		{"expired", "GET", func(now time.Time) string {
			return signed(testSecret, "GET", "/pcm", q, now.Add(-time.Second))
		}, "", 403, CauseExpired},
		{"exp is now", "GET", func(now time.Time) string {
			return signed(testSecret, "GET", "/pcm", q, now)
		}, "", 403, CauseExpired},
		{"at the max ttl", "GET", func(now time.Time) string {
			return signed(testSecret, "GET", "/pcm", q, now.Add(time.Hour))
		}, "", 200, ""},
		{"far ahead", "GET", func(now time.Time) string {
			return signed(testSecret, "GET", "/pcm", q, now.Add(time.Hour+time.Second))
		}, "", 403, CauseForbidden},
		{"wrong token, good signature", "GET", func(now time.Time) string {
			return signed(testSecret, "GET", "/pcm", q, now.Add(time.Minute))
		}, "Bearer " + strings.ToUpper(testToken), 200, ""},
		{"good token, bad signature", "GET", fixed("/pcm?exp=1&sig=AAAA"), bearer, 200, ""},
		{"wrong token, expired signature", "GET", func(now time.Time) string {
			return signed(testSecret, "GET", "/pcm", q, now.Add(-time.Minute))
		}, "Bearer " + strings.ToUpper(testToken), 403, CauseExpired},
	}
	inBubble(t, Config{Token: testToken, Secret: []byte(testSecret)}, func(r *rig) {
		for i, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				before := r.seen
				w := r.do(c.method, c.target(time.Now()), "192.0.2.1:"+itoa(int64(1000+i)), c.auth)
				if w.Code != c.status {
					t.Fatalf("status %d, want %d (%s)", w.Code, c.status, w.Body)
				}
				if c.status == 200 {
					if r.seen != before+1 {
						t.Fatal("the handler was not reached")
					}
					return
				}
				if r.seen != before {
					t.Fatal("a refused request reached the handler")
				}
				if _, cause := body(t, w); cause != c.cause {
					t.Errorf("cause %q, want %q", cause, c.cause)
				}
				if got := w.Header().Get("WWW-Authenticate"); (c.status == 401) != (got == "Bearer") {
					t.Errorf("WWW-Authenticate %q on %d", got, c.status)
				}
				if w.Header().Get("Cache-Control") != "no-store" {
					t.Errorf("refusal may be cached")
				}
			})
			// Each case comes from its own address, but the rate limit
			// is per address: keep them apart in time too.
			time.Sleep(time.Second)
		}
	})
}

// TestOneCredentialKind: a gate with only a token ignores signed URLs,
// one with only a secret ignores bearer tokens, one with neither lets
// everything through (it only rate-limits).
func TestOneCredentialKind(t *testing.T) {
	cases := []struct {
		name      string
		cfg       Config
		protected bool
		signed    int // status of a valid signed URL
		token     int // status of the right token
		none      int // status of no credential
	}{
		{"token only", Config{Token: testToken}, true, 401, 200, 401},
		{"secret only", Config{Secret: []byte(testSecret)}, true, 200, 401, 401},
		{"neither", Config{}, false, 200, 200, 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inBubble(t, c.cfg, func(r *rig) {
				if r.g.Protected() != c.protected {
					t.Errorf("Protected() = %v", r.g.Protected())
				}
				u := signed(testSecret, "GET", "/pcm", nil, time.Now().Add(time.Minute))
				if w := r.do("GET", u, "192.0.2.1:1", ""); w.Code != c.signed {
					t.Errorf("signed URL: %d, want %d", w.Code, c.signed)
				}
				if w := r.do("GET", "/pcm", "192.0.2.1:1", "Bearer "+testToken); w.Code != c.token {
					t.Errorf("token: %d, want %d", w.Code, c.token)
				}
				if w := r.do("GET", "/pcm", "192.0.2.1:1", ""); w.Code != c.none {
					t.Errorf("nothing: %d, want %d", w.Code, c.none)
				}
			})
		})
	}
}

// TestSignedURLExpiresInTime: a URL signed for 5 min passes until then
// and is refused as expired from then on (the bubble's clock).
func TestSignedURLExpiresInTime(t *testing.T) {
	inBubble(t, Config{Secret: []byte(testSecret)}, func(r *rig) {
		u := signed(testSecret, "GET", "/pcm", url.Values{"k": {"v"}}, time.Now().Add(5*time.Minute))
		steps := []struct {
			after  time.Duration
			status int
		}{{0, 200}, {4*time.Minute + 59*time.Second, 200}, {time.Second, 403}, {time.Hour, 403}}
		for _, s := range steps {
			time.Sleep(s.after)
			w := r.do("GET", u, "192.0.2.1:1", "")
			if w.Code != s.status {
				t.Fatalf("at +%v: %d, want %d", s.after, w.Code, s.status)
			}
			if s.status == 403 {
				if _, cause := body(t, w); cause != CauseExpired {
					t.Fatalf("cause %q", cause)
				}
			}
		}
		if got := r.g.Stats()[CauseExpired]; got != 2 {
			t.Errorf("expired counted %d, want 2", got)
		}
	})
}

// TestAuthorizeErrors: the sentinels of each refusal, with no secret in
// the error.
func TestAuthorizeErrors(t *testing.T) {
	inBubble(t, Config{Token: testToken, Secret: []byte(testSecret)}, func(r *rig) {
		cases := []struct {
			target, auth string
			want         error
		}{
			{"/pcm", "", ErrUnauthorized},
			{"/pcm", "Bearer " + testSecret, ErrForbidden},
			{signed(testSecret, "GET", "/pcm", nil, time.Now().Add(-time.Second)), "", ErrExpired},
			{"/pcm", "Bearer " + testToken, nil},
		}
		for _, c := range cases {
			req, _ := http.NewRequest("GET", "http://h"+c.target, nil)
			if c.auth != "" {
				req.Header.Set("Authorization", c.auth)
			}
			err := r.g.Authorize(req)
			if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
				t.Errorf("%s: %v, want %v", c.target, err, c.want)
			}
			if err != nil && (strings.Contains(err.Error(), testSecret) || strings.Contains(err.Error(), testToken)) {
				t.Errorf("the error shows a secret: %v", err)
			}
		}
	})
}

// TestRefusalsLogged: a flood of refusals writes a summary, not a line
// a request; the counts add up to Stats; no token, signature, query or
// address reaches the log.
// Mutation caught: Authorize not adding to the tally (the log held only
// the rate-limited; seen failing).
func TestRefusalsLogged(t *testing.T) {
	inBubble(t, Config{Token: testToken, Secret: []byte(testSecret), Burst: 100}, func(r *rig) {
		sig := signed(testSecret, "GET", "/pcm", url.Values{"call": {"c-secret-param"}}, time.Now().Add(-time.Minute))
		for i := range 50 {
			r.do("GET", "/pcm", "192.0.2.77:1", "")                                 // unauthorized
			r.do("GET", "/pcm", "192.0.2.77:1", "Bearer wrong-"+testToken)          // forbidden
			r.do("GET", sig, "192.0.2.77:1", "")                                    // expired
			r.do("GET", "/pcm", "192.0.2.78:1", "Bearer "+testToken+itoa(int64(i))) // forbidden, then rate limited
		}
		time.Sleep(3 * time.Second)
		lines := r.log.lines(t)
		if len(lines) > 3 {
			t.Errorf("%d log lines for 200 refusals in one interval", len(lines))
		}
		logged := map[string]float64{}
		for _, l := range lines {
			if l["message"] != "gate: requests refused" || l["level"] != "warn" {
				t.Errorf("line %v", l)
			}
			for c, n := range l["counts"].(map[string]any) {
				logged[c] += n.(float64)
			}
		}
		// 192.0.2.77 made 150 requests in turn with a burst of 100: the
		// first 100 were judged (34 unauthorized, 33 forbidden, 33
		// expired), the last 50 rate-limited; 192.0.2.78 made 50 with a
		// wrong token.
		want := map[string]uint64{CauseUnauthorized: 34, CauseForbidden: 33 + 50, CauseExpired: 33, CauseRateLimited: 50}
		st := r.g.Stats()
		for c, n := range want {
			if st[c] != n || logged[c] != float64(n) {
				t.Errorf("%s: counted %d, logged %v, want %d", c, st[c], logged[c], n)
			}
		}
		text := r.log.String()
		for _, secret := range []string{testToken, testSecret, param(sig, "sig"), "c-secret-param", "192.0.2.7"} {
			if strings.Contains(text, secret) {
				t.Errorf("the log holds %q", secret)
			}
		}
	})
}
