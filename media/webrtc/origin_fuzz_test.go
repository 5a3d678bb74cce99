package webrtc

import (
	"errors"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// FuzzCheckOrigin: the Origin check never panics, allows a request only
// without an Origin, from the server's own host or from a listed origin
// (echoing exactly the listed one), refuses with ErrOrigin otherwise, and
// normalizing an origin twice changes nothing.
func FuzzCheckOrigin(f *testing.F) {
	for _, seed := range [][2]string{
		{"https://app.example", "brisvox.example"},
		{"https://APP.example:443", "brisvox.example"},
		{"http://localhost:8080", "localhost:8080"},
		{"null", "brisvox.example"},
		{"", "brisvox.example"},
		{"https://evil.example", "brisvox.example"},
		{"://", "x"},
		{"https://app.example/path?q", "x"},
		{"https://[::1]:8443", "[::1]:8443"},
		{"https://user:pw@app.example", "x"},
	} {
		f.Add(seed[0], seed[1])
	}
	cfg := testConfig()
	cfg.OnCall = func(*Call) {}
	cfg.AllowedOrigins = []string{"https://app.example", "http://localhost:8080", "https://[::1]:8443"}
	srv, err := New(cfg)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { srv.Close() })
	// The refusal's text is one constant: it quotes nothing of the request.
	probe := httptest.NewRequest("POST", "/offer", nil)
	probe.Header.Set("Origin", "https://other.example")
	_, want := srv.checkOrigin(probe)
	f.Fuzz(func(t *testing.T, origin, host string) {
		if n, err := normalOrigin(origin); err == nil {
			if again, err := normalOrigin(n); err != nil || again != n {
				t.Fatalf("normalOrigin(%q) = %q, then %q, %v", origin, n, again, err)
			}
		}
		r := httptest.NewRequest("POST", "/offer", nil)
		r.Host = host
		r.Header.Set("Origin", origin)
		cross, err := srv.checkOrigin(r)
		if err != nil {
			if !errors.Is(err, ErrOrigin) || want == nil || err.Error() != want.Error() {
				t.Fatalf("refusal %v (must wrap ErrOrigin and not quote the request)", err)
			}
			return
		}
		if cross != "" {
			if !slices.Contains(srv.origins, cross) {
				t.Fatalf("echoed %q, not a listed origin", cross)
			}
			return
		}
		if origin == "" {
			return
		}
		if u, perr := url.Parse(origin); perr != nil || u.Host == "" || !strings.EqualFold(u.Host, host) {
			t.Fatalf("origin %q allowed for host %q without being listed", origin, host)
		}
	})
}
