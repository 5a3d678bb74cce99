package httpx

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestKeyFromEnv: no variable named, a set one (trimmed), an empty one.
// Mutation seen failing: the value not trimmed (a key with its newline).
func TestKeyFromEnv(t *testing.T) {
	errMissing := errors.New("missing")
	const env = "BRISVOX_TEST_HTTPX_KEY"
	cases := []struct {
		name, env, value, want string
		err                    error
	}{
		{"no variable", "", "", "", nil},
		{"set", env, " k-1\n", "k-1", nil},
		{"empty", env, "  ", "", errMissing},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(env, c.value)
			key, err := KeyFromEnv(c.env, errMissing)
			if key != c.want || !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
				t.Fatalf("%q, %v", key, err)
			}
			if err != nil && !strings.Contains(err.Error(), env) {
				t.Fatalf("error %v does not name the variable", err)
			}
		})
	}
}

// TestRejected: the status kept, the JSON error message quoted, the key
// redacted, control bytes blanked, a long body cut. Mutation seen failing:
// Excerpt given "" instead of the key (the key in the detail).
func TestRejected(t *testing.T) {
	const key = "sk-test-123"
	cases := []struct {
		name, body, want string
		status           int
	}{
		{"json message", `{"error":{"message":"bad key sk-test-123"}}`, "bad key [redacted]", 401},
		{"plain text", "slow\x00 down\n", "slow down", 429},
		{"long", strings.Repeat("x", 5000), strings.Repeat("x", 200) + "…", 503},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := &http.Response{StatusCode: c.status, Body: io.NopCloser(strings.NewReader(c.body))}
			r := Rejected(resp, key)
			if r.Status != c.status || r.Detail != c.want {
				t.Fatalf("got %d %q, want %d %q", r.Status, r.Detail, c.status, c.want)
			}
		})
	}
}

// TestClientRefusesRedirects: a redirect is returned as the answer.
// Mutation seen failing: CheckRedirect removed (the client follows it).
func TestClientRefusesRedirects(t *testing.T) {
	hc, tr := NewClient(ClientConfig{})
	defer tr.CloseIdleConnections()
	if hc.CheckRedirect == nil || hc.CheckRedirect(nil, nil) != http.ErrUseLastResponse {
		t.Fatal("redirects are followed")
	}
	if !tr.DisableCompression || tr.MaxIdleConnsPerHost != 8 {
		t.Fatalf("transport %+v", tr)
	}
}
