package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/brisvox/brisvox/providers"
	m "github.com/brisvox/brisvox/providers/llm/gemini/geminimock"
)

// chunkKeys are the member names the decoders look for.
var chunkKeys = []string{
	"candidates", "usageMetadata", "error", "content", "finishReason", "parts", "text", "thought",
	"thoughtSignature", "functionCall", "id", "name", "args", "promptTokenCount", "candidatesTokenCount",
	"cachedContentTokenCount", "code", "message", "status",
}

// foldedKey tells whether data holds, at any depth, a member name that
// encoding/json takes for one of chunkKeys only by folding case (the
// scanner decoder matches names exactly: the one difference allowed).
func foldedKey(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return false
	}
	var walk func(v any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				for _, want := range chunkKeys {
					if k != want && strings.EqualFold(k, want) {
						return true
					}
				}
				if walk(e) {
					return true
				}
			}
		case []any:
			for _, e := range v {
				if walk(e) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}

// anyFolded tells whether a chunk of data has a folded key: the events
// of a later chunk, or of finish, may differ through it.
func anyFolded(data []byte) bool {
	for _, chunk := range bytes.Split(data, []byte("\n")) {
		if foldedKey(chunk) {
			return true
		}
	}
	return false
}

// sameErr tells whether two decode errors are of one kind: both nil, both
// a Rejected with one status and detail, or both a Protocol (with one
// detail unless the data did not parse, which the two explain each in its
// own words).
func sameErr(got, want error) bool {
	if got == nil || want == nil {
		return got == nil && want == nil
	}
	var gr, wr *providers.Rejected
	if errors.As(want, &wr) {
		return errors.As(got, &gr) && *gr == *wr
	}
	var gp, wp *providers.Protocol
	if !errors.As(want, &wp) || !errors.As(got, &gp) {
		return false
	}
	const notJSON = "chunk is not valid JSON: "
	if strings.HasPrefix(wp.Detail, notJSON) {
		return strings.HasPrefix(gp.Detail, notJSON)
	}
	return gp.Detail == wp.Detail
}

// diffDecoders feeds the lines of data, one chunk each, to the decoder
// and the oracle, comparing after each the error, the events (when there
// is no error) and the end state, then, when no chunk failed, the events
// of finish. skipped tells whether the data was outside the comparison: a
// case-folded member name or nesting beyond the scanner's bound.
func diffDecoders(t *testing.T, data []byte) (skipped bool) {
	t.Helper()
	var got decoder
	var want oracleDecoder
	got.init()
	want.init()
	for i, chunk := range bytes.Split(data, []byte("\n")) {
		got.events, want.events = got.events[:0], want.events[:0]
		gerr, werr := got.decode(chunk), want.decode(chunk)
		if gerr != nil && strings.Contains(gerr.Error(), "less nesting") {
			return true
		}
		if !sameErr(gerr, werr) || (gerr == nil && !reflect.DeepEqual(got.events, want.events)) ||
			got.finished != want.finished || got.stop != want.stop {
			if anyFolded(data) {
				return true
			}
			t.Fatalf("chunk %d %q:\ndecoder: %v %+v finished %v %q\noracle:  %v %+v finished %v %q",
				i, chunk, gerr, got.events, got.finished, got.stop, werr, want.events, want.finished, want.stop)
		}
		if gerr != nil {
			return false
		}
	}
	got.events, want.events = got.events[:0], want.events[:0]
	got.finish()
	want.finish()
	if !reflect.DeepEqual(got.events, want.events) && !anyFolded(data) {
		t.Fatalf("%q: finish:\ndecoder: %+v\noracle:  %+v", data, got.events, want.events)
	}
	return false
}

// oracleSeeds are the chunk shapes of the package's tests and mock, some
// repeated keys and nulls (which encoding/json merges), and malformed
// chunks; each seed is one chunk.
func oracleSeeds() []string {
	seeds := append(m.Text("a b"),
		m.Chunk(m.Part{Text: "planning...", Thought: true}),
		m.Chunk(m.Part{Text: "check.", Signature: "sigText"}),
		m.Chunk(m.Part{ID: "fc-1", Name: "weather", Args: `{"city":"Paris"}`, Signature: "sigCall"}, m.Part{Name: "time", Args: `{"tz":"CET"}`}),
		m.Chunk(m.Part{Text: "", Signature: "s"}),
		m.Chunk(m.Part{Name: "f"}),
		m.Chunk(m.Part{Text: "<&>\u2028 caf\u00e9 \U0001F600", Signature: "<sig&>"}),
		m.Finish("STOP", 12, 7, 3), m.Finish("MAX_TOKENS", 1, 1, 0), m.Finish("SAFETY", 1, 0, 0),
		m.ErrorBody(503, "UNAVAILABLE", "overloaded"), m.ErrorBody(0, "", "what"), m.ErrorBody(400, "INVALID_ARGUMENT", "bad"),
		`{"candidates":[`, `{"candidates":[{"content":`, `[]`, `null`, ``, ` `, `"x"`, `1`, `{}`, `{"candidates":[]}`, `{"candidates":null}`,
		`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":[1]}}]}}]}`,
		`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":"x"}}]}}]}`,
		`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":null}}]}}]}`,
		`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"","args":{}}}]}}]}`,
		`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{ "a" : [1, {"b":null}] } }}]}}]}`,
		`{"candidates":[{"content":{"parts":[{"functionCall":null,"text":"t"}]}}]}`,
		`{"candidates":[{"content":{"parts":[{"text":null,"thoughtSignature":"s"}]}}]}`,
		`{"candidates":[{"content":{"parts":[{"text":"t","thought":null}]}}]}`,
		`{"candidates":[{"content":{"parts":[{"text":"t","thought":"true"}]}}]}`,
		`{"candidates":[{"content":{"parts":[{"text":5}]}}]}`,
		`{"candidates":[{"content":{"parts":[null,{"text":"t"}]}},{"content":{"parts":[{"text":1}]}}]}`,
		`{"candidates":[{"content":{"parts":[{"text":"a"}]}},{"content":{"parts":[{"text":"b"}]},"finishReason":"STOP"}]}`,
		`{"candidates":[null]}`, `{"candidates":[{"content":null,"finishReason":null}]}`,
		`{"candidates":{}}`, `{"candidates":[{"content":[]}]}`, `{"candidates":[{"finishReason":1}]}`,
		`{"candidates":[{"content":{"parts":[{"text":"a"}]},"finishReason":"STOP"}],"candidates":[{"content":{"parts":[{"text":"b"},{"text":"c"}]}}]}`,
		`{"candidates":[{"content":{"parts":[{"text":"a"},{"text":"b"}]}}],"candidates":[{"content":{"parts":[{"thought":true}]}}],"candidates":[{"content":{"parts":[{},{}]}}]}`,
		`{"candidates":[{"content":{"parts":[{"text":"a"},{"text":"b"},{"text":"c"}],"parts":[{}],"parts":[{},{},{}]}}]}`,
		`{"candidates":[{"content":{"parts":[{"text":"a"},{"text":"b"}],"parts":[],"parts":[{},{}]}}]}`,
		`{"candidates":[{"content":{"parts":[{"text":"a"}],"parts":null}}]}`,
		`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{"a":1}},"functionCall":{"id":"i"}}]}}]}`,
		`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f"},"functionCall":null,"functionCall":{"id":"i"}}]}}]}`,
		`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{}},"functionCall":{"args":null}}]}}]}`,
		`{"usageMetadata":{"promptTokenCount":1},"usageMetadata":{"candidatesTokenCount":2},"candidates":[{"finishReason":"STOP"}]}`,
		`{"usageMetadata":{"promptTokenCount":1},"usageMetadata":null}`,
		`{"usageMetadata":{"promptTokenCount":7},"usageMetadata":{"promptTokenCount":null}}`,
		`{"error":{"code":503},"error":{"code":null}}`,
		`{"usageMetadata":{"promptTokenCount":1.5}}`, `{"usageMetadata":{"promptTokenCount":1e2}}`,
		`{"usageMetadata":{"promptTokenCount":-0,"cachedContentTokenCount":null}}`,
		`{"usageMetadata":{"promptTokenCount":99999999999999999999}}`,
		`{"error":{"code":500},"error":{"message":"m"}}`, `{"error":{"code":500},"error":null}`,
		`{"error":{"code":500,"message":"m"},"candidates":[`, `{"error":{"code":"500"}}`, `{"error":{}}`,
		`{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"key AIza-test-SECRET \u0000 slow"}}`,
		`{"candidates":[{"content":{"parts":[{"t\u0065xt":"esc\"aped\n\ud83d\ude00\ud83d"}]}}]}`,
		"{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"bad \xff byte\"}]}}]}",
		`{"candidates":[{"content":{"parts":[{"TEXT":"folded"}]}}]}`,
		`{"candidates":[{"content":{"parts":[{"text":"a",}]}}]}`, `{"candidates":[{"content":{"parts":[{"text":"a"}]}}]} x`,
		`{"candidates":[{"content":{"parts":[{"text":"a"}]},"finishReason":""}]}`,
		`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":`+strings.Repeat("[", 600)+strings.Repeat("]", 600)+`}}]}}]}`,
	)
	// Sequences: content after the finishReason, and a finished stream's
	// usage-only chunk.
	seeds = append(seeds,
		m.Finish("STOP", 1, 1, 0)+"\n"+m.TextChunk("late"),
		m.Finish("STOP", 1, 1, 0)+"\n"+`{"usageMetadata":{"promptTokenCount":3}}`,
		m.TextChunk("a")+"\n"+m.ErrorBody(503, "UNAVAILABLE", "x"),
		strings.Join(m.Text("one two three"), "\n"),
	)
	return seeds
}

// TestDecoderMatchesOracle runs the differential check on the seeds, and
// checks that the comparison can fail. Mutations seen failing: readParts
// appending a zero part for each element (the repeated-key seeds
// differ); readInt treating null as 0 (the repeated usageMetadata and
// error); "STOP" interned as "stop".
func TestDecoderMatchesOracle(t *testing.T) {
	skipped := 0
	for _, s := range oracleSeeds() {
		if diffDecoders(t, []byte(s)) {
			skipped++
		}
	}
	// The folded key and the deep args are outside the comparison.
	if skipped != 2 {
		t.Fatalf("%d seeds skipped, want 2", skipped)
	}
}

// FuzzDecoderMatchesOracle: for any sequence of chunks (one a line), the
// decoder gives the oracle's events and error kinds, but for member names
// that encoding/json matched only by folding case and nesting past the
// scanner's bound.
func FuzzDecoderMatchesOracle(f *testing.F) {
	for _, s := range oracleSeeds() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		diffDecoders(t, data)
	})
}

// TestDecodeAllocs pins the decoder's allocations: a text delta is its
// text's string, a whole function call without a signature its one string
// (ID, name and arguments), a chunk with an empty text part or with a
// skipped thought nothing. Skipped under -race. Mutations seen failing:
// the call's ID made with "gc"+strconv.Itoa (2); a part's keys copied to
// compare them (2, and 1 for the thought); the thought's text decoded into
// a string though unused (1).
func TestDecodeAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	cases := []struct {
		name  string
		chunk string
		want  float64
	}{
		{"text delta", m.TextChunk("word "), 1},
		{"escaped text delta", m.TextChunk("caf\u00e9 \"q\"\n"), 1},
		{"call", m.Chunk(m.Part{Name: "lookup", Args: `{"q":"x","n":2}`}), 1},
		{"call with id", m.Chunk(m.Part{ID: "fc-1", Name: "lookup", Args: `{"q":"x"}`}), 1},
		{"empty text", m.Chunk(m.Part{Text: ""}), 0},
		{"thought", m.Chunk(m.Part{Text: "thinking hard", Thought: true}), 0},
		{"usage only", `{"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":4}}`, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var d decoder
			d.init()
			data := []byte(c.chunk)
			run := func() {
				d.events = d.events[:0]
				d.calls = 0
				if err := d.decode(data); err != nil {
					t.Fatal(err)
				}
			}
			run() // warm the buffers
			if got := testing.AllocsPerRun(200, run); got != c.want {
				t.Fatalf("%v allocations per chunk, want %v", got, c.want)
			}
		})
	}
}

// BenchmarkDecode compares the decoder with the oracle (encoding/json)
// per chunk, without the SSE reader.
func BenchmarkDecode(b *testing.B) {
	chunks := []struct{ name, data string }{
		{"text", m.TextChunk("word ")},
		{"call", m.Chunk(m.Part{ID: "fc-1", Name: "lookup", Args: `{"city":"Paris","days":3}`})},
		{"finish", m.Finish("STOP", 12, 7, 3)},
	}
	for _, c := range chunks {
		data := []byte(c.data)
		b.Run(c.name+"/scanner", func(b *testing.B) {
			b.ReportAllocs()
			var d decoder
			for b.Loop() {
				d.init()
				d.events = d.events[:0]
				if err := d.decode(data); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/encoding-json", func(b *testing.B) {
			b.ReportAllocs()
			var d oracleDecoder
			for b.Loop() {
				d.init()
				d.events = d.events[:0]
				if err := d.decode(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
