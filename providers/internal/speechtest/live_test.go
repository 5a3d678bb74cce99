package speechtest_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/speechtest"
)

// Mutations caught: a test run without the live switch, or without the
// gate variable, or skipped with both set.
func TestSkipUnlessLive(t *testing.T) {
	const gate = "BRISVOX_TEST_SPEECHTEST_GATE"
	cases := []struct {
		live, gate string
		skip       bool
	}{
		{"", "k", true},
		{"yes", "k", true},
		{"1", "", true},
		{"1", "k", false},
	}
	for _, tc := range cases {
		t.Setenv(speechtest.LiveTestsEnv, tc.live)
		t.Setenv(gate, tc.gate)
		r := run(t, func(tb testing.TB) { speechtest.SkipUnlessLive(tb, gate) })
		if r.skipped != tc.skip || r.Failed() {
			t.Errorf("%s=%q, %s=%q: skipped %v (reports %q), want %v", speechtest.LiveTestsEnv, tc.live, gate, tc.gate, r.skipped, r.reports, tc.skip)
		}
	}
}

// Mutations caught: a Word event, an error event, the end of Events or the
// end of the budget let through, or the event read not returned.
func TestNextWithoutWords(t *testing.T) {
	cases := []struct {
		name   string
		events []providers.TTSEvent
		closed bool
		want   string
	}{
		{"audio", []providers.TTSEvent{{Kind: providers.TTSAudio, ContextID: "a"}}, false, ""},
		{"word", []providers.TTSEvent{{Kind: providers.TTSWord, ContextID: "a"}}, false, "a Word event"},
		{"error", []providers.TTSEvent{{Kind: providers.TTSError, Err: errBoom}}, false, "error event: boom"},
		{"closed", nil, true, "events closed"},
		{"budget", nil, false, "the live budget ran out"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				var got providers.TTSEvent
				r := run(t, func(tb testing.TB) {
					got = speechtest.NextWithoutWords(ctx, tb, ttsSession{ch: fill(tc.events, tc.closed)})
				})
				r.want(t, tc.want, tc.want != "")
				if tc.want == "" && (got.Kind != providers.TTSAudio || got.ContextID != "a") {
					t.Errorf("got %+v, want the audio event", got)
				}
			})
		})
	}
}
