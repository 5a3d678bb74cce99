package cartesia

import (
	"testing"
	"time"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/speechtest"
	"github.com/brisvox/brisvox/providers/tts/cartesia/cartesiamock"
)

const (
	testKeyEnv = "BRISVOX_TEST_CARTESIA_KEY"
	testKey    = "sk_car_test-SECRET"

	testConnect = 2 * time.Second
	testReply   = 3 * time.Second
	testClose   = time.Second
)

// newPipe starts a mock on an in-memory listener and an adapter dialing
// it; it must run inside a testing/synctest bubble. Both are closed at the
// end of the test.
func newPipe(t *testing.T, mutate func(*Config)) (*Adapter, *cartesiamock.Server) {
	t.Helper()
	srv, dial := speechtest.Pipe(t, cartesiamock.New)
	t.Setenv(testKeyEnv, testKey)
	a := speechtest.NewAdapter(t, New, Config{
		URL:            srv.URL(),
		APIKeyEnv:      testKeyEnv,
		ConnectTimeout: testConnect,
		ReplyTimeout:   testReply,
		CloseTimeout:   testClose,
		DialContext:    dial,
	}, mutate)
	return a, srv
}

// until reads events until one of kind for ctx (returned, with the events
// before it); an Err event or the end of Events fails the test.
func until(t *testing.T, s providers.TTSSession, kind providers.TTSEventKind, ctx string) []providers.TTSEvent {
	t.Helper()
	return speechtest.TTSUntil(t, s, 10*time.Second, func(ev providers.TTSEvent) bool {
		return ev.Kind == kind && ev.ContextID == ctx
	})
}

// summary is what a run of events says: the words in order, their
// offsets, the samples of audio, per kind counts.
type summary struct {
	words   []string
	offsets []time.Duration
	samples int
	rates   map[int]bool
	flushed int
}

func summarize(evs []providers.TTSEvent) summary {
	sum := summary{rates: map[int]bool{}}
	for _, ev := range evs {
		switch ev.Kind {
		case providers.TTSWord:
			sum.words = append(sum.words, ev.Word)
			sum.offsets = append(sum.offsets, ev.Offset)
		case providers.TTSAudio:
			sum.samples += len(ev.PCM)
			sum.rates[ev.Rate] = true
		case providers.TTSFlushed:
			sum.flushed++
		}
	}
	return sum
}
