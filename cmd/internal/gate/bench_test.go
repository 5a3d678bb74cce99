package gate

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"
)

// nopWriter is a ResponseWriter that keeps nothing, so what is measured
// is the gate.
type nopWriter struct{ h http.Header }

func (w *nopWriter) Header() http.Header         { return w.h }
func (w *nopWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *nopWriter) WriteHeader(int)             {}

// allowedRig is a gate that lets everything through its rate limit, a
// handler that does nothing, and one request of each allowed kind.
func allowedRig(tb testing.TB) (h http.Handler, bearer, signedReq *http.Request, g *Gate) {
	tb.Helper()
	g, err := New(Config{Token: testToken, Secret: []byte(testSecret), RatePerSec: 1e9, Burst: 1 << 30})
	if err != nil {
		tb.Fatal(err)
	}
	h = g.Wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	bearer = httptest.NewRequest("GET", "/pcm", nil)
	bearer.RemoteAddr = "192.0.2.1:5000"
	bearer.Header.Set("Authorization", "Bearer "+testToken)
	signedReq = httptest.NewRequest("GET", signed(testSecret, "GET", "/pcm", map[string][]string{"call": {"c1"}}, time.Now().Add(time.Hour)), nil)
	signedReq.RemoteAddr = "[2001:db8::1]:5000"
	return h, bearer, signedReq, g
}

// TestAllowedAllocs pins the allowed paths: a bearer token costs no
// allocation; a signed URL the parse of its query (net/url's values
// map, its slices and strings, and the canonical encoding of the rest).
func TestAllowedAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	h, bearer, signedReq, g := allowedRig(t)
	defer g.Close()
	w := &nopWriter{h: http.Header{}}
	cases := []struct {
		name   string
		req    *http.Request
		budget float64
	}{{"bearer", bearer, 0}, {"signed", signedReq, 6}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := testing.AllocsPerRun(1000, func() { h.ServeHTTP(w, c.req) })
			if got > c.budget {
				t.Fatalf("%.1f allocations, budget %.0f", got, c.budget)
			}
			t.Logf("%.1f allocations (budget %.0f)", got, c.budget)
		})
	}
	if st := g.Stats(); st[CauseForbidden]+st[CauseUnauthorized]+st[CauseExpired]+st[CauseRateLimited] != 0 {
		t.Fatalf("the allowed requests were refused: %v", st)
	}
	if a := testing.AllocsPerRun(1000, func() { g.Allow(netip.MustParseAddr("192.0.2.9")) }); a != 0 {
		t.Fatalf("Allow allocates %.1f", a)
	}
}

func BenchmarkAllowed(b *testing.B) {
	h, bearer, signedReq, g := allowedRig(b)
	defer g.Close()
	for _, c := range []struct {
		name string
		req  *http.Request
	}{{"bearer", bearer}, {"signed", signedReq}} {
		b.Run(c.name, func(b *testing.B) {
			w := &nopWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				h.ServeHTTP(w, c.req)
			}
		})
	}
}

// BenchmarkAllowParallel is the limiter under contention from many
// sources.
func BenchmarkAllowParallel(b *testing.B) {
	g, err := New(Config{RatePerSec: 1e9, Burst: 1 << 30})
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		var i uint32
		for pb.Next() {
			i++
			g.Allow(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}))
		}
	})
}
