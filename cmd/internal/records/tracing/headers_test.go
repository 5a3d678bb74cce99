package tracing

import (
	"errors"
	"maps"
	"strings"
	"testing"
)

// TestParseHeaders: the OTLP headers' key=value list, and its refusals,
// which never quote a value. Mutation caught: an error quoting the
// entry ("%q", entry) shows the planted key.
func TestParseHeaders(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want map[string]string
		err  string
	}{
		{"empty", "  ", map[string]string{}, ""},
		{"one", "Authorization=Bearer " + plantedToken, map[string]string{"Authorization": "Bearer " + plantedToken}, ""},
		{"two, spaced and escaped", " x-api-key = " + plantedToken + " , X-Scope=a%3Db%2Cc", map[string]string{"x-api-key": plantedToken, "X-Scope": "a=b,c"}, ""},
		{"no equals", "Authorization: Bearer " + plantedToken, nil, "entry 1 is not key=value"},
		{"no key", "a=b,=" + plantedToken, nil, "entry 2 is not key=value"},
		{"bad name", "Bad Name=" + plantedToken, nil, "entry 1's name is not a valid HTTP header name"},
		{"bad escape", "K=" + plantedToken + "%zz", nil, `the value of "K" has a bad %-escape`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseHeaders(tc.in)
			if tc.err == "" {
				if err != nil || !maps.Equal(got, tc.want) {
					t.Fatalf("got %v, %v; want %v", got, err, tc.want)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %v; want ErrInvalidConfig saying %q", err, tc.err)
			}
			if strings.Contains(err.Error(), plantedToken) {
				t.Errorf("error %q holds the value", err)
			}
		})
	}
}
