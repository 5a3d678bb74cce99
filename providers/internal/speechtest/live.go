package speechtest

import (
	"context"
	"os"
	"testing"

	"github.com/brisvox/brisvox/providers"
)

// LiveTestsEnv is the variable that must be 1 for the live tests (against
// the real services) to run.
const LiveTestsEnv = "BRISVOX_LIVE_TESTS"

// SkipUnlessLive skips the test unless LiveTestsEnv is 1 and gate (the
// service's key variable, or the one that points the test at its server)
// is set.
func SkipUnlessLive(t testing.TB, gate string) {
	t.Helper()
	if os.Getenv(LiveTestsEnv) != "1" {
		t.Skip("live test: set " + LiveTestsEnv + "=1 and " + gate + " to run it")
	}
	if os.Getenv(gate) == "" {
		t.Skip("live test: " + gate + " is not set")
	}
}

// NextWithoutWords reads the next event of a live session with a service
// that reports no word times (Aura, the OpenAI speech API): the end of
// Events, an error event, a Word event or the end of ctx (the live run's
// budget) fails the test.
func NextWithoutWords(ctx context.Context, t testing.TB, s providers.TTSSession) providers.TTSEvent {
	t.Helper()
	select {
	case ev, ok := <-s.Events():
		if !ok {
			t.Fatal("events closed")
		}
		if ev.Kind == providers.TTSError {
			t.Fatalf("error event: %v", ev.Err)
		}
		if ev.Kind == providers.TTSWord {
			t.Fatal("a Word event from a service without word times")
		}
		return ev
	case <-ctx.Done():
		t.Fatal("the live budget ran out")
	}
	return providers.TTSEvent{}
}
