package deepgram

import (
	"errors"
	"testing"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/speechtest"
)

// resultsMessage is a Results message in the service's full shape (word
// timings included), for the decode tests and the benchmark.
const resultsMessage = `{"type":"Results","channel_index":[0,1],"duration":1.08,"start":90.32,"is_final":true,"speech_final":true,` +
	`"channel":{"alternatives":[{"transcript":"Yeah, I would like to book a table for two.","confidence":0.996,"words":[` +
	`{"word":"yeah","start":90.96,"end":91.4,"confidence":0.99,"punctuated_word":"Yeah,"},` +
	`{"word":"i","start":91.4,"end":91.5,"confidence":0.99,"punctuated_word":"I"},` +
	`{"word":"would","start":91.5,"end":91.7,"confidence":0.99,"punctuated_word":"would"},` +
	`{"word":"like","start":91.7,"end":91.9,"confidence":0.99,"punctuated_word":"like"},` +
	`{"word":"to","start":91.9,"end":92.0,"confidence":0.99,"punctuated_word":"to"},` +
	`{"word":"book","start":92.0,"end":92.3,"confidence":0.99,"punctuated_word":"book"},` +
	`{"word":"a","start":92.3,"end":92.4,"confidence":0.99,"punctuated_word":"a"},` +
	`{"word":"table","start":92.4,"end":92.8,"confidence":0.99,"punctuated_word":"table"},` +
	`{"word":"for","start":92.8,"end":93.0,"confidence":0.99,"punctuated_word":"for"},` +
	`{"word":"two","start":93.0,"end":93.3,"confidence":0.99,"punctuated_word":"two."}]}]},` +
	`"metadata":{"request_id":"61fc612a-d362-4e20-b3f3-de453cc124f5","model_info":{"name":"general-nova-3","version":"2025-04-17.21547","arch":"nova-3"},"model_uuid":"40bd3654"},"from_finalize":false}`

// Catches: a field read from the wrong key, the second alternative taken,
// state kept from the previous message (the decoder is reused), an
// unknown type failing the session, an error detail quoting the message.
func TestDecode(t *testing.T) {
	cases := []struct {
		name string
		in   string
		kind kind
		ev   providers.STTEvent
		err  bool
	}{
		{"full final", resultsMessage, kindResult, providers.STTEvent{Text: "Yeah, I would like to book a table for two.", Final: true, SpeechFinal: true}, false},
		{"interim", `{"type":"Results","is_final":false,"channel":{"alternatives":[{"transcript":"hel"},{"transcript":"other"}]}}`, kindResult, providers.STTEvent{Text: "hel"}, false},
		{"from finalize", `{"type":"Results","is_final":true,"from_finalize":true,"channel":{"alternatives":[{"transcript":""}]}}`, kindResult, providers.STTEvent{Final: true, FromFinalize: true}, false},
		{"no alternatives", `{"type":"Results","is_final":false,"channel":{"alternatives":[]}}`, kindResult, providers.STTEvent{}, false},
		{"utterance end", `{"type":"UtteranceEnd","channel":[0,1],"last_word_end":2.39}`, kindUtteranceEnd, providers.STTEvent{Final: true, SpeechFinal: true}, false},
		{"metadata", `{"type":"Metadata","request_id":"x","duration":1.5,"channels":1}`, kindOther, providers.STTEvent{}, false},
		{"speech started", `{"type":"SpeechStarted","channel":[0,1],"timestamp":1.2}`, kindOther, providers.STTEvent{}, false},
		{"unknown type", `{"type":"SomethingNew","x":1}`, kindOther, providers.STTEvent{}, false},
		{"no type", `{"channel":{"alternatives":[{"transcript":"secret words"}]}}`, kindOther, providers.STTEvent{}, true},
		{"malformed", `{"type":"Results","channel":{"alternatives":[{"transcript":"secret words"`, kindOther, providers.STTEvent{}, true},
		{"wrong field type", `{"type":"Results","is_final":"yes","channel":{"alternatives":[{"transcript":"secret words"}]}}`, kindOther, providers.STTEvent{}, true},
		{"error message", `{"type":"Error","variant":"DATA-0000","description":"secret words"}`, kindOther, providers.STTEvent{}, true},
	}
	var m message
	// A first decode leaves state behind for every case to ignore.
	if _, _, err := m.decode([]byte(resultsMessage)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k, ev, err := m.decode([]byte(tc.in))
			if speechtest.CheckDecodeErr(t, err, tc.err, "secret") {
				return
			}
			if k != tc.kind || ev != tc.ev {
				t.Errorf("got %v %+v, want %v %+v", k, ev, tc.kind, tc.ev)
			}
			// Decode the full message in between: nothing of it may leak
			// into the next case.
			_, _, _ = m.decode([]byte(resultsMessage))
		})
	}
}

// FuzzDecode: any input decodes or fails with a Protocol error, never
// panics, and a Results event's text is the first transcript.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		resultsMessage,
		`{"type":"Results","is_final":false,"channel":{"alternatives":[{"transcript":"hel"}]}}`,
		`{"type":"UtteranceEnd"}`, `{"type":"Metadata"}`, `{"type":"Error","variant":"x"}`,
		`{}`, `null`, `[]`, `"x"`, `{"type":1}`, `{"type":"Results","channel":null}`,
		`{"type":"Results","channel":{"alternatives":null}}`, "\xff\xfe", ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var m message
		k, ev, err := m.decode(data)
		if err != nil {
			if !errors.Is(err, providers.ErrProtocol) {
				t.Fatalf("error %v is not a Protocol", err)
			}
			return
		}
		if k != kindResult && ev.Text != "" {
			t.Fatalf("kind %v carries text", k)
		}
		if ev.Err != nil {
			t.Fatal("decode made an Err event")
		}
	})
}

// BenchmarkDecodeResults is the per-message cost of a full Results
// message (ten words with timings) on the reader goroutine.
func BenchmarkDecodeResults(b *testing.B) {
	data := []byte(resultsMessage)
	var m message
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, _, err := m.decode(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeInterim is the cost of a short interim.
func BenchmarkDecodeInterim(b *testing.B) {
	data := []byte(`{"type":"Results","channel_index":[0,1],"duration":1.0,"start":28.66,"is_final":false,"speech_final":false,"channel":{"alternatives":[{"transcript":"hello there","confidence":0.9,"words":[]}]},"metadata":{"request_id":"4f3301b8"},"from_finalize":false}`)
	var m message
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, _, err := m.decode(data); err != nil {
			b.Fatal(err)
		}
	}
}

// Catches: the reused decoder losing its reuse (a new alternatives slice
// or message per call): the budget is the transcript string alone, plus
// what encoding/json allocates for the skipped fields.
// decodeAllocBudget: 17 measured (go1.26, encoding/json); a fresh
// alternatives slice per message makes it 18.
const decodeAllocBudget = 17

func TestDecodeAllocationBudget(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	data := []byte(resultsMessage)
	var m message
	got := testing.AllocsPerRun(200, func() { _, _, _ = m.decode(data) })
	if got > decodeAllocBudget {
		t.Errorf("%v allocations per Results message, budget %d", got, decodeAllocBudget)
	}
}
