package openaispeech

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/brisvox/brisvox/providers"
)

// chunkBody is a response body of n chunks of chunk bytes, one per Read,
// that allocates nothing.
type chunkBody struct {
	chunk []byte
	n     int
}

func (b *chunkBody) Read(p []byte) (int, error) {
	if b.n == 0 {
		return 0, io.EOF
	}
	b.n--
	return copy(p, b.chunk), nil
}

func (b *chunkBody) Close() error { return nil }

// memTransport answers every request with a body of n chunks, without a
// network: what is measured is the session's own cost per chunk.
type memTransport struct {
	chunk []byte
	n     int
}

func (m *memTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	_ = req.Body.Close()
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"audio/pcm"}},
		Body: &chunkBody{chunk: m.chunk, n: m.n}, Request: req}, nil
}

// memSession is a session of an adapter on memTransport.
func memSession(tb testing.TB, n int) (providers.TTSSession, *memTransport) {
	tb.Helper()
	a, err := New(Config{BaseURL: "http://speech.invalid/v1", Model: "tts-1", Voice: "alloy"})
	if err != nil {
		tb.Fatal(err)
	}
	mt := &memTransport{chunk: make([]byte, 1920), n: n}
	a.http.Transport = mt
	s, err := a.Connect(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return s, mt
}

// speakOnce pushes one piece and reads its audio to the Flushed.
func speakOnce(tb testing.TB, s providers.TTSSession, id string) int {
	if err := s.Push(id, "x"); err != nil {
		tb.Fatal(err)
	}
	if err := s.Flush(id); err != nil {
		tb.Fatal(err)
	}
	n := 0
	for ev := range s.Events() {
		switch ev.Kind {
		case providers.TTSAudio:
			n++
		case providers.TTSFlushed:
			return n
		default:
			tb.Fatalf("%+v", ev)
		}
	}
	tb.Fatal("events closed")
	return n
}

// TestAllocsPerChunk pins the session's cost of a chunk: the PCM buffer
// handed out and nothing else (a piece of 1001 chunks costs at most 1000
// allocations, plus 1%, more than a piece of 1). Mutation seen failing: a new timer
// per read (time.AfterFunc in the loop).
func TestAllocsPerChunk(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	per := func(chunks int) float64 {
		s, mt := memSession(t, chunks)
		defer s.Close()
		i := 0
		return testing.AllocsPerRun(20, func() {
			mt.n = chunks
			i++
			if got := speakOnce(t, s, "c"+string(rune('a'+i%26))+string(rune('a'+i/26))); got != chunks {
				t.Fatalf("%d chunks, want %d", got, chunks)
			}
		})
	}
	// The runtime's own amortized allocations (its channel waiter cache)
	// add a handful per thousand chunks: 1% slack.
	one, many := per(1), per(1001)
	if extra := many - one; extra > 1010 {
		t.Fatalf("%.0f allocations for 1000 more chunks (%.0f for 1 chunk, %.0f for 1001): over one per chunk", extra, one, many)
	}
}

// BenchmarkSessionChunk is the session's cost per 40 ms chunk of 24 kHz
// PCM (1920 bytes): the read, the deadline timer, the decoding, the Audio
// event and its receipt.
func BenchmarkSessionChunk(b *testing.B) {
	s, mt := memSession(b, 0)
	defer s.Close()
	mt.n = b.N
	b.ReportAllocs()
	b.SetBytes(1920)
	b.ResetTimer()
	speakOnce(b, s, "c")
}
