package openai

import (
	"testing"
	"time"

	"github.com/brisvox/brisvox/providers/llm/internal/llmtest"
	"github.com/brisvox/brisvox/providers/llm/openai/openaimock"
)

const (
	testKeyEnv = "BRISVOX_TEST_OPENAI_KEY"
	testKey    = "sk-test-SECRET"
)

// newAdapter builds an adapter on the mock with the test key.
func newAdapter(t *testing.T, srv *openaimock.Server, mutate func(*Config)) *Adapter {
	t.Helper()
	t.Setenv(testKeyEnv, testKey)
	cfg := Config{BaseURL: srv.URL(), Model: "mock-model", APIKeyEnv: testKeyEnv}
	return llmtest.Open(t, New, cfg, mutate)
}

// newMock starts a mock closed at the end of the test.
func newMock(t *testing.T, script ...openaimock.Response) *openaimock.Server {
	t.Helper()
	if testing.Short() {
		// Loopback-socket tests are kept apart: -short skips them.
		t.Skip("loopback-socket test (skipped under -short)")
	}
	srv := openaimock.New(script...)
	t.Cleanup(srv.Close)
	return srv
}

// within fails the test if d is over limit: a generous bound for
// deadline tests on real sockets.
func within(t *testing.T, d, limit time.Duration, what string) {
	t.Helper()
	if d > limit {
		t.Fatalf("%s took %v, want under %v", what, d, limit)
	}
}
