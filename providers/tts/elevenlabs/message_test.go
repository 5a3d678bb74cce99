package elevenlabs

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/speechtest"
)

// audioMessage is an audio message in the service's shape: 2 words, 100
// ms of PCM at 24 kHz (4800 samples, 9.6 KB, 12.8 KB of base64), both
// alignments; about what arrives 10 to 40 times a second per call.
var audioMessage = func() string {
	pcm := make([]byte, 9600)
	for i := range 4800 {
		binary.LittleEndian.PutUint16(pcm[2*i:], uint16(i*7))
	}
	return `{"audio":"` + base64.StdEncoding.EncodeToString(pcm) + `",` +
		`"normalizedAlignment":{"chars":[" ","h","e","l","l","o"," ","w","o","r","l","d"," "],` +
		`"charStartTimesMs":[0,3,52,81,104,128,174,197,232,267,290,325,360],"charDurationsMs":[3,49,29,23,24,46,23,35,35,23,35,35,40]},` +
		`"alignment":{"chars":[" ","H","e","l","l","o"," ","w","\u00f6","r","l","d"," "],` +
		`"charStartTimesMs":[0,3,52,81,104,128,174,197,232,267,290,325,360],"charDurationsMs":[3,49,29,23,24,46,23,35,35,23,35,35,40]},` +
		`"contextId":"c12"}`
}()

// Catches: a field read from the wrong key, the normalized alignment
// preferred to the original one, escaped characters (\u00f6) not
// unescaped, state kept from the previous message (the decoder is
// reused), fractions in times refused, an error detail quoting the
// message.
func TestDecode(t *testing.T) {
	cases := []struct {
		name   string
		in     string
		ctx    string
		audio  int // PCM bytes; -1: no audio
		final  bool
		chars  string
		starts []int
		err    bool
	}{
		{"full audio", audioMessage, "c12", 9600, false, " Hello wörld ", []int{0, 3, 52, 81, 104, 128, 174, 197, 232, 267, 290, 325, 360}, false},
		{"final", `{"isFinal":true,"contextId":"c3"}`, "c3", -1, true, "", nil, false},
		{"single-context shape", `{"audio":"AAAA","isFinal":null,"normalizedAlignment":null,"alignment":null}`, "", 3, false, "", nil, false},
		{"normalized only", `{"audio":"AAA=","normalizedAlignment":{"chars":["a"],"charStartTimesMs":[5],"charDurationsMs":[1]},"contextId":"x"}`, "x", 2, false, "a", []int{5}, false},
		{"fraction and exponent times", `{"audio":"","alignment":{"chars":["a","b","c"],"charStartTimesMs":[1.4,1.5,2e1],"charDurationsMs":[1,1,1]},"contextId":"x"}`, "x", 0, false, "abc", []int{1, 2, 20}, false},
		{"negative time", `{"audio":"","alignment":{"chars":["a"],"charStartTimesMs":[-3]},"contextId":"x"}`, "x", 0, false, "a", []int{0}, false},
		{"unknown members", `{"contextId":"x","something":[1,{"a":null}],"isFinal":false}`, "x", -1, false, "", nil, false},
		{"not an object", `["secret words"]`, "", -1, false, "", nil, true},
		{"malformed", `{"audio":"AAAA","alignment":{"chars":["secret words"`, "", -1, false, "", nil, true},
		{"bad base64", `{"audio":"@@@@","contextId":"x"}`, "", -1, false, "", nil, true},
		{"length mismatch", `{"audio":"","alignment":{"chars":["s","e"],"charStartTimesMs":[1]},"contextId":"x"}`, "", -1, false, "", nil, true},
		{"time out of range", `{"audio":"","alignment":{"chars":["s"],"charStartTimesMs":[1e12]},"contextId":"x"}`, "", -1, false, "", nil, true},
		{"wrong type", `{"audio":12,"contextId":"x"}`, "", -1, false, "", nil, true},
		{"error message", `{"error":"quota_exceeded","message":"secret words","code":1008}`, "", -1, false, "", nil, true},
	}
	var m message
	if err := m.decode([]byte(audioMessage)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := m.decode([]byte(tc.in))
			if speechtest.CheckDecodeErr(t, err, tc.err, "secret") {
				_ = m.decode([]byte(audioMessage))
				return
			}
			if string(m.contextID) != tc.ctx || m.final != tc.final {
				t.Errorf("context %q final %v", m.contextID, m.final)
			}
			if (tc.audio < 0) == m.hasAudio || (tc.audio >= 0 && len(m.audio) != tc.audio) {
				t.Errorf("audio %v, %d bytes; want %d", m.hasAudio, len(m.audio), tc.audio)
			}
			a := m.aligned()
			chars := ""
			var starts []int
			if a != nil {
				chars, starts = string(a.chars), a.starts
			}
			if chars != tc.chars || !slices.Equal(starts, tc.starts) {
				t.Errorf("alignment %q %v, want %q %v", chars, starts, tc.chars, tc.starts)
			}
			_ = m.decode([]byte(audioMessage))
		})
	}
}

// oracle decodes with encoding/json, for the differential fuzz target and
// the benchmark's comparison.
type oracle struct {
	Audio     *string     `json:"audio"`
	IsFinal   *bool       `json:"isFinal"`
	ContextID *string     `json:"contextId"`
	Alignment *oracleAlgn `json:"alignment"`
	Norm      *oracleAlgn `json:"normalizedAlignment"`
	Error     any         `json:"error"`
}

type oracleAlgn struct {
	Chars  []string `json:"chars"`
	Starts []int    `json:"charStartTimesMs"`
	Durs   []int    `json:"charDurationsMs"`
}

// FuzzDecode: any input decodes or fails with a Protocol error, never
// panics; a message encoding/json reads with integer times decodes to
// the same context, audio and alignment.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		audioMessage, `{"isFinal":true,"contextId":"c3"}`, `{"audio":null,"alignment":null}`,
		`{"audio":"AAAA","isFinal":null,"normalizedAlignment":null,"alignment":null}`,
		`{"alignment":{"chars":["\"","\\","\ud83d\ude00"],"charStartTimesMs":[1,2,3],"charDurationsMs":[1,1,1]}}`,
		`{"error":"x"}`, `{}`, `null`, `[]`, `"x"`, `{"audio":"AB=="}`, "\xff\xfe", ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var m message
		err := m.decode(data)
		if err != nil {
			if !errors.Is(err, providers.ErrProtocol) {
				t.Fatalf("error %v is not a Protocol", err)
			}
			return
		}
		var o oracle
		if json.Unmarshal(data, &o) != nil || o.Error != nil || !exactKeys(data) {
			return // numbers with fractions, case-folded keys: not compared
		}
		if o.ContextID != nil && *o.ContextID != string(m.contextID) {
			t.Fatalf("context %q, oracle %q", m.contextID, *o.ContextID)
		}
		if o.Audio != nil {
			want, err := base64.StdEncoding.DecodeString(*o.Audio)
			if err == nil && string(want) != string(m.audio) {
				t.Fatal("audio differs from the oracle's")
			}
		}
		oa := o.Alignment
		if oa == nil {
			oa = o.Norm
		}
		a := m.aligned()
		if oa != nil && a != nil {
			if strings.Join(oa.Chars, "") != string(a.chars) || len(oa.Chars) != len(a.ends) {
				t.Fatalf("chars %q, oracle %q", a.chars, oa.Chars)
			}
			for i, v := range oa.Starts {
				if max(v, 0) != a.starts[i] {
					t.Fatalf("start %d is %d, oracle %d", i, a.starts[i], v)
				}
			}
		}
	})
}

// exactKeys tells whether the keys encoding/json matched are spelled
// exactly (it folds case; the service's keys are exact).
func exactKeys(data []byte) bool {
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		return false
	}
	for k, v := range top {
		if !slices.Contains([]string{"audio", "isFinal", "contextId", "alignment", "normalizedAlignment", "error"}, k) &&
			slices.ContainsFunc([]string{"audio", "isFinal", "contextId", "alignment", "normalizedAlignment", "error"}, func(w string) bool { return strings.EqualFold(w, k) }) {
			return false
		}
		if strings.EqualFold(k, "alignment") || strings.EqualFold(k, "normalizedAlignment") {
			var in map[string]json.RawMessage
			if json.Unmarshal(v, &in) == nil {
				for ik := range in {
					for _, w := range []string{"chars", "charStartTimesMs", "charDurationsMs"} {
						if ik != w && strings.EqualFold(ik, w) {
							return false
						}
					}
				}
			}
		}
	}
	return true
}

// BenchmarkDecodeAudio is the per-message cost of a 100 ms audio message
// on the reader goroutine (jsonscan in place, base64 into a reused
// buffer).
func BenchmarkDecodeAudio(b *testing.B) {
	data := []byte(audioMessage)
	var m message
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if err := m.decode(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeAudioEncodingJSON is the same message through
// encoding/json and base64.DecodeString: the alternative the scanner was
// chosen over.
func BenchmarkDecodeAudioEncodingJSON(b *testing.B) {
	data := []byte(audioMessage)
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		var o oracle
		if err := json.Unmarshal(data, &o); err != nil {
			b.Fatal(err)
		}
		if _, err := base64.StdEncoding.DecodeString(*o.Audio); err != nil {
			b.Fatal(err)
		}
	}
}

// Catches: the reused decoder losing its reuse (a buffer allocated per
// message): decoding an audio message allocates nothing.
func TestDecodeAllocationBudget(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	data := []byte(audioMessage)
	var m message
	got := testing.AllocsPerRun(200, func() { _ = m.decode(data) })
	if got != 0 {
		t.Errorf("%v allocations per audio message, budget 0", got)
	}
}
