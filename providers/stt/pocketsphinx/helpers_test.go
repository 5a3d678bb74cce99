package pocketsphinx

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brisvox/brisvox/media"
	"github.com/brisvox/brisvox/providers"
)

// fixture is a speech fixture of scripts/fixtures.sh: the audio and the
// words of each speech segment (end exclusive, in samples).
type fixture struct {
	pcm      []int16
	rate     int
	segments []segment
}

type segment struct {
	Start int    `json:"start_sample"`
	End   int    `json:"end_sample"`
	Text  string `json:"text"`
}

// needEngine skips where this build cannot run pocketsphinx (no cgo) and
// fails where the Debian model is missing, unless -short.
func needEngine(t testing.TB) {
	t.Helper()
	if !cgoEnabled {
		t.Skip("built without cgo: pocketsphinx needs libpocketsphinx through cgo")
	}
	if err := (Config{}).Validate(); err != nil {
		if testing.Short() {
			t.Skipf("pocketsphinx model missing (skipped under -short): %v", err)
		}
		t.Fatalf("pocketsphinx model missing: %v; run `go tool task setup`", err)
	}
}

// loadFixture reads .native/fixtures/<name>.wav and .json below the module
// root. Missing fixtures fail the test (`go tool task setup` makes them)
// except under -short.
func loadFixture(t testing.TB, name string) fixture {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
	base := filepath.Join(dir, ".native", "fixtures", name)
	f, err := os.Open(base + ".wav")
	if errors.Is(err, os.ErrNotExist) {
		if testing.Short() {
			t.Skipf("speech fixture %s.wav missing (skipped under -short)", base)
		}
		t.Fatalf("speech fixture %s.wav missing: run `go tool task setup` (or bash scripts/fixtures.sh)", base)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := media.ReadWAV(f, 0)
	if err != nil {
		t.Fatalf("%s.wav: %v", base, err)
	}
	js, err := os.ReadFile(base + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var side struct {
		Segments []segment `json:"segments"`
	}
	if err := json.Unmarshal(js, &side); err != nil {
		t.Fatalf("%s.json: %v", base, err)
	}
	if w.Channels != 1 || len(side.Segments) == 0 {
		t.Fatalf("%s: %d channels, %d segments", base, w.Channels, len(side.Segments))
	}
	return fixture{pcm: w.Samples, rate: w.Rate, segments: side.Segments}
}

// words normalises a transcript for comparison: lower case, single spaces.
func words(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") }

// frame is 20 ms at 16 kHz, the chunk size of a call's audio path.
const frame = 320

// sendFrames sends pcm in 20 ms chunks.
func sendFrames(t testing.TB, s *Session, pcm []int16) {
	t.Helper()
	for i := 0; i < len(pcm); i += frame {
		if err := s.SendAudio(pcm[i:min(i+frame, len(pcm))]); err != nil {
			t.Fatalf("SendAudio: %v", err)
		}
	}
}

// vadLag is how long after a segment's start the tests mark the speech
// start, as a VAD would decide it late (200 ms, within the pre-roll).
const vadLag = 3200

// sendUtterance sends pcm[from:to] as a call would with a VAD: the audio
// up to vadLag into the segment, SpeechStarted, the rest; it returns to.
func sendUtterance(t testing.TB, s *Session, pcm []int16, from, to int, seg segment) int {
	t.Helper()
	onset := min(max(from, seg.Start+vadLag), to)
	sendFrames(t, s, pcm[from:onset])
	if err := s.SpeechStarted(); err != nil {
		t.Fatalf("SpeechStarted: %v", err)
	}
	sendFrames(t, s, pcm[onset:to])
	return to
}

// next reads the next event. The bound is a watchdog: in a synctest
// bubble it fires as soon as every goroutine is blocked with no event
// owed, outside one after a minute.
func next(t testing.TB, s *Session) (providers.STTEvent, bool) {
	t.Helper()
	select {
	case ev, ok := <-s.Events():
		return ev, ok
	case <-time.After(time.Minute):
		t.Fatal("no event and the events channel is still open")
		return providers.STTEvent{}, false
	}
}

// untilFinal reads events up to and including the next final and returns
// the interims before it.
func untilFinal(t testing.TB, s *Session) (interims []string, final providers.STTEvent) {
	t.Helper()
	for {
		ev, ok := next(t, s)
		switch {
		case !ok:
			t.Fatal("events closed before the final")
		case ev.Err != nil:
			t.Fatalf("session failed: %v", ev.Err)
		case ev.Final:
			return interims, ev
		}
		interims = append(interims, ev.Text)
	}
}

// connect opens a session of e as a *Session.
func connect(t testing.TB, e *STT, ctx context.Context) *Session {
	t.Helper()
	s, err := e.Connect(ctx)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	return s.(*Session)
}

// wordErrors is the word-level edit distance between want and got.
func wordErrors(want, got string) int {
	a, b := strings.Fields(words(want)), strings.Fields(words(got))
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev = cur
	}
	return prev[len(b)]
}
