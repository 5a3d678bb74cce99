package chaostest

import (
	"testing"

	"github.com/brisvox/brisvox/messages"
)

func TestStampRoundTrip(t *testing.T) {
	pcm := make([]int16, 320)
	for _, tc := range []struct {
		e   messages.Epoch
		seq int
	}{{1, 0}, {7, 1}, {300, 29999}} {
		putStamp(pcm, tc.e, tc.seq)
		e, seq, ok := readStamp(pcm)
		if !ok || e != tc.e || seq != tc.seq {
			t.Errorf("stamp (%d, %d) read back as (%d, %d, %v)", tc.e, tc.seq, e, seq, ok)
		}
	}
}

// TestStampRejectsOtherAudio: the bot's unstamped tone, silence and a
// stamp with one sample changed are not stamps (mutation seen failing:
// readStamp without the check sample accepts the damaged one).
func TestStampRejectsOtherAudio(t *testing.T) {
	tone := make([]int16, 320)
	for i := range tone {
		tone[i] = 6000
		if i%36 >= 18 {
			tone[i] = -6000
		}
	}
	damaged := make([]int16, 320)
	putStamp(damaged, 3, 12)
	damaged[2]++
	for name, pcm := range map[string][]int16{"tone": tone, "silence": make([]int16, 320), "damaged": damaged, "short": {stampMagic, 1}} {
		if _, _, ok := readStamp(pcm); ok {
			t.Errorf("%s read as a stamp", name)
		}
	}
}

// TestStamperFollowsThePacersGrid: frames are numbered from their epoch's
// first sample across chunks of any length, a new epoch starts again at
// 0, and a chunk of an older epoch is left alone (mutations seen failing:
// the count not reset at a new epoch; stamping at the chunk's start
// instead of on the frame grid).
func TestStamperFollowsThePacersGrid(t *testing.T) {
	s := &stamper{frame: 320}
	feed := func(e messages.Epoch, n int) []int16 {
		m := &messages.TTSAudio{Epoch: e, Rate: rate, PCM: make([]int16, n)}
		s.stamp(m)
		return m.PCM
	}
	type want struct {
		at  int
		e   messages.Epoch
		seq int
	}
	check := func(pcm []int16, ws ...want) {
		t.Helper()
		got := 0
		for i := 0; i+stampLen <= len(pcm); i++ {
			if _, _, ok := readStamp(pcm[i:]); ok {
				got++
			}
		}
		if got != len(ws) {
			t.Errorf("%d stamps in a chunk of %d, want %d", got, len(pcm), len(ws))
		}
		for _, w := range ws {
			e, seq, ok := readStamp(pcm[w.at:])
			if !ok || e != w.e || seq != w.seq {
				t.Errorf("at %d: (%d, %d, %v), want (%d, %d)", w.at, e, seq, ok, w.e, w.seq)
			}
		}
	}
	check(feed(1, 640), want{0, 1, 0}, want{320, 1, 1})
	check(feed(1, 480), want{0, 1, 2}, want{320, 1, 3})
	check(feed(1, 480), want{160, 1, 4})
	check(feed(2, 320), want{0, 2, 0})
	check(feed(1, 640)) // stale
	check(feed(2, 320), want{0, 2, 1})
}
