package speechtest

import (
	"errors"
	"testing"
)

// AsType returns the T (a *providers.Timeout, say) in err's chain; none
// fails the test.
func AsType[T error](t testing.TB, err error) T {
	t.Helper()
	target, ok := errors.AsType[T](err)
	if !ok {
		t.Fatalf("error %v (%T) is not a %T", err, err, target)
	}
	return target
}
