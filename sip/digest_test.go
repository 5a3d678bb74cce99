package sip

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/brisvox/brisvox/sip/trunk"
)

// TestDigestStaleChallenge: the challenge that answers credentials on an
// expired nonce says stale=true (the password was right: the client
// retries at once), any other failure and a request without credentials
// get a plain one.
// Mutation caught (seen failing): the adapter ignoring the Verify error
// (no client ever saw stale=true).
func TestDigestStaleChallenge(t *testing.T) {
	p, err := trunk.New(trunk.Config{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, Users: map[string]string{"u": "p"}})
	if err != nil {
		t.Fatal(err)
	}
	d := digest{p}
	for _, c := range []struct {
		name   string
		failed error
		stale  bool
	}{
		{"no credentials", nil, false},
		{"wrong password", trunk.ErrAuthFailed, false},
		{"expired nonce", fmt.Errorf("%w: %w", trunk.ErrAuthFailed, trunk.ErrStaleNonce), true},
	} {
		v := d.Challenge(c.failed)
		if !strings.HasPrefix(v, "Digest ") || strings.Contains(v, "stale=true") != c.stale {
			t.Errorf("%s: %q, want stale=%v", c.name, v, c.stale)
		}
	}
}
