package speechtest_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/speechtest"
)

// Mutations caught: a type missing from the chain let through, a wrapped
// one not found.
func TestAsType(t *testing.T) {
	to := &providers.Timeout{Op: "reply"}
	for _, err := range []error{to, fmt.Errorf("session: %w", to)} {
		var got *providers.Timeout
		r := run(t, func(tb testing.TB) { got = speechtest.AsType[*providers.Timeout](tb, err) })
		r.want(t, "", false)
		if got != to {
			t.Errorf("AsType(%v) = %v", err, got)
		}
	}
	r := run(t, func(tb testing.TB) {
		speechtest.AsType[*providers.Timeout](tb, errors.Join(errBoom, &providers.Protocol{}))
	})
	r.want(t, "is not a *providers.Timeout", true)
}
