package gate

import (
	"errors"
	"math"
	"net/http"
	"net/netip"
	"net/url"
	"testing"
	"time"
)

// FuzzSignedURL feeds the signed-URL parser any query. It must never
// panic, a query it accepts must not verify without the secret's
// signature, and for any parameters, what Sign makes verifies for its
// method and path until exp and fails once one parameter is added.
func FuzzSignedURL(f *testing.F) {
	f.Add("GET", "/pcm", "a=1&b=2")
	f.Add("GET", "/pcm", "exp=946684860&sig=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
	f.Add("POST", "/webrtc/offer", "lang=en&lang=fr&x=%20y")
	f.Add("GET", "/", "%zz=1;b")
	f.Add("GET", "/pcm", "sig=&exp=-1&exp=+1")
	secret := []byte(testSecret)
	mac := newSigner(secret)
	now := time.Unix(946684800, 0)
	f.Fuzz(func(t *testing.T, method, path, rawQuery string) {
		if s, err := parseSigned(rawQuery); err == nil {
			if s.exp < 0 {
				t.Fatalf("accepted a negative exp %d", s.exp)
			}
			// What verifies must carry the very signature Sign makes for
			// the same parameters (a forgery the fuzzer found would not).
			if verify(mac, s, method, path, now, time.Hour) == nil {
				q, _ := url.ParseQuery(rawQuery)
				again, err := parseSigned(Sign(secret, method, path, q, time.Unix(s.exp, 0)))
				if err != nil || again.sig != s.sig || again.rest != s.rest {
					t.Fatalf("%q verifies but is not what Sign makes", rawQuery)
				}
			}
		} else if !errors.Is(err, ErrForbidden) {
			t.Fatalf("parse error %v is not ErrForbidden", err)
		}

		q, err := url.ParseQuery(rawQuery)
		if err != nil {
			return
		}
		exp := now.Add(time.Minute)
		signed := Sign(secret, method, path, q, exp)
		s, err := parseSigned(signed)
		if err != nil {
			t.Fatalf("Sign made %q that does not parse: %v", signed, err)
		}
		if err := verify(mac, s, method, path, now, time.Hour); err != nil {
			t.Fatalf("Sign made %q that does not verify: %v", signed, err)
		}
		if err := verify(mac, s, method, path, exp, time.Hour); !errors.Is(err, ErrExpired) {
			t.Fatalf("at exp: %v, want expired", err)
		}
		if err := verify(mac, s, method+"X", path, now, time.Hour); !errors.Is(err, ErrForbidden) {
			t.Fatalf("another method: %v", err)
		}
		more, err := parseSigned(signed + "&zz-added=1")
		if err != nil {
			t.Fatalf("an added parameter broke the parse: %v", err)
		}
		if err := verify(mac, more, method, path, now, time.Hour); !errors.Is(err, ErrForbidden) {
			t.Fatalf("an added parameter verifies: %v", err)
		}
	})
}

// FuzzLimiter runs a random stream of requests (source, time step)
// through a small table and checks it against a plain model: a slice
// ordered by recency, the least recent dropped past the bound, each
// bucket refilled by the same formula. Every answer must agree, and the
// table must stay whole.
// Mutation caught: takeLocked evicting the most recent source (l.head)
// instead of the least (seed#2 fails on the recency order; seen
// failing).
func FuzzLimiter(f *testing.F) {
	f.Add([]byte{0, 0, 1, 0, 2, 0, 3, 0, 0, 200})
	f.Add([]byte{5, 1, 5, 1, 5, 1, 5, 1, 5, 1, 5, 255})
	f.Add([]byte{1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 1, 0})
	f.Fuzz(func(t *testing.T, ops []byte) {
		const max, rate, burst = 4, 2.0, 3
		l := newLimiter(rate, burst, max)
		type mb struct {
			key    netip.Addr
			tokens float64
			last   int64
		}
		var model []mb // most recent first
		var now int64
		for i := 0; i+1 < len(ops); i += 2 {
			key := netip.AddrFrom4([4]byte{10, 0, 0, ops[i] % 8})
			now += int64(ops[i+1]) * int64(10*time.Millisecond)
			ok, retry := l.allowAt(key, now)

			j := -1
			for k := range model {
				if model[k].key == key {
					j = k
				}
			}
			var b mb
			if j >= 0 {
				b = model[j]
				model = append(model[:j], model[j+1:]...)
			} else {
				b = mb{key: key, tokens: burst, last: now}
				if len(model) == max {
					model = model[:max-1]
				}
			}
			if el := now - b.last; el > 0 {
				b.tokens = math.Min(burst, b.tokens+float64(el)*(rate/float64(time.Second)))
				b.last = now
			}
			wantOK := b.tokens >= 1
			if wantOK {
				b.tokens--
			}
			model = append([]mb{b}, model...)
			if ok != wantOK {
				t.Fatalf("op %d: allow %v, model %v", i/2, ok, wantOK)
			}
			if !ok && retry <= 0 {
				t.Fatalf("op %d: refused with retry %v", i/2, retry)
			}
			if ok && retry != 0 {
				t.Fatalf("op %d: passed with retry %v", i/2, retry)
			}
		}
		checkList(t, l)
		if len(l.index) != len(model) {
			t.Fatalf("table holds %d, model %d", len(l.index), len(model))
		}
		k := 0
		for i := l.head; i != none; i = l.slots[i].next {
			if l.slots[i].key != model[k].key {
				t.Fatalf("recency %d: %v, model %v", k, l.slots[i].key, model[k].key)
			}
			k++
		}
	})
}

// FuzzAuthorize feeds Authorize any Authorization header and query. It
// must never panic, every refusal is one of the three sentinels, and a
// pass means the header carried the token or the query carried the
// signature Sign makes.
func FuzzAuthorize(f *testing.F) {
	f.Add("Bearer "+testToken, "")
	f.Add("bearer   "+testToken+" ", "a=1")
	f.Add("Basic dXNlcjpwYXNz", "exp=1&sig=x")
	f.Add("", "exp=99999999999&sig=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
	f.Add("Bearer", "sig")
	g, err := New(Config{Token: testToken, Secret: []byte(testSecret), MaxTTL: 1 << 62})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(g.Close)
	sg := newSigner([]byte(testSecret))
	f.Fuzz(func(t *testing.T, auth, rawQuery string) {
		r := &http.Request{Method: "GET", URL: &url.URL{Path: "/pcm", RawQuery: rawQuery}, Header: http.Header{}}
		r.Header.Set("Authorization", auth)
		err := g.Authorize(r)
		if err != nil {
			if !errors.Is(err, ErrUnauthorized) && !errors.Is(err, ErrForbidden) && !errors.Is(err, ErrExpired) {
				t.Fatalf("refusal %v is no sentinel", err)
			}
			return
		}
		if tok, ok := bearer(r.Header.Get("Authorization")); ok && tok == testToken {
			return
		}
		s, perr := parseSigned(rawQuery)
		if perr != nil || sg.signature("GET", "/pcm", s.exp, s.rest) != s.sig {
			t.Fatalf("passed without a credential: auth %q query %q", auth, rawQuery)
		}
	})
}
