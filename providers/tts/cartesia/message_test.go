package cartesia

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/speechtest"
)

// chunkMessage is a chunk in the service's full shape: 100 ms of 16 kHz
// PCM16 (3200 bytes, 4268 of base64).
var chunkMessage = func() string {
	pcm := make([]byte, 3200)
	for i := range pcm {
		pcm[i] = byte(i * 7)
	}
	return `{"type":"chunk","data":"` + base64.StdEncoding.EncodeToString(pcm) +
		`","done":false,"status_code":206,"step_time":12.345,"flush_id":1,"context_id":"ctx-12"}`
}()

const timestampsMessage = `{"type":"timestamps","done":false,"status_code":206,"context_id":"ctx-12","flush_id":1,` +
	`"word_timestamps":{"words":["Yeah,","I","would","like","to","book","a","table","for","two."],` +
	`"start":[0.0,0.42,0.5,0.71,0.9,1.02,1.31,1.4,1.82,2.0],"end":[0.4,0.5,0.7,0.9,1.0,1.3,1.4,1.8,2.0,2.41]}}`

// Catches: a field read from the wrong key, state kept from the previous
// message (the decoder is reused), key order mattering, an unknown type
// failing the session, base64 or mismatched timestamps accepted, an error
// detail quoting the message.
func TestDecode(t *testing.T) {
	cases := []struct {
		name   string
		in     string
		kind   kind
		ctx    string
		audio  []byte
		words  []string
		starts []float64
		status int
		code   string
		err    bool
	}{
		{"chunk", `{"type":"chunk","data":"AQIDBA==","done":false,"status_code":206,"context_id":"c1"}`, kindChunk, "c1", []byte{1, 2, 3, 4}, nil, nil, 206, "", false},
		{"chunk, type last", `{"context_id":"c1","data":"AQID","type":"chunk"}`, kindChunk, "c1", []byte{1, 2, 3}, nil, nil, 0, "", false},
		{"chunk with escaped slash", `{"type":"chunk","data":"\/\/8=","context_id":"c1"}`, kindChunk, "c1", []byte{0xff, 0xff}, nil, nil, 0, "", false},
		{"timestamps", `{"type":"timestamps","context_id":"c2","word_timestamps":{"words":["Hi","there"],"start":[0,0.25],"end":[0.2,0.5]}}`,
			kindTimestamps, "c2", nil, []string{"Hi", "there"}, []float64{0, 0.25}, 0, "", false},
		{"timestamps without ends", `{"type":"timestamps","context_id":"c2","word_timestamps":{"start":[1e-1],"words":["x"]}}`,
			kindTimestamps, "c2", nil, []string{"x"}, []float64{0.1}, 0, "", false},
		{"done", `{"type":"done","done":true,"status_code":206,"context_id":"c3"}`, kindDone, "c3", nil, nil, nil, 206, "", false},
		{"flush done", `{"type":"flush_done","done":false,"flush_done":true,"flush_id":1,"status_code":206,"context_id":"c3"}`, kindFlushDone, "c3", nil, nil, nil, 206, "", false},
		{"error, new shape", `{"type":"error","done":true,"title":"Invalid model","message":"secret text","error_code":"model_not_found","status_code":400,"context_id":"c4"}`,
			kindError, "c4", nil, nil, nil, 400, "model_not_found", false},
		{"error, old shape", `{"type":"error","done":true,"error":"secret text","title":"Bad","status_code":500}`, kindError, "", nil, nil, nil, 500, "Bad", false},
		{"phonemes", `{"type":"phoneme_timestamps","context_id":"c5","phoneme_timestamps":{"phonemes":["h"],"start":[0],"end":[1]}}`, kindOther, "c5", nil, nil, nil, 0, "", false},
		{"unknown type", `{"type":"something_new","x":[1,{"y":null}]}`, kindOther, "", nil, nil, nil, 0, "", false},
		{"no type", `{"data":"AQID","context_id":"secret"}`, 0, "", nil, nil, nil, 0, "", true},
		{"empty type", `{"type":"","context_id":"secret"}`, 0, "", nil, nil, nil, 0, "", true},
		{"not base64", `{"type":"chunk","data":"secret!!","context_id":"c1"}`, 0, "", nil, nil, nil, 0, "", true},
		{"unequal timestamps", `{"type":"timestamps","context_id":"c","word_timestamps":{"words":["secret","x"],"start":[0]}}`, 0, "", nil, nil, nil, 0, "", true},
		{"start not a number", `{"type":"timestamps","context_id":"c","word_timestamps":{"words":["secret"],"start":["0"]}}`, 0, "", nil, nil, nil, 0, "", true},
		{"malformed", `{"type":"chunk","data":"secret`, 0, "", nil, nil, nil, 0, "", true},
		{"trailing data", `{"type":"done","context_id":"c"} {"secret":1}`, 0, "", nil, nil, nil, 0, "", true},
		{"not an object", `["secret"]`, 0, "", nil, nil, nil, 0, "", true},
		{"status not an integer", `{"type":"chunk","status_code":"206","context_id":"secret"}`, 0, "", nil, nil, nil, 0, "", true},
	}
	var d decoder
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// A full message decoded first leaves state behind to ignore.
			for _, warm := range []string{chunkMessage, timestampsMessage} {
				if _, err := d.decode([]byte(warm)); err != nil {
					t.Fatal(err)
				}
			}
			m, err := d.decode([]byte(tc.in))
			if speechtest.CheckDecodeErr(t, err, tc.err, "secret") {
				return
			}
			if m.kind != tc.kind || string(m.ctx) != tc.ctx || (tc.ctx == "" && m.ctx != nil) || !slices.Equal(m.audio, tc.audio) ||
				!slices.Equal(m.words, tc.words) || !slices.Equal(m.starts, tc.starts) || m.status != tc.status || m.code != tc.code {
				t.Errorf("got %+v", *m)
			}
		})
	}
}

// Catches: the outbound messages not being JSON a service can read
// (quotes, control characters, HTML characters and invalid UTF-8 in the
// text).
func TestOutboundMessagesAreJSON(t *testing.T) {
	fields := Config{}.withDefaults().requestFields()
	for _, text := range []string{"plain", `say "hi" \ now`, "tab\tline\nnul\x00", "<a&b>", "bad \xff utf8", ""} {
		var got struct {
			Transcript string `json:"transcript"`
			Continue   *bool  `json:"continue"`
			ContextID  string `json:"context_id"`
			ModelID    string `json:"model_id"`
		}
		b := appendRequest(nil, fields, "ctx-1", text, true)
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%q: %v", b, err)
		}
		want := strings.ToValidUTF8(text, "\uFFFD")
		if got.Transcript != want || got.Continue == nil || !*got.Continue || got.ContextID != "ctx-1" || got.ModelID != "sonic-3" {
			t.Errorf("%q decodes as %+v", b, got)
		}
	}
	var c struct {
		ContextID string `json:"context_id"`
		Cancel    bool   `json:"cancel"`
	}
	if err := json.Unmarshal(appendCancel(nil, "ctx-9"), &c); err != nil || c.ContextID != "ctx-9" || !c.Cancel {
		t.Errorf("cancel %+v %v", c, err)
	}
}

// FuzzDecode: any input decodes or fails with a Protocol error, never
// panics; a decoded message is consistent (audio only for a chunk, as
// many starts as words, words only for timestamps).
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		chunkMessage, timestampsMessage,
		`{"type":"done","context_id":"c"}`, `{"type":"flush_done","context_id":"c"}`,
		`{"type":"error","status_code":429,"error_code":"x"}`, `{"type":"chunk","data":null}`,
		`{"type":"timestamps","word_timestamps":null}`, `{"type":"timestamps","word_timestamps":{"words":null,"start":[]}}`,
		`{}`, `null`, `[]`, `"x"`, `{"type":1}`, "\xff\xfe", ``, `{"type":"chunk","data":"A"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var d decoder
		m, err := d.decode(data)
		if err != nil {
			if !errors.Is(err, providers.ErrProtocol) {
				t.Fatalf("error %v is not a Protocol", err)
			}
			return
		}
		if m.kind != kindChunk && len(m.audio) > 0 {
			t.Fatalf("kind %v carries audio", m.kind)
		}
		if len(m.words) != len(m.starts) || (m.kind != kindTimestamps && len(m.words) > 0) {
			t.Fatalf("kind %v: %d words, %d starts", m.kind, len(m.words), len(m.starts))
		}
		var c tctx
		if pcm := c.samples(m.audio); len(pcm) != len(m.audio)/2 {
			t.Fatalf("%d samples of %d bytes", len(pcm), len(m.audio))
		}
	})
}

// oracleMessage is what encoding/json would decode: the alternative the
// decoder was measured against (BenchmarkDecodeChunkEncodingJSON).
type oracleMessage struct {
	Type           string `json:"type"`
	ContextID      string `json:"context_id"`
	Data           []byte `json:"data"` // base64, decoded by encoding/json
	StatusCode     int    `json:"status_code"`
	ErrorCode      string `json:"error_code"`
	WordTimestamps *struct {
		Words []string  `json:"words"`
		Start []float64 `json:"start"`
	} `json:"word_timestamps"`
}

// BenchmarkDecodeChunk is the per-chunk cost on the reader goroutine: 100
// ms of 16 kHz audio, JSON scanned in place and base64 decoded into the
// decoder's buffer.
func BenchmarkDecodeChunk(b *testing.B) {
	data := []byte(chunkMessage)
	var d decoder
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := d.decode(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeChunkEncodingJSON is the same message through
// encoding/json, for comparison.
func BenchmarkDecodeChunkEncodingJSON(b *testing.B) {
	data := []byte(chunkMessage)
	var m oracleMessage
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		m = oracleMessage{}
		if err := json.Unmarshal(data, &m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeTimestamps is a timestamps message of ten words.
func BenchmarkDecodeTimestamps(b *testing.B) {
	data := []byte(timestampsMessage)
	var d decoder
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := d.decode(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkChunkToEvent is a chunk's whole cost up to the queued event:
// decode, the samples (the one allocation: the event's PCM), the queue.
func BenchmarkChunkToEvent(b *testing.B) {
	data := []byte(chunkMessage)
	s := newSession(&Config{SampleRate: 16000, PendingEvents: 1 << 20}, nil)
	s.byWire["ctx-12"] = &tctx{id: "a", wire: "ctx-12"}
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		m, err := s.dec.decode(data)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.applyLocked(m); err != nil {
			b.Fatal(err)
		}
		_, _ = s.pump.PopLocked()
	}
}

// Catches: the decoder losing its reuse (a new audio buffer, a string of
// the context id or of the data per chunk): a chunk decodes with no
// allocation, a ten-word timestamps message with one per word.
func TestDecodeAllocationBudget(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	var d decoder
	for _, tc := range []struct {
		name   string
		data   string
		budget float64
	}{{"chunk", chunkMessage, 0}, {"timestamps", timestampsMessage, 10}} {
		data := []byte(tc.data)
		if got := testing.AllocsPerRun(200, func() { _, _ = d.decode(data) }); got > tc.budget {
			t.Errorf("%s: %v allocations per message, budget %v", tc.name, got, tc.budget)
		}
	}
}
