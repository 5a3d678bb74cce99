//go:build cgo

package eot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/brisvox/brisvox/media/internal/ortenv"
	ort "github.com/yalue/onnxruntime_go"
)

// Runner is the Model backed by an ONNX model file run with ONNX Runtime on
// one thread (intra-op and inter-op). Its input tensor is the feature buffer
// itself, so a call copies nothing; calls are serialised (one session, one
// buffer). Close releases it.
//
// ONNX Runtime's environment is process-global in onnxruntime_go; every
// user in media (Runners, media/silero's models) holds a reference through
// media/internal/ortenv, the first loads it and the last release destroys
// it.
type Runner struct {
	mu       sync.Mutex
	closed   bool
	path     string
	features *Features
	in       *ort.Tensor[float32]
	out      *ort.Tensor[float32]
	session  *ort.AdvancedSession
	opts     *ort.SessionOptions
	runOpts  *ort.RunOptions
	env      *envRef
	termDone chan struct{} // the context watcher has terminated the run
}

// NewRunner loads cfg.ModelPath and checks that its input and output are a
// Smart Turn style classifier's. Errors: ErrNoModel (nothing configured),
// ErrModelUnavailable (the file is missing, unreadable, not a valid ONNX
// model, or has the wrong inputs or outputs; the message names the file),
// ErrRuntimeUnavailable (the ONNX Runtime library is missing or does not
// load; the message names it).
func NewRunner(cfg Config) (_ *Runner, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.InputName == "" {
		cfg.InputName = DefaultInputName
	}
	if err := checkModelFile(cfg.ModelPath); err != nil {
		return nil, err
	}
	lib, err := locateRuntime(cfg.RuntimePath)
	if err != nil {
		return nil, err
	}
	features, err := NewFeatures(cfg.Features)
	if err != nil {
		return nil, err
	}
	env, err := acquireEnv(lib)
	if err != nil {
		return nil, err
	}
	r := &Runner{path: cfg.ModelPath, features: features, env: env, termDone: make(chan struct{}, 1)}
	defer func() {
		if err != nil {
			_ = r.Close() // the first error is the one to report
		}
	}()

	if r.opts, err = ort.NewSessionOptions(); err != nil {
		return nil, fmt.Errorf("%w: session options: %v", ErrRuntimeUnavailable, err)
	}
	if err = r.opts.SetIntraOpNumThreads(1); err == nil {
		err = r.opts.SetInterOpNumThreads(1)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: session options: %v", ErrRuntimeUnavailable, err)
	}
	inputs, outputs, err := ort.GetInputOutputInfoWithOptions(cfg.ModelPath, r.opts)
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not a valid ONNX model for this runtime: %v", ErrModelUnavailable, cfg.ModelPath, err)
	}
	outName, outShape, err := checkSignature(cfg, inputs, outputs)
	if err != nil {
		return nil, err
	}
	if r.in, err = ort.NewTensor(ort.NewShape(1, NumMels, NumFrames), make([]float32, FeatureLen)); err != nil {
		return nil, fmt.Errorf("%w: input tensor: %v", ErrRuntimeUnavailable, err)
	}
	if r.out, err = ort.NewEmptyTensor[float32](outShape); err != nil {
		return nil, fmt.Errorf("%w: output tensor: %v", ErrRuntimeUnavailable, err)
	}
	r.session, err = ort.NewAdvancedSession(cfg.ModelPath, []string{cfg.InputName}, []string{outName},
		[]ort.Value{r.in}, []ort.Value{r.out}, r.opts)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: creating the session: %v", ErrModelUnavailable, cfg.ModelPath, err)
	}
	if r.runOpts, err = ort.NewRunOptions(); err != nil {
		return nil, fmt.Errorf("%w: run options: %v", ErrRuntimeUnavailable, err)
	}
	return r, nil
}

// checkSignature checks the model's inputs and outputs against what the
// runner feeds and reads, and returns the output's name and the shape to
// allocate for it (dynamic dimensions as 1).
func checkSignature(cfg Config, inputs, outputs []ort.InputOutputInfo) (string, ort.Shape, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrModelUnavailable, cfg.ModelPath, fmt.Sprintf(format, args...))
	}
	if len(inputs) != 1 {
		return "", nil, bad("the model has %d inputs (%s), want one, %q float32 [1, %d, %d]",
			len(inputs), describe(inputs), cfg.InputName, NumMels, NumFrames)
	}
	in := inputs[0]
	want := ort.NewShape(1, NumMels, NumFrames)
	if in.Name != cfg.InputName || in.OrtValueType != ort.ONNXTypeTensor ||
		in.DataType != ort.TensorElementDataTypeFloat || !shapeFits(in.Dimensions, want) {
		return "", nil, bad("input is %s, want %q float32 %v (80 mel bands x 800 frames of 10 ms; -1 allowed for any dimension)",
			in.String(), cfg.InputName, want)
	}
	var out *ort.InputOutputInfo
	switch {
	case cfg.OutputName != "":
		for i := range outputs {
			if outputs[i].Name == cfg.OutputName {
				out = &outputs[i]
			}
		}
		if out == nil {
			return "", nil, bad("no output %q (outputs: %s)", cfg.OutputName, describe(outputs))
		}
	case len(outputs) == 1:
		out = &outputs[0]
	default:
		return "", nil, bad("the model has %d outputs (%s): set eot.Config.OutputName", len(outputs), describe(outputs))
	}
	shape := out.Dimensions.Clone()
	for i, d := range shape {
		if d < 0 {
			shape[i] = 1
		}
	}
	if out.OrtValueType != ort.ONNXTypeTensor || out.DataType != ort.TensorElementDataTypeFloat ||
		len(shape) == 0 || shape.FlattenedSize() != 1 {
		return "", nil, bad("output is %s, want one float32 value per input (shape [1], [1, 1] or dynamic)", out.String())
	}
	return out.Name, shape, nil
}

// shapeFits reports whether a declared shape accepts want (-1 dimensions are
// dynamic).
func shapeFits(declared, want ort.Shape) bool {
	if len(declared) != len(want) {
		return false
	}
	for i, d := range declared {
		if d >= 0 && d != want[i] {
			return false
		}
	}
	return true
}

func describe(infos []ort.InputOutputInfo) string {
	s := make([]string, len(infos))
	for i := range infos {
		s[i] = infos[i].String()
	}
	return strings.Join(s, "; ")
}

// Complete computes the features of the last 8 s of audio and runs the
// model. A ctx that ends during the run terminates it.
func (r *Runner) Complete(ctx context.Context, audio []int16) (float32, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return 0, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := r.features.Compute(r.in.GetData(), audio); err != nil {
		return 0, err
	}
	if err := r.run(ctx); err != nil {
		return 0, err
	}
	p := r.out.GetData()[0]
	if !(p >= 0 && p <= 1) { // also NaN
		return 0, fmt.Errorf("%w: %s gave %v, not a probability in [0, 1] (a model that outputs logits?)", ErrInference, r.path, p)
	}
	return p, nil
}

// run runs the session; a watcher terminates the run when ctx ends, and is
// stopped (or waited for) before run returns, so nothing outlives the call.
func (r *Runner) run(ctx context.Context) error {
	var stop func() bool
	if ctx.Done() != nil {
		stop = context.AfterFunc(ctx, func() {
			_ = r.runOpts.Terminate()
			r.termDone <- struct{}{}
		})
	}
	err := r.session.RunWithOptions(r.runOpts)
	if stop != nil && !stop() {
		<-r.termDone // the watcher ran: wait for it, then re-arm the options
		if uerr := r.runOpts.UnsetTerminate(); uerr != nil && err == nil {
			err = uerr
		}
		return fmt.Errorf("%w: %s: %w", ErrInference, r.path, ctx.Err())
	}
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrInference, r.path, err)
	}
	return nil
}

// Close releases the session, its tensors and this Runner's hold on the
// environment. It is idempotent; later calls to Complete return ErrClosed.
func (r *Runner) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	var errs []error
	if r.session != nil {
		errs = append(errs, r.session.Destroy())
	}
	if r.runOpts != nil {
		errs = append(errs, r.runOpts.Destroy())
	}
	if r.in != nil {
		errs = append(errs, r.in.Destroy())
	}
	if r.out != nil {
		errs = append(errs, r.out.Destroy())
	}
	if r.opts != nil {
		errs = append(errs, r.opts.Destroy())
	}
	errs = append(errs, r.env.release())
	return errors.Join(errs...)
}

// envRef is one Runner's reference on the process's ONNX Runtime
// environment, shared with media/silero through media/internal/ortenv.
type envRef struct{ env *ortenv.Env }

// acquireEnv takes a reference on the environment, loading lib when no
// one holds it.
func acquireEnv(lib string) (*envRef, error) {
	env, err := ortenv.Acquire(lib)
	if errors.Is(err, ortenv.ErrOtherLibrary) {
		return nil, fmt.Errorf("%w: %v", ErrRuntimeUnavailable, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: library %s does not load (missing, corrupted, or not ONNX Runtime 1.24 or newer): %v; %s",
			ErrRuntimeUnavailable, lib, err, setupHint)
	}
	return &envRef{env: env}, nil
}

func (e *envRef) release() error {
	if err := e.env.Release(); err != nil {
		return fmt.Errorf("%w: %v", ErrRuntimeUnavailable, err)
	}
	return nil
}
