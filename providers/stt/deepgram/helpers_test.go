package deepgram

import (
	"testing"
	"time"

	"github.com/brisvox/brisvox/providers/internal/speechtest"
	"github.com/brisvox/brisvox/providers/stt/deepgram/deepgrammock"
)

const (
	testKeyEnv = "BRISVOX_TEST_DEEPGRAM_KEY"
	testKey    = "dg-test-SECRET"

	testConnect = 2 * time.Second
	testResult  = 3 * time.Second
	testClose   = time.Second
)

// newPipe starts a mock on an in-memory listener and an adapter dialing
// it; it must run inside a testing/synctest bubble. Both are closed at the
// end of the test.
func newPipe(t *testing.T, mutate func(*Config)) (*Adapter, *deepgrammock.Server) {
	t.Helper()
	srv, dial := speechtest.Pipe(t, deepgrammock.New)
	t.Setenv(testKeyEnv, testKey)
	a := speechtest.NewAdapter(t, New, Config{
		URL:            srv.URL(),
		APIKeyEnv:      testKeyEnv,
		ConnectTimeout: testConnect,
		ResultTimeout:  testResult,
		CloseTimeout:   testClose,
		DialContext:    dial,
	}, mutate)
	return a, srv
}

// frame is n samples of a ramp starting at v.
func frame(n int, v int16) []int16 {
	pcm := make([]int16, n)
	for i := range pcm {
		pcm[i] = v + int16(i)
	}
	return pcm
}
