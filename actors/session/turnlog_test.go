package session_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/rs/zerolog"
)

// lockedBuffer is a log sink safe for the actors' goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestTurnEvent: one debug event per answered turn with its timeline in
// milliseconds from the end of speech, and no transcript or answer text.
// (Mutations seen failing: no event; the marks measured from a point 450 ms
// after the end of speech, i.e. from the turn end.)
func TestTurnEvent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sink lockedBuffer
		c := call("turn-event")
		c.Log = zerolog.New(&sink).Level(zerolog.DebugLevel)
		if _, err := c.Run(); err != nil {
			t.Fatal(err)
		}
		var turns []map[string]any
		for _, line := range strings.Split(strings.TrimSpace(sink.String()), "\n") {
			var ev map[string]any
			if json.Unmarshal([]byte(line), &ev) == nil && ev["message"] == "turn" {
				turns = append(turns, ev)
			}
		}
		if len(turns) != 1 {
			t.Fatalf("%d turn events, want 1:\n%s", len(turns), sink.String())
		}
		ev := turns[0]
		for field, want := range map[string]float64{"epoch": 1, "stt_final_ms": 450, "turn_end_ms": 450, "llm_first_token_ms": 750, "tts_first_audio_ms": 950, "first_audio_out_ms": 950} {
			if ev[field] != want {
				t.Errorf("%s = %v, want %v", field, ev[field], want)
			}
		}
		for _, secret := range []string{"delivery address", answer} {
			if strings.Contains(sink.String(), secret) {
				t.Errorf("the log holds %q", secret)
			}
		}
	})
}
