package signal

import (
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
)

// TestHealthOptions: while draining, an OPTIONS outside a dialog gets the
// refusal with Retry-After; healthy again, 200.
// Mutation: ignoring the health function (200 while draining) fails.
func TestHealthOptions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var draining atomic.Bool
		health := func() *Refusal {
			if draining.Load() {
				return &Refusal{Code: 503, RetryAfter: 30}
			}
			return nil
		}
		s, _ := newTestServer(t, Config{}, answerWith(&fakeMedia{}), WithHealth(health))
		for _, tc := range []struct {
			draining  bool
			want      int
			wantRetry string
		}{{false, 200, ""}, {true, 503, "30"}, {false, 200, ""}} {
			draining.Store(tc.draining)
			tx := &fakeTx{}
			s.serveRequest(msg(t, "", outOfDialog("OPTIONS")...), tx, tx)
			if got := tx.codes(); !slices.Equal(got, []int{tc.want}) {
				t.Fatalf("draining %v: answered %v, want %d", tc.draining, got, tc.want)
			}
			if got := hdr(tx.last(), "Retry-After"); got != tc.wantRetry {
				t.Fatalf("draining %v: Retry-After %q", tc.draining, got)
			}
		}
	})
}
