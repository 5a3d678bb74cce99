package media

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// fixtureSidecar is the JSON scripts/fixtures.sh writes beside each WAV
// (see cmd/brisvox-fixtures): ground-truth segments, end exclusive.
type fixtureSidecar struct {
	Rate      int    `json:"rate"`
	Language  string `json:"language"`
	Threshold int    `json:"threshold"`
	Segments  []struct {
		StartSample int    `json:"start_sample"`
		EndSample   int    `json:"end_sample"`
		Text        string `json:"text"`
		Language    string `json:"language"`
	} `json:"segments"`
	Transcript string `json:"transcript"`
}

// fixturesDir finds .native/fixtures under the module root. Missing
// fixtures fail the test (they are part of the suite, made by `go tool task
// setup`) except under -short.
func fixturesDir(t *testing.T, names ...string) string {
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
	fx := filepath.Join(dir, ".native", "fixtures")
	for _, n := range names {
		for _, ext := range []string{".wav", ".json"} {
			if _, err := os.Stat(filepath.Join(fx, n+ext)); errors.Is(err, os.ErrNotExist) {
				if testing.Short() {
					t.Skipf("speech fixture %s%s missing in %s (skipped under -short)", n, ext, fx)
				}
				t.Fatalf("speech fixture %s%s missing in %s: run `go tool task setup` (or bash scripts/fixtures.sh)", n, ext, fx)
			}
		}
	}
	return fx
}

func loadFixture(t *testing.T, dir, name string) (*WAV, fixtureSidecar) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, name+".wav"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := ReadWAV(f, 0)
	if err != nil {
		t.Fatalf("%s.wav: %v", name, err)
	}
	js, err := os.ReadFile(filepath.Join(dir, name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var sc fixtureSidecar
	if err := json.Unmarshal(js, &sc); err != nil {
		t.Fatalf("%s.json: %v", name, err)
	}
	if w.Rate != sc.Rate || w.Channels != 1 || w.Truncated || len(sc.Segments) == 0 {
		t.Fatalf("%s: %d Hz, %d channels, truncated %v, %d segments; sidecar says %d Hz", name, w.Rate, w.Channels, w.Truncated, len(sc.Segments), sc.Rate)
	}
	return w, sc
}

// sampleSpan is a segment in samples, end exclusive.
type sampleSpan struct{ start, end int }

// energySegments runs an EnergyVAD over pcm in frames of the given length
// and returns the segments between its start and stop events. Speech still
// open at the end is closed by feeding silence until the detector stops.
func energySegments(t *testing.T, pcm []int16, rate int, frame time.Duration) []sampleSpan {
	t.Helper()
	v, err := NewEnergyVAD(EnergyVADConfig{})
	if err != nil {
		t.Fatal(err)
	}
	n := int(frame * time.Duration(rate) / time.Second)
	at := func(ts time.Time) int { return int(ts.Sub(testBase) * time.Duration(rate) / time.Second) }
	var out []sampleSpan
	open := -1
	feed := func(p []int16, off int) {
		ev, ts := v.Process(p, testBase.Add(time.Duration(off)*time.Second/time.Duration(rate)), time.Duration(len(p))*time.Second/time.Duration(rate))
		switch ev {
		case VADStart:
			open = at(ts)
		case VADStop:
			out = append(out, sampleSpan{open, at(ts)})
			open = -1
		}
	}
	off := 0
	for ; off < len(pcm); off += n {
		feed(pcm[off:min(off+n, len(pcm))], off)
	}
	quiet := make([]int16, n)
	for ; open >= 0; off += n {
		feed(quiet, off)
	}
	return out
}

// TestEnergyVADOnSpeechFixtures runs the energy VAD with its defaults over
// real synthesized speech (English by flite, Turkish by espeak-ng, a mix)
// and compares its segments with the ground truth, which is where each
// utterance's samples first and last exceed 1% of full scale.
//
// What it can and cannot meet, measured on these fixtures:
//   - Outside a segment the fixtures are digital zero, so a frame the
//     detector calls speech holds part of an utterance: its start can be
//     early, and its stop late, by less than one frame, never more. With
//     10 ms frames that is the 10 ms bound, checked for every segment.
//   - Inside, the detector is late on onsets and early on endings whose
//     energy is below its RMS threshold (500, about -36 dBFS) although
//     their peaks pass 1% (-40 dBFS): the burst of the "P" of "Please" is
//     followed by a quiet closure (+30 ms at 10 ms frames, +20 ms at 20 ms),
//     the soft "R" of "Rezervasyon" takes 40-48 ms to reach the threshold.
//     No frame size fixes that, so the bound inside is 50 ms (10 ms
//     frames) or 60 ms (20 ms frames), and at 10 ms frames at least three
//     quarters of all edges (21 of 24 measured) must still fall within 10 ms.
//   - One segment per utterance: the pauses inside an utterance (under
//     250 ms by construction of the fixtures) stay within the 300 ms
//     hangover, and the 800-1200 ms gaps exceed it.
func TestEnergyVADOnSpeechFixtures(t *testing.T) {
	names := []string{"en", "tr", "mixed"}
	dir := fixturesDir(t, names...)
	type fixture struct {
		wav *WAV
		sc  fixtureSidecar
	}
	fixtures := make(map[string]fixture, len(names))
	for _, name := range names {
		w, sc := loadFixture(t, dir, name)
		fixtures[name] = fixture{w, sc}
	}
	tests := []struct {
		frame      time.Duration
		inside     time.Duration // bound on a late start or an early stop
		within10ms float64       // share of all edges within 10 ms, 0 for no check
	}{
		// At 10 ms frames every mark is within 10 ms of the truth (the
		// edge refinement follows soft onsets and endings); at 20 ms
		// frames the marks are frame-granular, so within one frame.
		{frame: 10 * time.Millisecond, inside: 10 * time.Millisecond, within10ms: 1},
		{frame: 20 * time.Millisecond, inside: 20 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.frame.String(), func(t *testing.T) {
			edges, close10 := 0, 0
			for _, name := range names {
				w, sc := fixtures[name].wav, fixtures[name].sc
				t.Run(name, func(t *testing.T) {
					// Mutations this catches (each applied to
					// energyvad.go and seen failing): StopAfter 40 ms
					// splits every utterance into several segments; a stop
					// not backdated (dated at the frame that confirms it)
					// marks silence as speech; a start dated at the
					// confirming frame, or a threshold of 2000, misses
					// onsets beyond the bound inside; a stop dated at the
					// start of the last speech frame drops the share of
					// edges within 10 ms to 62%; no edge refinement
					// (EdgeThreshold = Threshold) leaves soft onsets and
					// endings 30-48 ms inside (21 of 24 edges within
					// 10 ms).
					got := energySegments(t, w.Samples, w.Rate, tc.frame)
					ms := func(samples int) float64 { return float64(samples) * 1000 / float64(w.Rate) }
					if len(got) != len(sc.Segments) {
						t.Fatalf("%d segments, want %d (one per utterance): %v", len(got), len(sc.Segments), got)
					}
					frame := int(tc.frame * time.Duration(w.Rate) / time.Second)
					inside := int(tc.inside * time.Duration(w.Rate) / time.Second)
					tenMS := w.Rate / 100
					for i, g := range sc.Segments {
						v := got[i]
						dStart, dEnd := v.start-g.StartSample, v.end-g.EndSample
						t.Logf("%-40q start %+7.2f ms, end %+7.2f ms", g.Text, ms(dStart), ms(dEnd))
						if dStart <= -frame || dEnd >= frame {
							t.Errorf("%q: speech marked in the silence around it: [%d, %d) for [%d, %d) (more than a frame outside)", g.Text, v.start, v.end, g.StartSample, g.EndSample)
						}
						if dStart > inside || dEnd < -inside {
							t.Errorf("%q: start %+.2f ms or end %+.2f ms beyond the %v bound inside", g.Text, ms(dStart), ms(dEnd), tc.inside)
						}
						for _, d := range []int{dStart, dEnd} {
							edges++
							if -tenMS <= d && d <= tenMS {
								close10++
							}
						}
					}
				})
			}
			share := float64(close10) / float64(max(edges, 1))
			t.Logf("%d of %d edges within 10 ms", close10, edges)
			if share < tc.within10ms {
				t.Errorf("%d of %d edges (%.0f%%) within 10 ms, want at least %.0f%%", close10, edges, 100*share, 100*tc.within10ms)
			}
		})
	}
}
