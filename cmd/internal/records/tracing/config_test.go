package tracing

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestConfigRefusals: each wrong setting is refused with
// ErrInvalidConfig, a message saying what to do, and never a header's
// value (it may be a key). Mutation caught: a URL that does not parse
// quoted whole in the error (the url.Error's text) leaks its credentials.
func TestConfigRefusals(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		want string // in the message
	}{
		{"no endpoint", Config{}, "tracing is off unless one is set"},
		{"not a url", Config{Endpoint: "http://" + plantedToken + "@[::1"}, "not a URL"},
		{"grpc scheme", Config{Endpoint: "grpc://127.0.0.1:4317"}, "use http:// or https://"},
		{"no scheme", Config{Endpoint: "127.0.0.1:4318"}, "use http:// or https://"},
		{"no host", Config{Endpoint: "http:///v1/traces"}, "no host"},
		{"credentials in the url", Config{Endpoint: "https://user:" + plantedToken + "@collector.example"}, "put them in a header"},
		{"query", Config{Endpoint: "http://127.0.0.1:4318/v1/traces?x=1"}, "query or fragment"},
		{"bad header name", Config{Endpoint: "http://127.0.0.1:4318", Headers: map[string]string{"Bad Name": plantedToken}}, "not a valid HTTP header name"},
		{"header value with a line break", Config{Endpoint: "http://127.0.0.1:4318", Headers: map[string]string{"Authorization": "Bearer " + plantedToken + "\r\nX: y"}}, `header "Authorization" holds a line break`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := New(context.Background(), tc.cfg)
			if err == nil {
				_ = tr.Close(context.Background())
				t.Fatal("accepted")
			}
			if !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("error %v is not ErrInvalidConfig", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
			if strings.Contains(err.Error(), plantedToken) {
				t.Errorf("error %q holds the secret", err)
			}
		})
	}
}

// TestExportURL: an endpoint without a path gets the traces path; one
// with a path is used as given.
func TestExportURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"http://127.0.0.1:4318", "http://127.0.0.1:4318/v1/traces"},
		{"http://127.0.0.1:4318/", "http://127.0.0.1:4318/v1/traces"},
		{"https://collector.example/otlp/v1/traces", "https://collector.example/otlp/v1/traces"},
	} {
		got, err := Config{Endpoint: tc.in}.exportURL()
		if err != nil || got != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}
