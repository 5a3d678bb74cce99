package eot

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// A minimal ONNX writer for tests: the protobuf wire format by hand (tags,
// varints, length-delimited fields), field numbers from onnx.proto. It
// builds a logistic regression over the features,
//
//	probability = Sigmoid(ReduceSum(input_features * W) + b)
//
// with W [1, 80, 800] and b scalar initializers, so that the expected output
// can be computed in Go and any mix-up of the feature layout shows.

type pb []byte

func (b *pb) tag(field, wire int) { *b = binary.AppendUvarint(*b, uint64(field<<3|wire)) }

func (b *pb) varint(field int, v int64) {
	b.tag(field, 0)
	*b = binary.AppendUvarint(*b, uint64(v))
}

func (b *pb) bytes(field int, data []byte) {
	b.tag(field, 2)
	*b = binary.AppendUvarint(*b, uint64(len(data)))
	*b = append(*b, data...)
}

func (b *pb) str(field int, s string) { b.bytes(field, []byte(s)) }
func (b *pb) msg(field int, m pb)     { b.bytes(field, m) }

// ONNX enum values used below.
const (
	onnxFloat      = 1 // TensorProto.FLOAT
	onnxInt64      = 7 // TensorProto.INT64
	onnxAttrInt    = 2 // AttributeProto.INT
	onnxIRVersion  = 8
	onnxOpsetValue = 13
)

// tensorValueInfo is a ValueInfoProto of a float tensor; dims are int64
// sizes or string names (dynamic).
func tensorValueInfo(name string, dims ...any) pb {
	var shape pb
	for _, d := range dims {
		var dim pb
		switch d := d.(type) {
		case int:
			dim.varint(1, int64(d)) // dim_value
		case string:
			dim.str(2, d) // dim_param
		}
		shape.msg(1, dim)
	}
	var tensor pb
	tensor.varint(1, onnxFloat) // elem_type
	tensor.msg(2, shape)
	var typ pb
	typ.msg(1, tensor) // tensor_type
	var vi pb
	vi.str(1, name)
	vi.msg(2, typ)
	return vi
}

func floatInitializer(name string, dims []int64, data []float32) pb {
	var t pb
	for _, d := range dims {
		t.varint(1, d)
	}
	t.varint(2, onnxFloat)
	t.str(8, name)
	raw := make([]byte, 4*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	t.bytes(9, raw) // raw_data, little-endian
	return t
}

func int64Initializer(name string, data ...int64) pb {
	var t pb
	t.varint(1, int64(len(data)))
	t.varint(2, onnxInt64)
	t.str(8, name)
	raw := make([]byte, 8*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(v))
	}
	t.bytes(9, raw)
	return t
}

func node(op string, inputs, outputs []string, intAttrs map[string]int64) pb {
	var n pb
	for _, s := range inputs {
		n.str(1, s)
	}
	for _, s := range outputs {
		n.str(2, s)
	}
	n.str(4, op)
	for k, v := range intAttrs {
		var a pb
		a.str(1, k)
		a.varint(3, v)
		a.varint(20, onnxAttrInt)
		n.msg(5, a)
	}
	return n
}

// testModel describes a model to build; the zero value plus W is the good
// one.
type testModel struct {
	inputName  string // default input_features
	inputDims  []any  // default "batch", 80, 800
	w          []float32
	b          float32
	noSigmoid  bool // output the logit (not a probability)
	twoOutputs bool // also expose the logit as a second output
	scalarW    bool // W is a scalar (w[0]), for inputs of other shapes
}

const testOutput = "probability"

func (m testModel) encode() []byte {
	in := m.inputName
	if in == "" {
		in = DefaultInputName
	}
	dims := m.inputDims
	if dims == nil {
		dims = []any{"batch", NumMels, NumFrames}
	}
	var g pb
	g.msg(1, node("Mul", []string{in, "W"}, []string{"prod"}, nil))
	g.msg(1, node("ReduceSum", []string{"prod", "axis2"}, []string{"rows"}, map[string]int64{"keepdims": 0}))
	g.msg(1, node("ReduceSum", []string{"rows", "axis1"}, []string{"sum"}, map[string]int64{"keepdims": 1}))
	if m.noSigmoid {
		g.msg(1, node("Add", []string{"sum", "b"}, []string{testOutput}, nil))
	} else {
		g.msg(1, node("Add", []string{"sum", "b"}, []string{"logit"}, nil))
		g.msg(1, node("Sigmoid", []string{"logit"}, []string{testOutput}, nil))
	}
	g.str(2, "eot_test")
	if m.scalarW {
		g.msg(5, floatInitializer("W", nil, m.w[:1]))
	} else {
		g.msg(5, floatInitializer("W", []int64{1, NumMels, NumFrames}, m.w))
	}
	g.msg(5, floatInitializer("b", nil, []float32{m.b}))
	g.msg(5, int64Initializer("axis2", 2))
	g.msg(5, int64Initializer("axis1", 1))
	g.msg(11, tensorValueInfo(in, dims...))
	g.msg(12, tensorValueInfo(testOutput, "batch", 1))
	if m.twoOutputs {
		g.msg(12, tensorValueInfo("logit", "batch", 1))
	}
	var opset pb
	opset.str(1, "")
	opset.varint(2, onnxOpsetValue)
	var model pb
	model.varint(1, onnxIRVersion)
	model.str(2, "brisvox-eot-test")
	model.msg(7, g)
	model.msg(8, opset)
	return model
}

// write stores the model in dir and returns its path.
func (m testModel) write(t testing.TB, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, m.encode(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func randomWeights(seed uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, 99))
	w := make([]float32, FeatureLen)
	for i := range w {
		w[i] = float32(r.Float64()*2-1) / 100
	}
	return w
}

// expectedProbability computes the test model's output in float64 from the
// features of audio.
func expectedProbability(t testing.TB, m testModel, audio []int16) float64 {
	t.Helper()
	f, err := NewFeatures(FeatureConfig{})
	if err != nil {
		t.Fatal(err)
	}
	feat := make([]float32, FeatureLen)
	if err := f.Compute(feat, audio); err != nil {
		t.Fatal(err)
	}
	z := float64(m.b)
	for i, v := range feat {
		z += float64(v) * float64(m.w[i])
	}
	if m.noSigmoid {
		return z
	}
	return 1 / (1 + math.Exp(-z))
}
