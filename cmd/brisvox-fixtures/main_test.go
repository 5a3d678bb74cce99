package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brisvox/brisvox/media"
)

func TestTrimSpan(t *testing.T) {
	tests := []struct {
		name   string
		s      []int16
		lo, hi int
		ok     bool
	}{
		{name: "all quiet", s: []int16{0, 5, -10, 10}, ok: false},
		{name: "empty", s: nil, ok: false},
		// Mutation: >= instead of > takes the 10 at index 1 as audio.
		{name: "threshold itself is quiet", s: []int16{0, 10, 11, 3, -11, -10, 0}, lo: 2, hi: 5, ok: true},
		{name: "negative edges", s: []int16{-300, 0, 0, -300}, lo: 0, hi: 4, ok: true},
		{name: "one sample", s: []int16{0, 0, 12, 0}, lo: 2, hi: 3, ok: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lo, hi, ok := trimSpan(tc.s, 10)
			if ok != tc.ok || ok && (lo != tc.lo || hi != tc.hi) {
				t.Fatalf("trimSpan = %d, %d, %v; want %d, %d, %v", lo, hi, ok, tc.lo, tc.hi, tc.ok)
			}
		})
	}
}

func TestLongestQuietRun(t *testing.T) {
	// Mutation: not resetting the run on a loud sample gives 5.
	if got := longestQuietRun([]int16{50, 0, 1, 50, 0, 0, 0, -50, 2}, 10); got != 3 {
		t.Fatalf("longestQuietRun = %d, want 3", got)
	}
}

// tone is n samples of a square wave of the given amplitude, with quiet
// samples at both ends that trimming must remove.
func tone(n int, amp int16) []int16 {
	s := make([]int16, n)
	for i := 5; i < n-5; i++ {
		if (i/8)%2 == 0 {
			s[i] = amp
		} else {
			s[i] = -amp
		}
	}
	s[2], s[n-3] = 3, -3 // near-silence of the synthesizer, under the threshold
	return s
}

func TestCompose(t *testing.T) {
	l := Layout{Rate: 16000, Lead: 100 * time.Millisecond, Trail: 200 * time.Millisecond,
		Gaps: []time.Duration{50 * time.Millisecond, 75 * time.Millisecond}, Threshold: 327, MaxPause: 250 * time.Millisecond}
	utts := []Utterance{
		{Language: "en", Text: "one", Samples: tone(1000, 5000)},
		{Language: "tr", Text: "iki", Samples: tone(500, 4000)},
		{Language: "en", Text: "three", Samples: tone(700, 3000)},
	}
	out, sc, err := Compose(utts, l, "mixed")
	if err != nil {
		t.Fatal(err)
	}
	// Mutation: placing an utterance untrimmed, or reusing the first gap
	// instead of cycling, moves these offsets.
	want := []Segment{
		{StartSample: 1600, EndSample: 1600 + 990, Text: "one", Language: "en"},
		{StartSample: 1600 + 990 + 800, EndSample: 1600 + 990 + 800 + 490, Text: "iki", Language: "tr"},
		{StartSample: 1600 + 990 + 800 + 490 + 1200, EndSample: 1600 + 990 + 800 + 490 + 1200 + 690, Text: "three", Language: "en"},
	}
	if len(sc.Segments) != len(want) {
		t.Fatalf("segments %+v", sc.Segments)
	}
	for i, g := range sc.Segments {
		w := want[i]
		if g.StartSample != w.StartSample || g.EndSample != w.EndSample || g.Text != w.Text || g.Language != w.Language {
			t.Errorf("segment %d = %+v, want %+v", i, g, w)
		}
		// The ground truth is the audio: loud at both edges, digital zero
		// just outside.
		if out[g.StartSample] == 0 || out[g.EndSample-1] == 0 || out[g.StartSample-1] != 0 || out[g.EndSample] != 0 {
			t.Errorf("segment %d edges do not sit on the audio", i)
		}
		if g.MaxPauseMS != 0 {
			t.Errorf("segment %d: max pause %v ms in a continuous tone", i, g.MaxPauseMS)
		}
	}
	if len(out) != want[2].EndSample+3200 {
		t.Errorf("%d samples, want %d (trail of 200 ms)", len(out), want[2].EndSample+3200)
	}
	if sc.Rate != 16000 || sc.Language != "mixed" || sc.Transcript != "one iki three" || sc.Threshold != 327 {
		t.Errorf("sidecar %+v", sc)
	}
}

func TestComposeRefuses(t *testing.T) {
	l := Layout{Rate: 16000, Gaps: []time.Duration{time.Second}, Threshold: 327, MaxPause: 250 * time.Millisecond}
	// Exactly 250 ms of quiet inside: the tones' 5 quiet samples at each
	// end and 3990 zeros.
	paused := slices.Concat(tone(800, 5000), make([]int16, 3990), tone(800, 5000))
	tests := []struct {
		name string
		utts []Utterance
		l    Layout
	}{
		{name: "no utterances", l: l},
		{name: "silent utterance", utts: []Utterance{{Text: "x", Samples: make([]int16, 100)}}, l: l},
		// Mutation: comparing the pause with > instead of >= accepts it.
		{name: "a pause of 250 ms inside", utts: []Utterance{{Text: "x", Samples: paused}}, l: l},
		{name: "no gaps for two", utts: []Utterance{{Text: "a", Samples: tone(100, 5000)}, {Text: "b", Samples: tone(100, 5000)}}, l: Layout{Rate: 16000, Threshold: 327}},
		{name: "zero rate", utts: []Utterance{{Text: "a", Samples: tone(100, 5000)}}, l: Layout{Threshold: 327}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := Compose(tc.utts, tc.l, "en"); !errors.Is(err, errFixture) {
				t.Fatalf("Compose error = %v, want errFixture", err)
			}
		})
	}
}

func writeWAV(t *testing.T, path string, rate int, s []int16) {
	t.Helper()
	var b bytes.Buffer
	if err := media.WriteWAV(&b, rate, s); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRun drives the command as the script does: utterance WAVs and a plan
// in, a fixture WAV and its sidecar out.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	writeWAV(t, filepath.Join(dir, "a.wav"), 16000, tone(1600, 6000))
	writeWAV(t, filepath.Join(dir, "b.wav"), 16000, tone(3200, 6000))
	writeWAV(t, filepath.Join(dir, "c8k.wav"), 8000, tone(800, 6000))
	plan := filepath.Join(dir, "plan.tsv")
	if err := os.WriteFile(plan, []byte("en\t"+filepath.Join(dir, "a.wav")+"\tHello there\ntr\t"+filepath.Join(dir, "b.wav")+"\tMerhaba: dünya\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "fx.wav")
	var stderr bytes.Buffer
	if code := run([]string{"-plan", plan, "-out", out, "-language", "mixed", "-lead", "300ms", "-gaps", "900ms"}, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := media.ReadWAV(f, 0)
	if err != nil {
		t.Fatal(err)
	}
	js, err := os.ReadFile(filepath.Join(dir, "fx.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sc Sidecar
	if err := json.Unmarshal(js, &sc); err != nil {
		t.Fatal(err)
	}
	if w.Rate != 16000 || len(sc.Segments) != 2 || sc.Transcript != "Hello there Merhaba: dünya" {
		t.Fatalf("wav %d Hz, sidecar %+v", w.Rate, sc)
	}
	// The tone is trimmed of its 5 quiet samples at each end.
	if s := sc.Segments[0]; s.StartSample != 4800 || s.EndSample != 4800+1590 {
		t.Errorf("first segment %+v", s)
	}
	if s := sc.Segments[1]; s.StartSample != 4800+1590+14400 || s.Language != "tr" {
		t.Errorf("second segment %+v", s)
	}
	if len(w.Samples) != sc.Segments[1].EndSample+16000 {
		t.Errorf("%d samples, want the second segment's end plus 1 s of trail", len(w.Samples))
	}

	t.Run("errors", func(t *testing.T) {
		bad := filepath.Join(dir, "bad.tsv")
		if err := os.WriteFile(bad, []byte("en\t"+filepath.Join(dir, "c8k.wav")+"\tslow\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		noTabs := filepath.Join(dir, "notabs.tsv")
		if err := os.WriteFile(noTabs, []byte("en a.wav text\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name string
			args []string
			code int
			says string
		}{
			{name: "usage", args: []string{"-plan", plan}, code: 2, says: "usage"},
			{name: "8 kHz utterance", args: []string{"-plan", bad, "-out", out, "-language", "en"}, code: 1, says: "8000 Hz"},
			{name: "plan without tabs", args: []string{"-plan", noTabs, "-out", out, "-language", "en"}, code: 1, says: "tabs"},
			{name: "missing plan", args: []string{"-plan", filepath.Join(dir, "nope.tsv"), "-out", out, "-language", "en"}, code: 1, says: "nope.tsv"},
			{name: "bad gap", args: []string{"-plan", plan, "-out", out, "-language", "en", "-gaps", "1s,-2s"}, code: 2, says: "not positive"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				var stderr bytes.Buffer
				if code := run(tc.args, &stderr); code != tc.code || !strings.Contains(stderr.String(), tc.says) {
					t.Fatalf("exit %d, stderr %q; want %d saying %q", code, stderr.String(), tc.code, tc.says)
				}
			})
		}
	})
}
