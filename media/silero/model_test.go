//go:build cgo

package silero

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ort "github.com/yalue/onnxruntime_go"
)

// utterance is the test audio: one second of line noise, a synthesized
// sentence, one second of line noise, all under the same noise. It returns
// the audio and where the sentence's samples begin and end.
func utterance(t testing.TB, text string, rate int, seed uint32) (pcm []int16, from, to int) {
	t.Helper()
	sp := speech(t, text, rate)
	pcm = concat(noise(rate, seed), sp, noise(rate, seed+1))
	return mix(pcm, noise(len(pcm), seed+2)), rate, rate + len(sp)
}

func TestModelSpeechAndSilence(t *testing.T) {
	for _, rate := range []int{Rate16k, Rate8k} {
		t.Run(map[int]string{Rate16k: "16kHz", Rate8k: "8kHz"}[rate], func(t *testing.T) {
			m := newTestModel(t, rate, 8)
			pcm, from, to := utterance(t, "Hello, I would like to change my delivery address please.", rate, 1)
			w := m.WindowSize()
			probs := runAlone(t, m, windows(pcm, w))
			var maxSpeech float32
			var speechWindows, high int
			for i, p := range probs {
				start, end := i*w, (i+1)*w
				switch {
				case end <= from, start >= to+rate/2:
					// Mutation: feeding samples unscaled (int16 range
					// instead of [-1, 1)) turns the noise into loud
					// speech-like input and fails here.
					if p >= 0.1 {
						t.Errorf("window %d (%v) is line noise but has probability %.3f, want < 0.1",
							i, WindowDuration(rate)*time.Duration(i), p)
					}
				case start >= from && end <= to:
					speechWindows++
					maxSpeech = max(maxSpeech, p)
					if p > 0.5 {
						high++
					}
				}
			}
			// Mutation: dropping the recurrent state (feeding zeros each
			// window) or the context lowers the speech probabilities.
			if maxSpeech <= 0.8 {
				t.Errorf("max probability in speech %.3f, want > 0.8", maxSpeech)
			}
			if high < speechWindows*6/10 {
				t.Errorf("%d of %d speech windows above 0.5, want at least 60%%", high, speechWindows)
			}
		})
	}
}

// TestModelBatchEqualsAlone runs several streams with different audio one
// window at a time, each alone, and again all in one batch per step (with
// the streams in a different order each step), and checks that every
// probability agrees within 1e-4.
func TestModelBatchEqualsAlone(t *testing.T) {
	const rate = Rate16k
	m := newTestModel(t, rate, 8)
	pcmA, _, _ := utterance(t, "Hello, I would like to change my delivery address please.", rate, 10)
	pcmB, _, _ := utterance(t, "Can you call me back tomorrow morning?", rate, 20)
	audio := [][]int16{
		pcmA,
		pcmB,
		concat(noise(rate/3, 30), pcmA),    // the same sentence, later
		noise(len(pcmA), 40),               // line noise only
		concat(pcmB[rate/2:], pcmA[:rate]), // starts in the middle of speech
	}
	w := m.WindowSize()
	steps := len(pcmA) / w
	for _, a := range audio {
		steps = min(steps, len(a)/w)
	}
	alone := make([][]float32, len(audio))
	for k, a := range audio {
		alone[k] = runAlone(t, m, windows(a[:steps*w], w))
	}

	streams := make([]*Stream, len(audio))
	for k := range streams {
		streams[k], _ = NewStream(rate)
	}
	batch := make([]*Stream, len(audio))
	pcm := make([][]int16, len(audio))
	probs := make([]float32, len(audio))
	for step := range steps {
		// Rotate the order: a stream's state must follow the stream, not
		// its position in the batch. Mutation: copying the state back to
		// the wrong row, or laying out state as [N][2][128] instead of
		// [2][N][128], fails here.
		for i := range audio {
			k := (i + step) % len(audio)
			batch[i], pcm[i] = streams[k], audio[k][step*w:(step+1)*w]
		}
		if err := m.Run(batch, pcm, probs); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		for i := range audio {
			k := (i + step) % len(audio)
			if d := math.Abs(float64(probs[i] - alone[k][step])); d > 1e-4 {
				t.Fatalf("step %d stream %d: batched %.6f, alone %.6f", step, k, probs[i], alone[k][step])
			}
		}
	}
	for k, s := range streams {
		if s.Windows() != uint64(steps) {
			t.Errorf("stream %d ran %d windows, want %d", k, s.Windows(), steps)
		}
	}
}

// TestModelTwoStreamsInterleaved: two streams in one batch of two give the
// same results as each stream alone, also when the batch alternates with
// runs of one stream alone (batch sizes vary between runs).
func TestModelTwoStreamsInterleaved(t *testing.T) {
	const rate = Rate16k
	m := newTestModel(t, rate, 4)
	pcmA, _, _ := utterance(t, "Please cancel my order.", rate, 50)
	pcmB, _, _ := utterance(t, "What time do you open on Sunday?", rate, 60)
	w := m.WindowSize()
	n := min(len(pcmA), len(pcmB)) / w
	wa, wb := windows(pcmA, w)[:n], windows(pcmB, w)[:n]
	aloneA, aloneB := runAlone(t, m, wa), runAlone(t, m, wb)

	a, _ := NewStream(rate)
	b, _ := NewStream(rate)
	probs := make([]float32, 2)
	for i := range n {
		var err error
		switch i % 3 {
		case 0: // both in one batch
			err = m.Run([]*Stream{a, b}, [][]int16{wa[i], wb[i]}, probs)
		case 1: // each alone, b first
			err = errors.Join(m.Run([]*Stream{b}, [][]int16{wb[i]}, probs[1:]), m.Run([]*Stream{a}, [][]int16{wa[i]}, probs[:1]))
		case 2: // both, swapped
			err = m.Run([]*Stream{b, a}, [][]int16{wb[i], wa[i]}, probs)
			probs[0], probs[1] = probs[1], probs[0]
		}
		if err != nil {
			t.Fatalf("window %d: %v", i, err)
		}
		if d := math.Abs(float64(probs[0] - aloneA[i])); d > 1e-4 {
			t.Fatalf("window %d stream a: %.6f, alone %.6f", i, probs[0], aloneA[i])
		}
		if d := math.Abs(float64(probs[1] - aloneB[i])); d > 1e-4 {
			t.Fatalf("window %d stream b: %.6f, alone %.6f", i, probs[1], aloneB[i])
		}
	}
}

func TestModelRunInvalidInput(t *testing.T) {
	m := newTestModel(t, Rate16k, 2)
	w := m.WindowSize()
	good := make([]int16, w)
	s1, _ := NewStream(Rate16k)
	s2, _ := NewStream(Rate16k)
	s8, _ := NewStream(Rate8k)
	tests := []struct {
		name    string
		streams []*Stream
		pcm     [][]int16
		probs   int
	}{
		{"short window", []*Stream{s1}, [][]int16{good[:w-1]}, 1},
		{"long window", []*Stream{s1}, [][]int16{append(good[:w:w], 0)}, 1},
		{"stream of another rate", []*Stream{s8}, [][]int16{good}, 1},
		// Mutation: without the duplicate check the stream's state would
		// be advanced twice from the same start (the second copy wins).
		{"stream twice", []*Stream{s1, s1}, [][]int16{good, good}, 2},
		{"nil stream", []*Stream{nil}, [][]int16{good}, 1},
		{"batch above max", []*Stream{s1, s2, s8}, [][]int16{good, good, good}, 3},
		{"fewer windows than streams", []*Stream{s1, s2}, [][]int16{good}, 2},
		{"too few results", []*Stream{s1, s2}, [][]int16{good, good}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := m.Run(tt.streams, tt.pcm, make([]float32, tt.probs))
			if !errors.Is(err, ErrInvalidInput) {
				t.Fatalf("Run = %v, want ErrInvalidInput", err)
			}
			for _, s := range []*Stream{s1, s2, s8} {
				if s.Windows() != 0 || s.state != [2 * StateSize]float32{} {
					t.Fatalf("a stream changed on a refused run")
				}
			}
		})
	}
	// A good run after the refusals works: the duplicate marks do not stick.
	if err := m.Run([]*Stream{s1, s2}, [][]int16{good, good}, make([]float32, 2)); err != nil {
		t.Fatalf("Run after refusals: %v", err)
	}
}

func TestModelRunAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	m := newTestModel(t, Rate16k, 8)
	pcm := noise(m.WindowSize(), 7)
	streams := make([]*Stream, 8)
	ws := make([][]int16, 8)
	for i := range streams {
		streams[i], _ = NewStream(Rate16k)
		ws[i] = pcm
	}
	probs := make([]float32, 8)
	for _, n := range []int{1, 3, 8} {
		allocs := testing.AllocsPerRun(20, func() {
			if err := m.Run(streams[:n], ws[:n], probs); err != nil {
				t.Fatal(err)
			}
		})
		// Mutation: running through DynamicAdvancedSession.Run instead of a
		// prepared IoBinding allocates two slices per run and fails here.
		if allocs != 0 {
			t.Errorf("batch of %d: %v allocations per run, want 0", n, allocs)
		}
	}
}

func TestModelClosed(t *testing.T) {
	requireFiles(t)
	m, err := NewModel(ModelConfig{MaxBatch: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	s, _ := NewStream(Rate16k)
	if err := m.Run([]*Stream{s}, [][]int16{make([]int16, 512)}, make([]float32, 1)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Run after Close = %v, want ErrClosed", err)
	}
}

// TestRuntimeRefCount: the environment stays while any model holds it and
// comes back after the last one closed it.
func TestRuntimeRefCount(t *testing.T) {
	requireFiles(t)
	s, _ := NewStream(Rate16k)
	run := func(m *Model) error {
		return m.Run([]*Stream{s}, [][]int16{make([]int16, 512)}, make([]float32, 1))
	}
	for round := range 2 {
		a, err := NewModel(ModelConfig{MaxBatch: 1})
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		b, err := NewModel(ModelConfig{MaxBatch: 1})
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		// Mutation: destroying the environment on every release breaks b.
		if err := errors.Join(a.Close(), run(b)); err != nil {
			t.Fatalf("round %d: b after a closed: %v", round, err)
		}
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		if ort.IsInitialized() {
			t.Fatalf("round %d: environment still initialized after the last Close", round)
		}
	}
}

func TestRuntimeOtherLibraryRefused(t *testing.T) {
	m := newTestModel(t, Rate16k, 1)
	_ = m
	other := filepath.Join(t.TempDir(), "libonnxruntime.so.1")
	if err := os.WriteFile(other, []byte("not a library"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := NewModel(ModelConfig{RuntimePath: other, MaxBatch: 1})
	if !errors.Is(err, ErrRuntimeUnavailable) || !strings.Contains(err.Error(), "already loaded") {
		t.Fatalf("NewModel with another library while one is loaded = %v", err)
	}
}

// TestModelMatchesReference checks the model's feeding against a plain
// reference written straight from the model's description: each window is
// the 64 samples before it (zeros at the start) and its 512 new samples,
// scaled to [-1, 1), run through ONNX Runtime with the state of the previous
// window. Mutation: prepending zeros instead of the previous window's tail,
// or keeping the tail of the wrong end of the row, fails here.
func TestModelMatchesReference(t *testing.T) {
	const rate = Rate16k
	files := requireFiles(t)
	m := newTestModel(t, rate, 1)
	pcm, _, _ := utterance(t, "Good morning, this is a test of the reference.", rate, 100)
	w, c := m.WindowSize(), contextSize(rate)
	got := runAlone(t, m, windows(pcm, w))

	sess, err := ort.NewDynamicAdvancedSession(files.Model, inputNames, outputNames, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Destroy()
	input, err := ort.NewEmptyTensor[float32](ort.NewShape(1, int64(w+c)))
	if err != nil {
		t.Fatal(err)
	}
	defer input.Destroy()
	state, err := ort.NewEmptyTensor[float32](ort.NewShape(2, 1, StateSize))
	if err != nil {
		t.Fatal(err)
	}
	defer state.Destroy()
	sr, err := ort.NewScalar(int64(rate))
	if err != nil {
		t.Fatal(err)
	}
	defer sr.Destroy()
	for i := range got {
		x := input.GetData()
		for j := range x {
			if k := i*w - c + j; k >= 0 {
				x[j] = float32(pcm[k]) / 32768
			} else {
				x[j] = 0
			}
		}
		outs := []ort.Value{nil, nil}
		if err := sess.Run([]ort.Value{input, state, sr}, outs); err != nil {
			t.Fatalf("window %d: %v", i, err)
		}
		want := outs[0].(*ort.Tensor[float32]).GetData()[0]
		copy(state.GetData(), outs[1].(*ort.Tensor[float32]).GetData())
		outs[0].Destroy()
		outs[1].Destroy()
		if d := math.Abs(float64(got[i] - want)); d > 1e-4 {
			t.Fatalf("window %d: model %.6f, reference %.6f", i, got[i], want)
		}
	}
}
