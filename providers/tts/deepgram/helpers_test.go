package aura

import (
	"testing"
	"time"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/speechtest"
	"github.com/brisvox/brisvox/providers/tts/deepgram/auramock"
)

const (
	testKeyEnv = "BRISVOX_TEST_AURA_KEY"
	testKey    = "dg-test-SECRET"

	testConnect = 2 * time.Second
	testReply   = 3 * time.Second
)

// newPipe starts a mock on an in-memory listener and an adapter dialing
// it; it must run inside a testing/synctest bubble. Both are closed at the
// end of the test.
func newPipe(t *testing.T, mutate func(*Config)) (*Adapter, *auramock.Server) {
	t.Helper()
	srv, dial := speechtest.Pipe(t, auramock.New)
	t.Setenv(testKeyEnv, testKey)
	a := speechtest.NewAdapter(t, New, Config{
		URL:            srv.URL(),
		APIKeyEnv:      testKeyEnv,
		ConnectTimeout: testConnect,
		ReplyTimeout:   testReply,
		DialContext:    dial,
	}, mutate)
	return a, srv
}

// spoken is what a context delivered up to its Flushed.
type spoken struct {
	samples []int16
	frames  int
}

// untilFlushed reads the events of id up to its Flushed; any other event
// fails the test.
func untilFlushed(t *testing.T, s providers.TTSSession, id string) spoken {
	t.Helper()
	var sp spoken
	speechtest.TTSUntil(t, s, time.Minute, func(ev providers.TTSEvent) bool {
		switch {
		case ev.ContextID != id:
			t.Fatalf("an event (kind %d) of %q before the Flushed of %q", ev.Kind, ev.ContextID, id)
		case ev.Kind == providers.TTSFlushed:
			return true
		case ev.Kind != providers.TTSAudio:
			t.Fatalf("an event of kind %d while %q speaks", ev.Kind, id)
		case ev.Rate != DefaultSampleRate:
			t.Fatalf("rate %d", ev.Rate)
		}
		sp.samples = append(sp.samples, ev.PCM...)
		sp.frames++
		return false
	})
	return sp
}

// failure reads events until the Err event and checks that Events closes
// right after it; it returns the error and when it came.
func failure(t *testing.T, s providers.TTSSession) (time.Time, error) {
	t.Helper()
	return speechtest.Failure(t, s, func(ev providers.TTSEvent) error { return ev.Err })
}

// types lists the types of the client messages the mock read.
func types(srv *auramock.Server) []string {
	var out []string
	for _, r := range srv.Requests() {
		if r.Malformed {
			out = append(out, "malformed")
			continue
		}
		out = append(out, r.Type)
	}
	return out
}

// wordSamples is the number of samples of one word of the mock.
func wordSamples(rate int, d time.Duration) int {
	return int(int64(rate) * int64(d) / int64(time.Second))
}
