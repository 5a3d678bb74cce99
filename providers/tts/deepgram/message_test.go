package aura

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/brisvox/brisvox/providers"
)

// Catches: a type misread (Flushed taken for Cleared), a Warning or an
// unknown type taken for a failure, a message without a type accepted, a
// malformed one not refused, the code of an Error not kept, a code with
// control characters let through.
func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		name   string
		binary bool
		in     string
		want   message
		proto  bool
	}{
		{name: "audio", binary: true, in: "\x01\x00\x02\x00", want: message{kind: kindAudio, audio: []byte("\x01\x00\x02\x00")}},
		{name: "metadata", in: `{"type":"Metadata","request_id":"r","model_name":"aura-2-thalia-en","model_version":"v","model_uuid":"u"}`, want: message{kind: kindMetadata}},
		{name: "flushed", in: `{"type":"Flushed","sequence_id":3}`, want: message{kind: kindFlushed, seq: 3}},
		{name: "cleared", in: `{"type":"Cleared","sequence_id":4}`, want: message{kind: kindCleared, seq: 4}},
		{name: "warning", in: `{"type":"Warning","description":"too many flushes","code":"W1"}`, want: message{kind: kindWarning, code: "W1"}},
		{name: "error", in: `{"type":"Error","err_code":"BAD_TEXT","err_msg":"no"}`, want: message{kind: kindError, code: "BAD_TEXT"}},
		{name: "error_control_chars", in: `{"type":"Error","code":"A\nB\u00e9"}`, want: message{kind: kindError, code: "A?B?"}},
		{name: "unknown_type", in: `{"type":"Something","x":1}`, want: message{kind: kindOther}},
		{name: "no_type", in: `{"sequence_id":1}`, proto: true},
		{name: "type_not_string", in: `{"type":1}`, proto: true},
		{name: "not_json", in: `{"type":"Flushed",`, proto: true},
		{name: "array", in: `["Flushed"]`, proto: true},
		{name: "empty", in: ``, proto: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m message
			err := decode(tc.binary, []byte(tc.in), &m)
			if tc.proto {
				if _, ok := errors.AsType[*providers.Protocol](err); !ok {
					t.Fatalf("err %v, want *providers.Protocol", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.kind != tc.want.kind || m.seq != tc.want.seq || m.code != tc.want.code || !bytes.Equal(m.audio, tc.want.audio) {
				t.Fatalf("got %+v, want %+v", m, tc.want)
			}
		})
	}
}

// Catches: a byte order swap, an odd byte lost or doubled across frames,
// a lone byte dropped.
func TestPCM16CarriesOddBytes(t *testing.T) {
	want := []int16{1, -2, 300, -400, 5000}
	var all []byte
	for _, v := range want {
		all = append(all, byte(v), byte(uint16(v)>>8))
	}
	for _, cuts := range [][]int{{10}, {3, 7}, {1, 1, 1, 7}, {5, 0, 5}, {9, 1}} {
		var got []int16
		var odd byte
		var hasOdd bool
		i := 0
		for _, n := range cuts {
			got = append(got, pcm16(all[i:i+n], &odd, &hasOdd)...)
			i += n
		}
		if !slices.Equal(got, want) || hasOdd {
			t.Errorf("cuts %v: %v (odd left %v), want %v", cuts, got, hasOdd, want)
		}
	}
}

// Catches: a Speak whose text is not escaped (quotes, newlines, control
// characters break the JSON or smuggle members in).
func TestAppendSpeak(t *testing.T) {
	for _, text := range []string{"hello ", `say "hi"`, "a\nb\t\u0001", `","type":"Clear`} {
		var got struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		b := appendSpeak(nil, text)
		if err := json.Unmarshal(b, &got); err != nil || got.Type != "Speak" || got.Text != text {
			t.Errorf("%q: %s -> %+v, %v", text, b, got, err)
		}
	}
}

// FuzzDecode: no input panics; what decodes as text is a known kind, and
// an error is always *providers.Protocol.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"type":"Flushed","sequence_id":0}`, `{"type":"Cleared","sequence_id":1}`,
		`{"type":"Metadata","request_id":"x"}`, `{"type":"Warning","code":"W"}`,
		`{"type":"Error","err_code":"E"}`, `{"type":null}`, `{`, `[]`, ``, "\x00\x01\x02",
	} {
		f.Add(false, []byte(s))
		f.Add(true, []byte(s))
	}
	f.Fuzz(func(t *testing.T, binary bool, data []byte) {
		var m message
		err := decode(binary, data, &m)
		if err != nil {
			if _, ok := errors.AsType[*providers.Protocol](err); !ok {
				t.Fatalf("err %v is not *providers.Protocol", err)
			}
			return
		}
		if m.kind < kindAudio || m.kind > kindOther {
			t.Fatalf("kind %d", m.kind)
		}
		if m.kind == kindAudio {
			var odd byte
			var hasOdd bool
			if got := pcm16(m.audio, &odd, &hasOdd); len(got) != len(data)/2 {
				t.Fatalf("%d samples from %d bytes", len(got), len(data))
			}
		}
	})
}

// audioFrame is 40 ms of 16 kHz PCM16.
var audioFrame = bytes.Repeat([]byte{0x10, 0x20}, 640)

// The hot path, an audio frame to samples, allocates the samples only;
// a Flushed (one per flush, through encoding/json) with at most 7. Catches: the frame
// copied before conversion, a decode of a binary frame through JSON.
func TestDecodeAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation counts")
	}
	var m message
	var odd byte
	var hasOdd bool
	if n := testing.AllocsPerRun(100, func() {
		_ = decode(true, audioFrame, &m)
		_ = pcm16(m.audio, &odd, &hasOdd)
	}); n != 1 {
		t.Errorf("audio frame: %v allocations, want 1 (the samples)", n)
	}
	flushed := []byte(`{"type":"Flushed","sequence_id":7}`)
	if n := testing.AllocsPerRun(100, func() { _ = decode(false, flushed, &m) }); n > 7 {
		t.Errorf("Flushed: %v allocations, want at most 7", n)
	}
}

func BenchmarkDecodeAudio(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(audioFrame)))
	var m message
	var odd byte
	var hasOdd bool
	for b.Loop() {
		_ = decode(true, audioFrame, &m)
		_ = pcm16(m.audio, &odd, &hasOdd)
	}
}

func BenchmarkDecodeFlushed(b *testing.B) {
	b.ReportAllocs()
	data := []byte(`{"type":"Flushed","sequence_id":7}`)
	var m message
	for b.Loop() {
		_ = decode(false, data, &m)
	}
}
