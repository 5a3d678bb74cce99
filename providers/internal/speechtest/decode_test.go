package speechtest_test

import (
	"testing"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/speechtest"
)

// Mutations caught: a decode error expected but missing (or the reverse)
// let through, an error that is not a Protocol or that quotes the
// message let through, the end of the case not reported.
func TestCheckDecodeErr(t *testing.T) {
	protocol := &protocolError{"bad JSON at byte 3"}
	cases := []struct {
		name    string
		err     error
		wantErr bool
		failed  bool
		want    string
		fatal   bool
	}{
		{"decoded", nil, false, false, "", false},
		{"refused", protocol, true, true, "", false},
		{"error missing", nil, true, false, "want error true", true},
		{"error unexpected", protocol, false, true, "want error false", true},
		{"not a Protocol", errBoom, true, true, "is not a Protocol", false},
		{"quotes the message", &protocolError{"bad: secret words"}, true, true, "quotes the message", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var failed bool
			r := run(t, func(tb testing.TB) { failed = speechtest.CheckDecodeErr(tb, tc.err, tc.wantErr, "secret") })
			r.want(t, tc.want, tc.fatal)
			if !tc.fatal && failed != tc.failed {
				t.Errorf("reported %v, want %v", failed, tc.failed)
			}
		})
	}
}

// protocolError is a decode error that wraps providers.ErrProtocol.
type protocolError struct{ detail string }

func (e *protocolError) Error() string { return "protocol: " + e.detail }
func (e *protocolError) Unwrap() error { return providers.ErrProtocol }
