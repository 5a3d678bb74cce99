package speechtest

import (
	"errors"
	"strings"
	"testing"

	"github.com/brisvox/brisvox/providers"
)

// CheckDecodeErr checks the error of a decoder's table case: an error
// exactly when wantErr, and then one that wraps providers.ErrProtocol and
// does not quote the message (it must not hold secret, a word of the
// case's input). It reports whether err is an error, which ends the case.
func CheckDecodeErr(t testing.TB, err error, wantErr bool, secret string) bool {
	t.Helper()
	if (err != nil) != wantErr {
		t.Fatalf("err %v, want error %v", err, wantErr)
	}
	if err == nil {
		return false
	}
	if !errors.Is(err, providers.ErrProtocol) {
		t.Errorf("error %v is not a Protocol", err)
	}
	if secret != "" && strings.Contains(err.Error(), secret) {
		t.Errorf("error %q quotes the message", err)
	}
	return true
}
