//go:build cgo

package silero

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ort "github.com/yalue/onnxruntime_go"
)

func TestLocateFiles(t *testing.T) {
	real := requireFiles(t)
	// A module with the files where setup puts them, as symlinks.
	mod := t.TempDir()
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for rel, target := range map[string]string{RuntimeRelPath: real.Runtime, ModelRelPath: real.Model} {
		p := filepath.Join(mod, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	sub := filepath.Join(mod, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	noModule := t.TempDir()
	empty := filepath.Join(noModule, "empty.onnx")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(noModule, "missing.onnx")

	tests := []struct {
		name            string
		dir             string // working directory
		envRT, envModel string
		argRT, argModel string
		want            Files
		wantErr         error
		wantMsg         string // in the error besides the setup hint
	}{
		{
			name: "explicit paths win over the environment",
			dir:  noModule, envRT: missing, envModel: missing,
			argRT: real.Runtime, argModel: real.Model,
			want: real,
		},
		{
			name: "environment when nothing is configured",
			dir:  noModule, envRT: real.Runtime, envModel: real.Model,
			want: real,
		},
		{
			// Mutation: looking only in the working directory (not walking
			// up to go.mod) fails here.
			name: "module root found from a subdirectory",
			dir:  sub,
			want: Files{Runtime: filepath.Join(mod, RuntimeRelPath), Model: filepath.Join(mod, ModelRelPath)},
		},
		{
			name: "missing configured model",
			dir:  noModule, argRT: real.Runtime, argModel: missing,
			wantErr: ErrModelUnavailable, wantMsg: missing,
		},
		{
			name: "empty model from the environment",
			dir:  noModule, envRT: real.Runtime, envModel: empty,
			wantErr: ErrModelUnavailable, wantMsg: "$" + ModelEnv,
		},
		{
			name: "missing runtime from the environment",
			dir:  noModule, envRT: missing, envModel: real.Model,
			wantErr: ErrRuntimeUnavailable, wantMsg: missing,
		},
		{
			name:    "nothing configured and no module",
			dir:     noModule,
			wantErr: ErrRuntimeUnavailable, wantMsg: "no go.mod above",
		},
		{
			name: "runtime is a directory",
			dir:  noModule, argRT: noModule, argModel: real.Model,
			wantErr: ErrRuntimeUnavailable, wantMsg: "not a regular file",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Chdir(tt.dir)
			t.Setenv(RuntimeEnv, tt.envRT)
			t.Setenv(ModelEnv, tt.envModel)
			got, err := LocateFiles(tt.argRT, tt.argModel)
			if tt.wantErr == nil {
				if err != nil || got != tt.want {
					t.Fatalf("LocateFiles = %+v, %v; want %+v", got, err, tt.want)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("LocateFiles = %v, want %v", err, tt.wantErr)
			}
			for _, want := range []string{tt.wantMsg, "go tool task setup"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
		})
	}
}

// TestCorruptedFiles: a file that exists but is not what it should be
// fails NewModel and NewPool with the right sentinel, naming the file.
func TestCorruptedFiles(t *testing.T) {
	real := requireFiles(t)
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk")
	if err := os.WriteFile(junk, []byte("this is not what you are looking for"), 0o644); err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.onnx")
	data, err := os.ReadFile(real.Model)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(truncated, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		rt, mdl  string
		wantErr  error
		wantFile string
	}{
		{"junk runtime", junk, real.Model, ErrRuntimeUnavailable, junk},
		{"junk model", real.Runtime, junk, ErrModelUnavailable, junk},
		{"truncated model", real.Runtime, truncated, ErrModelUnavailable, truncated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewModel(ModelConfig{RuntimePath: tt.rt, ModelPath: tt.mdl})
			_, perr := NewPool(PoolConfig{RuntimePath: tt.rt, ModelPath: tt.mdl, Workers: 1})
			for _, err := range []error{err, perr} {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("got %v, want %v", err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.wantFile) || !strings.Contains(err.Error(), "go tool task setup") {
					t.Errorf("error %q does not name %s and the setup task", err, tt.wantFile)
				}
			}
			// Mutation: not releasing the runtime on a failed load leaves
			// the environment initialized.
			if ort.IsInitialized() {
				t.Fatal("a failed load left the ONNX Runtime environment initialized")
			}
		})
	}
}

func TestCheckModelIO(t *testing.T) {
	f32, i64 := ort.TensorElementDataType(ort.TensorElementDataTypeFloat), ort.TensorElementDataType(ort.TensorElementDataTypeInt64)
	tensor := func(name string, typ ort.TensorElementDataType, dims ...int64) ort.InputOutputInfo {
		return ort.InputOutputInfo{Name: name, OrtValueType: ort.ONNXTypeTensor, DataType: typ, Dimensions: dims}
	}
	v5ins := []ort.InputOutputInfo{tensor("input", f32, -1, -1), tensor("state", f32, 2, -1, 128), tensor("sr", i64)}
	v5outs := []ort.InputOutputInfo{tensor("output", f32, -1, 1), tensor("stateN", f32, -1, -1, -1)}
	with := func(infos []ort.InputOutputInfo, i int, info ort.InputOutputInfo) []ort.InputOutputInfo {
		c := append([]ort.InputOutputInfo(nil), infos...)
		c[i] = info
		return c
	}
	tests := []struct {
		name       string
		ins, outs  []ort.InputOutputInfo
		wantVector bool
		wantErr    string
	}{
		{name: "silero v5", ins: v5ins, outs: v5outs},
		{name: "sr as [1]", ins: with(v5ins, 2, tensor("sr", i64, 1)), outs: v5outs, wantVector: true},
		{name: "fixed batch", ins: with(v5ins, 0, tensor("input", f32, 1, 576)), outs: v5outs},
		{name: "v4 inputs", ins: []ort.InputOutputInfo{tensor("input", f32, -1, -1), tensor("sr", i64), tensor("h", f32, 2, -1, 64), tensor("c", f32, 2, -1, 64)}, outs: v5outs, wantErr: "inputs"},
		{name: "renamed output", ins: v5ins, outs: with(v5outs, 1, tensor("hn", f32, -1, -1, -1)), wantErr: "outputs"},
		{name: "state width 64", ins: with(v5ins, 1, tensor("state", f32, 2, -1, 64)), outs: v5outs, wantErr: "dimension 2"},
		{name: "sr float", ins: with(v5ins, 2, tensor("sr", f32)), outs: v5outs, wantErr: "scalar or [1]"},
		{name: "sr [2]", ins: with(v5ins, 2, tensor("sr", i64, 2)), outs: v5outs, wantErr: "scalar or [1]"},
		{name: "output 2-D wide", ins: v5ins, outs: with(v5outs, 0, tensor("output", f32, -1, 2)), wantErr: "dimension 1"},
		{name: "input 3-D", ins: with(v5ins, 0, tensor("input", f32, -1, -1, -1)), outs: v5outs, wantErr: "dimensions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec, err := checkModelIO(tt.ins, tt.outs)
			if tt.wantErr == "" {
				if err != nil || spec.srVector != tt.wantVector {
					t.Fatalf("checkModelIO = %+v, %v", spec, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("checkModelIO error %v, want one saying %q", err, tt.wantErr)
			}
		})
	}
}
