//go:build cgo

package silero

import (
	"errors"
	"fmt"
	"os"
	"slices"

	ort "github.com/yalue/onnxruntime_go"
)

// Model is one ONNX Runtime session of Silero VAD v5 running batches of
// windows, one window per stream, each with its stream's state. It uses one
// intra-op and one inter-op thread: parallelism comes from running several
// models (the Pool's workers), not from inside one run. Tensors for every
// batch size up to MaxBatch are allocated at construction and reused, so a
// Run allocates nothing in Go. A Model is not safe for concurrent use.
type Model struct {
	rt       *ortRuntime
	sess     *ort.DynamicAdvancedSession
	rate     int
	window   int // new samples per window
	context  int // samples of the previous window in front
	row      int // window + context: one row of the input tensor
	maxBatch int

	// Backing arrays shared by the tensors of every batch size: a batch of n
	// uses their prefixes. Runs are sequential, so sharing is safe.
	in       []float32 // [n][row]
	state    []float32 // [2][n][StateSize]
	out      []float32 // [n][1]
	stateOut []float32 // [2][n][StateSize]

	// bindings[n-1] binds the tensors of a batch of n.
	bindings []*ort.IoBinding
	values   []ort.Value // every tensor made, destroyed by Close
	gen      uint64      // batch counter for duplicate detection
	closed   bool
}

// The input and output names of Silero VAD v5.
var (
	inputNames  = []string{"input", "state", "sr"}
	outputNames = []string{"output", "stateN"}
)

// sessionOptions are one intra-op and one inter-op thread.
func sessionOptions() (*ort.SessionOptions, error) {
	opts, err := ort.NewSessionOptions()
	if err != nil {
		return nil, err
	}
	if err := opts.SetIntraOpNumThreads(1); err != nil {
		opts.Destroy()
		return nil, err
	}
	if err := opts.SetInterOpNumThreads(1); err != nil {
		opts.Destroy()
		return nil, err
	}
	return opts, nil
}

// loadModelFile reads the model and checks its inputs and outputs. The
// runtime must be acquired.
func loadModelFile(path string) ([]byte, modelSpec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, modelSpec{}, fmt.Errorf("%w: Silero VAD model %s: %v; %s", ErrModelUnavailable, path, err, setupHint)
	}
	opts, err := sessionOptions()
	if err != nil {
		return nil, modelSpec{}, fmt.Errorf("%w: session options: %v", ErrRuntimeUnavailable, err)
	}
	defer opts.Destroy()
	ins, outs, err := ort.GetInputOutputInfoWithOptions(path, opts)
	if err != nil {
		return nil, modelSpec{}, fmt.Errorf("%w: Silero VAD model %s does not load (corrupted?): %v; %s", ErrModelUnavailable, path, err, setupHint)
	}
	spec, err := checkModelIO(ins, outs)
	if err != nil {
		return nil, modelSpec{}, fmt.Errorf("%w: %s is not a Silero VAD v5 model: %v; %s", ErrModelUnavailable, path, err, setupHint)
	}
	return data, spec, nil
}

// checkModelIO asserts Silero VAD v5's signature: input float [N, S],
// state float [2, N, 128], sr int64 scalar or [1]; output float [N, 1],
// stateN float, three dimensions. A dimension of -1 is dynamic.
func checkModelIO(ins, outs []ort.InputOutputInfo) (modelSpec, error) {
	var spec modelSpec
	names := func(infos []ort.InputOutputInfo) []string {
		s := make([]string, len(infos))
		for i, in := range infos {
			s[i] = in.Name
		}
		return s
	}
	if got := names(ins); !slices.Equal(got, inputNames) {
		return spec, fmt.Errorf("inputs %q, want %q", got, inputNames)
	}
	if got := names(outs); !slices.Equal(got, outputNames) {
		return spec, fmt.Errorf("outputs %q, want %q", got, outputNames)
	}
	// dims checks a shape against want, where -1 in want accepts anything
	// and -1 in the model (dynamic) is accepted for any wanted size.
	dims := func(info ort.InputOutputInfo, typ ort.TensorElementDataType, want ...int64) error {
		if info.OrtValueType != ort.ONNXTypeTensor || info.DataType != typ {
			return fmt.Errorf("%s", info.String())
		}
		if len(info.Dimensions) != len(want) {
			return fmt.Errorf("%s: want %d dimensions", info.String(), len(want))
		}
		for i, d := range info.Dimensions {
			if want[i] != -1 && d != -1 && d != want[i] {
				return fmt.Errorf("%s: dimension %d is %d, want %d", info.String(), i, d, want[i])
			}
		}
		return nil
	}
	const f32, i64 = ort.TensorElementDataTypeFloat, ort.TensorElementDataTypeInt64
	if err := errors.Join(
		dims(ins[0], f32, -1, -1),
		dims(ins[1], f32, 2, -1, StateSize),
		dims(outs[0], f32, -1, 1),
		dims(outs[1], f32, -1, -1, -1),
	); err != nil {
		return spec, err
	}
	if err := dims(ins[2], i64); err != nil {
		if err1 := dims(ins[2], i64, 1); err1 != nil {
			return spec, fmt.Errorf("%v: want an int64 scalar or [1]", err)
		}
		spec.srVector = true
	}
	return spec, nil
}

// newModel makes the session from the model's bytes and the tensors. On
// error it releases what it made but not rt.
func newModel(rt *ortRuntime, path string, data []byte, spec modelSpec, cfg ModelConfig) (_ *Model, err error) {
	opts, err := sessionOptions()
	if err != nil {
		return nil, fmt.Errorf("%w: session options: %v", ErrRuntimeUnavailable, err)
	}
	defer opts.Destroy()
	sess, err := ort.NewDynamicAdvancedSessionWithONNXData(data, inputNames, outputNames, opts)
	if err != nil {
		return nil, fmt.Errorf("%w: Silero VAD model %s: %v; %s", ErrModelUnavailable, path, err, setupHint)
	}
	w := WindowSize(cfg.SampleRate)
	m := &Model{
		rt:       rt,
		sess:     sess,
		rate:     cfg.SampleRate,
		window:   w,
		context:  contextSize(cfg.SampleRate),
		row:      w + contextSize(cfg.SampleRate),
		maxBatch: cfg.MaxBatch,
	}
	m.in = make([]float32, cfg.MaxBatch*m.row)
	m.state = make([]float32, 2*cfg.MaxBatch*StateSize)
	m.out = make([]float32, cfg.MaxBatch)
	m.stateOut = make([]float32, 2*cfg.MaxBatch*StateSize)
	defer func() {
		if err != nil {
			m.destroy()
		}
	}()
	var sr ort.Value
	if spec.srVector {
		sr, err = ort.NewTensor(ort.NewShape(1), []int64{int64(cfg.SampleRate)})
	} else {
		sr, err = ort.NewScalar(int64(cfg.SampleRate))
	}
	if err != nil {
		return nil, fmt.Errorf("%w: sr tensor: %v", ErrRuntimeUnavailable, err)
	}
	m.values = append(m.values, sr)
	m.bindings = make([]*ort.IoBinding, cfg.MaxBatch)
	for n := 1; n <= cfg.MaxBatch; n++ {
		if err := m.bind(n, sr); err != nil {
			return nil, fmt.Errorf("%w: tensors for a batch of %d: %v", ErrRuntimeUnavailable, n, err)
		}
	}
	return m, nil
}

// bind makes the tensors of a batch of n over the backing arrays and binds
// them.
func (m *Model) bind(n int, sr ort.Value) error {
	n64 := int64(n)
	in, err := ort.NewTensor(ort.NewShape(n64, int64(m.row)), m.in)
	if err != nil {
		return err
	}
	m.values = append(m.values, in)
	state, err := ort.NewTensor(ort.NewShape(2, n64, StateSize), m.state)
	if err != nil {
		return err
	}
	m.values = append(m.values, state)
	out, err := ort.NewTensor(ort.NewShape(n64, 1), m.out)
	if err != nil {
		return err
	}
	m.values = append(m.values, out)
	stateOut, err := ort.NewTensor(ort.NewShape(2, n64, StateSize), m.stateOut)
	if err != nil {
		return err
	}
	m.values = append(m.values, stateOut)
	b, err := m.sess.CreateIoBinding()
	if err != nil {
		return err
	}
	m.bindings[n-1] = b
	return errors.Join(
		b.BindInput(inputNames[0], in),
		b.BindInput(inputNames[1], state),
		b.BindInput(inputNames[2], sr),
		b.BindOutput(outputNames[0], out),
		b.BindOutput(outputNames[1], stateOut),
	)
}

// Rate is the sample rate the model was configured for.
func (m *Model) Rate() int { return m.rate }

// WindowSize is the number of samples each window of a Run must have.
func (m *Model) WindowSize() int { return m.window }

// MaxBatch is the most windows one Run takes.
func (m *Model) MaxBatch() int { return m.maxBatch }

// Run runs one window of each stream as one batch: pcm[i] (exactly
// WindowSize samples of PCM16) is the next window of streams[i], and
// probs[i] receives its speech probability in [0, 1]. On success each
// stream's state and context advance; on error (ErrInvalidInput,
// ErrInference, ErrClosed) no stream changes. The streams must be distinct,
// made for the model's rate, and at most MaxBatch. Run does not allocate.
func (m *Model) Run(streams []*Stream, pcm [][]int16, probs []float32) error {
	n := len(streams)
	switch {
	case m.closed:
		return ErrClosed
	case n == 0:
		return nil
	case n > m.maxBatch:
		return fmt.Errorf("%w: batch of %d, max %d", ErrInvalidInput, n, m.maxBatch)
	case len(pcm) != n || len(probs) < n:
		return fmt.Errorf("%w: %d streams, %d windows, %d results", ErrInvalidInput, n, len(pcm), len(probs))
	}
	m.gen++
	for i, s := range streams {
		switch {
		case s == nil:
			return fmt.Errorf("%w: stream %d is nil", ErrInvalidInput, i)
		case s.rate != m.rate:
			return fmt.Errorf("%w: stream %d is for %d Hz, model for %d Hz", ErrInvalidInput, i, s.rate, m.rate)
		case len(pcm[i]) != m.window:
			return fmt.Errorf("%w: window %d has %d samples, want %d", ErrInvalidInput, i, len(pcm[i]), m.window)
		case s.markModel == m && s.markGen == m.gen:
			return fmt.Errorf("%w: stream %d appears twice in the batch", ErrInvalidInput, i)
		}
		s.markModel, s.markGen = m, m.gen
	}
	// Fill the batch's prefix of the backing arrays.
	stride := n * StateSize
	for i, s := range streams {
		row := m.in[i*m.row : (i+1)*m.row]
		copy(row, s.context[:m.context])
		for j, v := range pcm[i] {
			row[m.context+j] = float32(v) * (1.0 / 32768)
		}
		copy(m.state[i*StateSize:(i+1)*StateSize], s.state[:StateSize])
		copy(m.state[stride+i*StateSize:stride+(i+1)*StateSize], s.state[StateSize:])
	}
	if err := m.sess.RunWithBinding(m.bindings[n-1]); err != nil {
		return fmt.Errorf("%w: batch of %d: %v", ErrInference, n, err)
	}
	for i, s := range streams {
		probs[i] = m.out[i]
		copy(s.state[:StateSize], m.stateOut[i*StateSize:(i+1)*StateSize])
		copy(s.state[StateSize:], m.stateOut[stride+i*StateSize:stride+(i+1)*StateSize])
		row := m.in[i*m.row : (i+1)*m.row]
		copy(s.context[:m.context], row[m.row-m.context:])
		s.windows++
	}
	return nil
}

// warmUp runs a batch of each size in sizes on silence, so that the first
// real batches do not pay ONNX Runtime's first-run costs. No stream changes.
func (m *Model) warmUp(sizes []int) error {
	for _, n := range sizes {
		if n < 1 || n > m.maxBatch {
			continue
		}
		clear(m.in[:n*m.row])
		clear(m.state[:2*n*StateSize])
		if err := m.sess.RunWithBinding(m.bindings[n-1]); err != nil {
			return fmt.Errorf("%w: warm-up batch of %d: %v", ErrInference, n, err)
		}
	}
	return nil
}

// Close destroys the session and tensors and releases the runtime (the last
// release unloads it). It is idempotent.
func (m *Model) Close() error {
	if m.closed {
		return nil
	}
	m.closed = true
	m.destroy()
	return m.rt.release()
}

// destroy frees the bindings, tensors and session.
func (m *Model) destroy() {
	for _, b := range m.bindings {
		if b != nil {
			b.Destroy()
		}
	}
	m.bindings = nil
	for _, v := range m.values {
		v.Destroy()
	}
	m.values = nil
	if m.sess != nil {
		m.sess.Destroy()
		m.sess = nil
	}
}
