package gemini

import (
	"testing"

	"github.com/brisvox/brisvox/providers/llm/gemini/geminimock"
	"github.com/brisvox/brisvox/providers/llm/internal/llmtest"
)

const (
	testKeyEnv = "BRISVOX_TEST_GEMINI_KEY"
	testKey    = "AIza-test-SECRET"
)

// piped starts the mock on an in-memory listener and an adapter dialing
// it, with the test key; both are closed at the end of the test. Call it
// inside a synctest bubble.
func piped(t *testing.T, mutate func(*Config), script ...geminimock.Response) (*Adapter, *geminimock.Server) {
	t.Helper()
	srv, dial := llmtest.Piped(t, geminimock.NewWithListener, script...)
	t.Setenv(testKeyEnv, testKey)
	cfg := Config{BaseURL: srv.URL(), Model: "mock-model", APIKeyEnv: testKeyEnv, DialContext: dial}
	return llmtest.Open(t, New, cfg, mutate), srv
}
