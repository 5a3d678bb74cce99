//go:build cgo

package eot

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/brisvox/brisvox/media/internal/ortenv"
	"github.com/brisvox/brisvox/media/silero"
	ort "github.com/yalue/onnxruntime_go"
)

// runtimeLib finds the ONNX Runtime library as NewRunner would; without it
// the runner tests cannot run: skipped under -short, failed otherwise.
func runtimeLib(t testing.TB) string {
	t.Helper()
	lib, err := locateRuntime("")
	if err != nil {
		if testing.Short() {
			t.Skipf("-short: %v", err)
		}
		t.Fatalf("ONNX Runtime library missing: %v", err)
	}
	return lib
}

func newTestRunner(t testing.TB, cfg Config) *Runner {
	t.Helper()
	r, err := NewRunner(cfg)
	if err != nil {
		t.Fatalf("NewRunner: %v", err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return r
}

// checkGoroutines fails the test if goroutines started during it are still
// running at its end (waiting briefly for them to exit).
func checkGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		for range 100 {
			if runtime.NumGoroutine() <= before {
				return
			}
			runtime.Gosched()
			time.Sleep(time.Millisecond) // waiting for exits, not timing logic
		}
		t.Errorf("goroutines: %d before, %d after", before, runtime.NumGoroutine())
	})
}

// TestRunnerMatchesGo runs the hand-built logistic-regression model and
// compares its output with the value computed in Go from the same features.
// Mutations caught (each seen failing): features written frame-major
// ([frame][mel]) instead of [mel][frame], the wrong audio (first 8 s) or no
// features at all, the output read before Run.
func TestRunnerMatchesGo(t *testing.T) {
	runtimeLib(t)
	checkGoroutines(t)
	m := testModel{w: randomWeights(1), b: 0.25}
	path := m.write(t, t.TempDir(), "logreg.onnx")
	r := newTestRunner(t, Config{ModelPath: path})
	for _, tc := range []struct {
		name  string
		audio []int16
	}{
		{"speech_like_2s", randomAudio(32000, 11, 0.5)},
		{"long_12s", randomAudio(12*SampleRate, 12, 0.3)},
		{"silence", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := expectedProbability(t, m, tc.audio)
			got, err := r.Complete(t.Context(), tc.audio)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(float64(got)-want) > 1e-5 {
				t.Fatalf("p = %v, want %v", got, want)
			}
			t.Logf("p = %.6f", got)
		})
	}
}

// TestRunnerConfigErrors: every way of not having a usable model gives the
// right sentinel and a message naming what to fix.
func TestRunnerConfigErrors(t *testing.T) {
	dir := t.TempDir()
	good := testModel{w: randomWeights(2)}.write(t, dir, "good.onnx")
	notONNX := filepath.Join(dir, "notes.onnx")
	if err := os.WriteFile(notONNX, []byte("this is a text file, not a model\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.onnx")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.onnx")
	data := testModel{w: randomWeights(2)}.encode()
	if err := os.WriteFile(truncated, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name      string
		cfg       Config
		runtime   bool // needs the ONNX Runtime library
		want      error
		mentioned []string
	}{
		{"no_model_configured", Config{}, false, ErrNoModel,
			[]string{"eot.Config.ModelPath", "docs/MEDIA.md", "input_features", "[1, 80, 800]"}},
		{"missing_file", Config{ModelPath: filepath.Join(dir, "nope.onnx")}, false, ErrModelUnavailable,
			[]string{filepath.Join(dir, "nope.onnx"), "no such file"}},
		{"directory", Config{ModelPath: dir}, false, ErrModelUnavailable, []string{dir, "not a regular file"}},
		{"empty_file", Config{ModelPath: empty}, false, ErrModelUnavailable, []string{empty, "empty"}},
		{"missing_runtime", Config{ModelPath: good, RuntimePath: filepath.Join(dir, "libonnxruntime.so.1")}, false,
			ErrRuntimeUnavailable, []string{filepath.Join(dir, "libonnxruntime.so.1"), "go tool task setup", "eot.Config.RuntimePath"}},
		{"text_file", Config{ModelPath: notONNX}, true, ErrModelUnavailable, []string{notONNX, "not a valid ONNX model"}},
		{"truncated_model", Config{ModelPath: truncated}, true, ErrModelUnavailable, []string{truncated, "not a valid ONNX model"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.runtime {
				runtimeLib(t)
			}
			r, err := NewRunner(tc.cfg)
			if err == nil {
				_ = r.Close()
				t.Fatal("NewRunner succeeded")
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
			t.Log(err)
			for _, s := range tc.mentioned {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
		})
	}
}

// TestRunnerSignatureMismatch: models whose input or output the runner
// cannot feed or read are refused with ErrModelUnavailable naming the file
// and what was found. Mutations caught: shapeFits accepting any size
// (whisper_30s), the output picked as the first of several (two_outputs),
// dynamic dimensions refused (fixed_batch accepted, dynamic all accepted).
func TestRunnerSignatureMismatch(t *testing.T) {
	runtimeLib(t)
	dir := t.TempDir()
	w := randomWeights(3)
	cases := []struct {
		name    string
		model   testModel
		cfg     Config
		ok      bool
		mention string
	}{
		{"fixed_batch", testModel{inputDims: []any{1, NumMels, NumFrames}}, Config{}, true, ""},
		{"all_dynamic", testModel{inputDims: []any{"b", "mels", "frames"}}, Config{}, true, ""},
		{"whisper_30s", testModel{inputDims: []any{1, NumMels, 3000}, scalarW: true}, Config{}, false, "3000"},
		{"two_dims", testModel{inputDims: []any{NumMels, NumFrames}}, Config{}, false, "want \"input_features\""},
		{"other_input_name", testModel{inputName: "x"}, Config{}, false, "\"x\""},
		{"other_input_name_configured", testModel{inputName: "x"}, Config{InputName: "x"}, true, ""},
		{"two_outputs", testModel{twoOutputs: true}, Config{}, false, "eot.Config.OutputName"},
		{"two_outputs_named", testModel{twoOutputs: true}, Config{OutputName: testOutput}, true, ""},
		{"missing_output_name", testModel{}, Config{OutputName: "prob"}, false, "no output \"prob\""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.model.w = w
			tc.cfg.ModelPath = tc.model.write(t, dir, tc.name+".onnx")
			r, err := NewRunner(tc.cfg)
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				if _, err := r.Complete(t.Context(), nil); err != nil {
					t.Fatal(err)
				}
				if err := r.Close(); err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				_ = r.Close()
				t.Fatal("NewRunner succeeded")
			}
			if !errors.Is(err, ErrModelUnavailable) || !strings.Contains(err.Error(), tc.cfg.ModelPath) ||
				!strings.Contains(err.Error(), tc.mention) {
				t.Fatalf("err %v: want ErrModelUnavailable naming %s and %q", err, tc.cfg.ModelPath, tc.mention)
			}
			t.Log(err)
		})
	}
}

// TestRunnerRejectsNonProbability: a model that outputs a logit above 1 is
// an inference error naming the file. Mutation caught: the [0, 1] check
// removed.
func TestRunnerRejectsNonProbability(t *testing.T) {
	runtimeLib(t)
	m := testModel{w: make([]float32, FeatureLen), b: 3, noSigmoid: true}
	r := newTestRunner(t, Config{ModelPath: m.write(t, t.TempDir(), "logit.onnx")})
	_, err := r.Complete(t.Context(), nil)
	if !errors.Is(err, ErrInference) || !strings.Contains(err.Error(), "logit.onnx") {
		t.Fatalf("err %v, want ErrInference naming the file", err)
	}
}

// TestRunnerContext: a cancelled context stops a call, a run whose context
// ends is terminated and reported, and the runner works afterwards (the
// terminate flag is cleared). Mutation caught: UnsetTerminate dropped (the
// next run fails). The goroutine check covers the watcher's exit.
func TestRunnerContext(t *testing.T) {
	runtimeLib(t)
	checkGoroutines(t)
	m := testModel{w: randomWeights(4)}
	r := newTestRunner(t, Config{ModelPath: m.write(t, t.TempDir(), "m.onnx")})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := r.Complete(ctx, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled before: err %v", err)
	}
	// The run itself with an ended context: the watcher fires at once.
	r.mu.Lock()
	err := r.run(ctx)
	r.mu.Unlock()
	if !errors.Is(err, context.Canceled) || !errors.Is(err, ErrInference) {
		t.Fatalf("cancelled during: err %v", err)
	}
	live, stop := context.WithCancel(t.Context())
	defer stop()
	want := expectedProbability(t, m, nil)
	for range 20 {
		got, err := r.Complete(live, nil)
		if err != nil {
			t.Fatalf("after a terminated run: %v", err)
		}
		if math.Abs(float64(got)-want) > 1e-5 {
			t.Fatalf("p = %v, want %v", got, want)
		}
	}
	// The flag the watcher sets really stops a run of ONNX Runtime.
	if err := r.runOpts.Terminate(); err != nil {
		t.Fatal(err)
	}
	if err := r.session.RunWithOptions(r.runOpts); err == nil {
		t.Fatal("a run with the terminate flag set succeeded")
	}
	if err := r.runOpts.UnsetTerminate(); err != nil {
		t.Fatal(err)
	}
}

// TestRunnerEnvironmentOwnership: the environment lives while any user
// holds it (runners, or another package through media/internal/ortenv)
// and dies with the last. Mutations caught: ortenv destroying it on any
// release, Close not idempotent (double release).
func TestRunnerEnvironmentOwnership(t *testing.T) {
	lib := runtimeLib(t)
	if ort.IsInitialized() {
		t.Fatal("environment left initialized by an earlier test")
	}
	path := testModel{w: randomWeights(5)}.write(t, t.TempDir(), "m.onnx")

	// Ours: two runners, the environment lives until the second closes.
	a, err := NewRunner(Config{ModelPath: path})
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewRunner(Config{ModelPath: path})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil { // idempotent: must not release twice
		t.Fatal(err)
	}
	if !ort.IsInitialized() {
		t.Fatal("environment destroyed while a runner still uses it")
	}
	if _, err := b.Complete(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Complete(t.Context(), nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("closed runner: err %v, want ErrClosed", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if ort.IsInitialized() {
		t.Fatal("environment created by the runners survives them")
	}

	// Shared: another user (media/silero, say) holds it through ortenv;
	// the runner's close leaves it to them.
	other, err := ortenv.Acquire(lib)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewRunner(Config{ModelPath: path})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Complete(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if !ort.IsInitialized() || ortenv.Refs() != 1 {
		t.Fatal("the runner destroyed an environment another user holds")
	}
	if err := other.Release(); err != nil {
		t.Fatal(err)
	}
	if ort.IsInitialized() {
		t.Fatal("the environment survives its last user")
	}
}

// TestRunnerBadRuntimeLibrary: a file that is not the library fails to
// load with ErrRuntimeUnavailable naming it.
func TestRunnerBadRuntimeLibrary(t *testing.T) {
	runtimeLib(t)
	if ort.IsInitialized() {
		t.Fatal("environment left initialized by an earlier test")
	}
	dir := t.TempDir()
	fake := filepath.Join(dir, "libonnxruntime.so.1")
	if err := os.WriteFile(fake, []byte("not a shared library"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := testModel{w: randomWeights(6)}.write(t, dir, "m.onnx")
	_, err := NewRunner(Config{ModelPath: path, RuntimePath: fake})
	if !errors.Is(err, ErrRuntimeUnavailable) || !strings.Contains(err.Error(), fake) ||
		!strings.Contains(err.Error(), "go tool task setup") {
		t.Fatalf("err %v", err)
	}
	// A failed load leaves nothing behind: the real library still loads.
	r := newTestRunner(t, Config{ModelPath: path})
	if _, err := r.Complete(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkRunner: one end-of-turn estimate on 8 s of audio with the test
// model (features plus a one-thread ONNX Runtime run).
func BenchmarkRunner(b *testing.B) {
	runtimeLib(b)
	m := testModel{w: randomWeights(7)}
	r := newTestRunner(b, Config{ModelPath: m.write(b, b.TempDir(), "m.onnx")})
	audio := randomAudio(WindowSamples, 8, 0.3)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Complete(ctx, audio); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSharesTheEnvironmentWithSilero: a Silero model and an end-of-turn
// runner in one process, closed in either order, each keep working until
// their own Close, and the environment goes with the last of them. Before
// media/internal/ortenv, Silero's last Close destroyed the environment
// under a live runner, and a runner created first made Silero's
// initialization fail. (Mutation seen failing: ortenv.Release destroying
// the environment while references remain.)
func TestSharesTheEnvironmentWithSilero(t *testing.T) {
	runtimeLib(t)
	path := testModel{w: randomWeights(6)}.write(t, t.TempDir(), "m.onnx")
	for _, sileroFirst := range []bool{true, false} {
		r, err := NewRunner(Config{ModelPath: path})
		if err != nil {
			t.Fatal(err)
		}
		m, err := silero.NewModel(silero.ModelConfig{MaxBatch: 1})
		if err != nil {
			t.Fatal(err)
		}
		first, second := func() error { return m.Close() }, func() error { return r.Close() }
		if !sileroFirst {
			first, second = second, first
		}
		if err := first(); err != nil {
			t.Fatal(err)
		}
		if sileroFirst {
			if _, err := r.Complete(t.Context(), make([]int16, 16000)); err != nil {
				t.Fatalf("runner after Silero closed: %v", err)
			}
		} else {
			st, err := silero.NewStream(16000)
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Run([]*silero.Stream{st}, [][]int16{make([]int16, m.WindowSize())}, make([]float32, 1)); err != nil {
				t.Fatalf("silero after the runner closed: %v", err)
			}
		}
		if err := second(); err != nil {
			t.Fatal(err)
		}
		if ort.IsInitialized() || ortenv.Refs() != 0 {
			t.Fatal("the environment survives its last user")
		}
	}
}
