package silero

import "fmt"

// Defaults and limits of ModelConfig.
const (
	DefaultMaxBatch = 64
	// MaxMaxBatch bounds MaxBatch: the tensors for the largest batch are
	// preallocated (about 4.5 KB per window).
	MaxMaxBatch = 1024
)

// ModelConfig configures a Model. Zero values take the defaults.
type ModelConfig struct {
	// RuntimePath is the ONNX Runtime shared library; empty: see LocateFiles.
	RuntimePath string
	// ModelPath is the Silero VAD v5 model; empty: see LocateFiles.
	ModelPath string
	// SampleRate is Rate16k (default) or Rate8k.
	SampleRate int
	// MaxBatch is the most windows one Run takes (default DefaultMaxBatch,
	// at most MaxMaxBatch). Tensors are preallocated for every batch size up
	// to it.
	MaxBatch int
}

func (c ModelConfig) withDefaults() ModelConfig {
	if c.SampleRate == 0 {
		c.SampleRate = Rate16k
	}
	if c.MaxBatch == 0 {
		c.MaxBatch = DefaultMaxBatch
	}
	return c
}

// Validate reports a configuration that cannot work. Missing files are not
// checked here (NewModel does).
func (c ModelConfig) Validate() error {
	switch {
	case c.SampleRate != 0 && WindowSize(c.SampleRate) == 0:
		return fmt.Errorf("%w: sample rate %d (want %d or %d)", ErrInvalidConfig, c.SampleRate, Rate16k, Rate8k)
	case c.MaxBatch < 0 || c.MaxBatch > MaxMaxBatch:
		return fmt.Errorf("%w: max batch %d (want 1..%d)", ErrInvalidConfig, c.MaxBatch, MaxMaxBatch)
	}
	return nil
}

// modelSpec is what the model file's inputs say about how to feed it.
type modelSpec struct {
	// srVector: the sr input is shaped [1] rather than a scalar.
	srVector bool
}

// NewModel locates the files (LocateFiles), loads the runtime and the model,
// checks that the model has Silero VAD v5's inputs and outputs and
// preallocates its tensors. Errors wrap ErrInvalidConfig,
// ErrRuntimeUnavailable or ErrModelUnavailable.
func NewModel(cfg ModelConfig) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	files, err := LocateFiles(cfg.RuntimePath, cfg.ModelPath)
	if err != nil {
		return nil, err
	}
	rt, err := acquireRuntime(files.Runtime)
	if err != nil {
		return nil, err
	}
	data, spec, err := loadModelFile(files.Model)
	if err != nil {
		rt.release()
		return nil, err
	}
	m, err := newModel(rt, files.Model, data, spec, cfg)
	if err != nil {
		rt.release()
		return nil, err
	}
	return m, nil
}
