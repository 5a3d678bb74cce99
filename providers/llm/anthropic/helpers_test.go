package anthropic

import (
	"testing"

	"github.com/brisvox/brisvox/providers/llm/anthropic/anthropicmock"
	"github.com/brisvox/brisvox/providers/llm/internal/llmtest"
)

const (
	testKeyEnv = "BRISVOX_TEST_ANTHROPIC_KEY"
	testKey    = "sk-ant-test-SECRET"
)

// piped starts the mock on an in-memory listener and an adapter dialing
// it, with the test key; both are closed at the end of the test. Call it
// inside a synctest bubble.
func piped(t *testing.T, mutate func(*Config), script ...anthropicmock.Response) (*Adapter, *anthropicmock.Server) {
	t.Helper()
	srv, dial := llmtest.Piped(t, anthropicmock.NewWithListener, script...)
	t.Setenv(testKeyEnv, testKey)
	cfg := Config{BaseURL: srv.URL(), Model: "mock-model", APIKeyEnv: testKeyEnv, DialContext: dial}
	return llmtest.Open(t, New, cfg, mutate), srv
}
