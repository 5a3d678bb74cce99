package twilio

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
)

// Messages in the shapes Twilio sends (the SIDs are made up).
const (
	testStreamSID = "MZ00000000000000000000000000000001"
	testCallSID   = "CA00000000000000000000000000000002"
	testAccount   = "AC00000000000000000000000000000003"

	msgConnected = `{"event":"connected","protocol":"Call","version":"1.0.0"}`
	msgStart     = `{"event":"start","sequenceNumber":"1","start":{"accountSid":"AC00000000000000000000000000000003","streamSid":"MZ00000000000000000000000000000001","callSid":"CA00000000000000000000000000000002","tracks":["inbound"],"mediaFormat":{"encoding":"audio/x-mulaw","sampleRate":8000,"channels":1},"customParameters":{"caller":"+15550100"}},"streamSid":"MZ00000000000000000000000000000001"}`
	msgMedia     = `{"event":"media","sequenceNumber":"3","media":{"track":"inbound","chunk":"1","timestamp":"5","payload":"/35+fw=="},"streamSid":"MZ00000000000000000000000000000001"}`
	msgMark      = `{"event":"mark","sequenceNumber":"4","streamSid":"MZ00000000000000000000000000000001","mark":{"name":"end-1"}}`
	msgDTMF      = `{"event":"dtmf","streamSid":"MZ00000000000000000000000000000001","sequenceNumber":"5","dtmf":{"track":"inbound_track","digit":"1"}}`
	msgStop      = `{"event":"stop","sequenceNumber":"6","streamSid":"MZ00000000000000000000000000000001","stop":{"accountSid":"AC00000000000000000000000000000003","callSid":"CA00000000000000000000000000000002"}}`
)

// TestParse: the real shapes decode into their fields, in one reused
// Message (a field of the previous message does not survive). Mutations
// caught: reset not emptying a body (the start's call SID still set on
// the media message), Number not stripping the quotes.
func TestParse(t *testing.T) {
	m := &Message{}
	cases := []struct {
		name  string
		in    string
		event Event
		check func(t *testing.T, m *Message)
	}{
		{"connected", msgConnected, EventConnected, func(t *testing.T, m *Message) {
			if string(m.Protocol) != "Call" || string(m.Version) != "1.0.0" {
				t.Errorf("protocol %q version %q", m.Protocol, m.Version)
			}
		}},
		{"start", msgStart, EventStart, func(t *testing.T, m *Message) {
			s := m.Start
			if string(s.StreamSID) != testStreamSID || string(s.CallSID) != testCallSID || string(s.AccountSID) != testAccount {
				t.Errorf("sids %q %q %q", s.StreamSID, s.CallSID, s.AccountSID)
			}
			if !m.ValidFormat() || !slices.Equal(s.Tracks, []string{"inbound"}) || !maps.Equal(s.CustomParameters, map[string]string{"caller": "+15550100"}) {
				t.Errorf("start body %+v", s)
			}
			if m.SequenceNumber != (Number{V: 1, Set: true}) {
				t.Errorf("sequenceNumber %+v", m.SequenceNumber)
			}
		}},
		{"media", msgMedia, EventMedia, func(t *testing.T, m *Message) {
			if len(m.Start.CallSID) != 0 || m.Start.MediaFormat.SampleRate != 0 {
				t.Errorf("the start body survived into the next message")
			}
			if string(m.Media.Track) != "inbound" || m.Media.Chunk.V != 1 || m.Media.Timestamp.V != 5 || !m.Media.Timestamp.Set {
				t.Errorf("media %+v", m.Media)
			}
			mu, err := m.DecodePayload(nil)
			if err != nil || !bytes.Equal(mu, []byte{0xff, 0x7e, 0x7e, 0x7f}) {
				t.Errorf("payload %x, %v", mu, err)
			}
		}},
		{"mark", msgMark, EventMark, func(t *testing.T, m *Message) {
			if string(m.Mark.Name) != "end-1" || len(m.Media.Payload) != 0 {
				t.Errorf("mark %q, payload %q", m.Mark.Name, m.Media.Payload)
			}
		}},
		{"dtmf", msgDTMF, EventDTMF, func(t *testing.T, m *Message) {
			if string(m.DTMF.Digit) != "1" || string(m.DTMF.Track) != "inbound_track" {
				t.Errorf("dtmf %+v", m.DTMF)
			}
		}},
		{"stop", msgStop, EventStop, func(t *testing.T, m *Message) {
			if string(m.Stop.CallSID) != testCallSID || string(m.Stop.AccountSID) != testAccount {
				t.Errorf("stop %+v", m.Stop)
			}
		}},
		{"unknown event", `{"event":"flush","streamSid":"x"}`, EventUnknown, nil},
		{"escaped strings", `{"event":"m\u0061rk","mark":{"name":"a\"b\/c"}}`, EventMark, func(t *testing.T, m *Message) {
			if string(m.Mark.Name) != `a"b/c` {
				t.Errorf("name %q", m.Mark.Name)
			}
		}},
		{"bare numbers", `{"event":"media","media":{"chunk":7,"timestamp":140,"payload":""}}`, EventMedia, func(t *testing.T, m *Message) {
			if m.Media.Chunk.V != 7 || m.Media.Timestamp.V != 140 {
				t.Errorf("media %+v", m.Media)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := m.Parse([]byte(tc.in)); err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if m.Event != tc.event {
				t.Fatalf("event %v, want %v", m.Event, tc.event)
			}
			if tc.check != nil {
				tc.check(t, m)
			}
		})
	}
}

// TestParseRejects: malformed input is ErrBadJSON, bad base64 is
// ErrBadPayload, and neither panics. Mutation caught: Number accepting
// non-digits (a "chunk":"1x" parsed as 1).
func TestParseRejects(t *testing.T) {
	cases := []struct{ name, in string }{
		{"truncated", `{"event":"media","media":{`},
		{"not an object", `["media"]`},
		{"event not a string", `{"event":5}`},
		{"chunk not digits", `{"event":"media","media":{"chunk":"1x"}}`},
		{"negative timestamp", `{"event":"media","media":{"timestamp":"-20"}}`},
		{"huge number", `{"event":"media","media":{"chunk":"123456789012345678901"}}`},
		{"sampleRate a string", `{"event":"start","start":{"mediaFormat":{"sampleRate":"8000"}}}`},
		{"empty", ``},
		{"binary", "\x00\xff"},
	}
	m := &Message{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := m.Parse([]byte(tc.in)); !errors.Is(err, ErrBadJSON) {
				t.Fatalf("Parse(%q) = %v, want ErrBadJSON", tc.in, err)
			}
		})
	}
	if err := m.Parse([]byte(`{"event":"media","media":{"payload":"!!notbase64"}}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := m.DecodePayload(nil); !errors.Is(err, ErrBadPayload) {
		t.Fatalf("DecodePayload of bad base64: %v", err)
	}
}

// TestOutboundShapes: the hand-written encoders produce the JSON Twilio
// expects (checked by decoding it).
func TestOutboundShapes(t *testing.T) {
	sid := QuoteSID(testStreamSID)
	var media struct {
		Event, StreamSid string
		Media            struct{ Payload string }
	}
	mu := []byte{0, 1, 2, 0xff, 0x7f}
	if err := json.Unmarshal(AppendMedia(nil, sid, mu), &media); err != nil {
		t.Fatal(err)
	}
	got, _ := base64.StdEncoding.DecodeString(media.Media.Payload)
	if media.Event != "media" || media.StreamSid != testStreamSID || !bytes.Equal(got, mu) {
		t.Fatalf("media message %+v", media)
	}
	var mark struct {
		Event, StreamSid string
		Mark             struct{ Name string }
	}
	if err := json.Unmarshal(AppendMark(nil, sid, `end-"7"`), &mark); err != nil {
		t.Fatal(err)
	}
	if mark.Event != "mark" || mark.StreamSid != testStreamSID || mark.Mark.Name != `end-"7"` {
		t.Fatalf("mark message %+v", mark)
	}
	var clr map[string]string
	if err := json.Unmarshal(AppendClear(nil, sid), &clr); err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(clr, map[string]string{"event": "clear", "streamSid": testStreamSID}) {
		t.Fatalf("clear message %v", clr)
	}
}

// TestParseMediaAllocs: parsing a media message and decoding its payload
// into a reused Message and buffer allocates nothing. Mutations caught:
// the fast path not taken (6 allocations in encoding/json), DecodePayload
// not reusing dst.
func TestParseMediaAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	data := []byte(mediaMessage(make([]byte, 160), 1, 0))
	m := &Message{}
	var buf []byte
	step := func() {
		if err := m.Parse(data); err != nil {
			t.Fatal(err)
		}
		mu, err := m.DecodePayload(buf)
		if err != nil {
			t.Fatal(err)
		}
		buf = mu[:0]
	}
	step()
	if a := testing.AllocsPerRun(100, step); a > maxParseAllocs {
		t.Fatalf("%v allocs per media message, budget %d", a, maxParseAllocs)
	}
}

// maxParseAllocs: media messages take the fast path, which allocates
// nothing.
const maxParseAllocs = 0

// mediaMessage is a media message as Twilio sends it.
func mediaMessage(mulaw []byte, chunk, tsMS int) string {
	b, _ := json.Marshal(map[string]any{
		"event": "media", "sequenceNumber": itoa(chunk + 2), "streamSid": testStreamSID,
		"media": map[string]string{"track": "inbound", "chunk": itoa(chunk), "timestamp": itoa(tsMS),
			"payload": base64.StdEncoding.EncodeToString(mulaw)},
	})
	return string(b)
}

func itoa(v int) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// oracle is the message decoded by plain encoding/json.
type oracle struct {
	Event     string `json:"event"`
	StreamSID string `json:"streamSid"`
	Start     struct {
		CallSID     string `json:"callSid"`
		MediaFormat struct {
			Encoding   string `json:"encoding"`
			SampleRate int    `json:"sampleRate"`
		} `json:"mediaFormat"`
	} `json:"start"`
	Media struct {
		Track   string `json:"track"`
		Payload string `json:"payload"`
	} `json:"media"`
	Mark struct {
		Name string `json:"name"`
	} `json:"mark"`
	DTMF struct {
		Digit string `json:"digit"`
	} `json:"dtmf"`
}

// FuzzMessage: Parse never panics; whatever it accepts, plain
// encoding/json accepts too, with the same strings; what the media fast
// path accepts decodes to the same Message through encoding/json; an
// accepted media payload survives a round trip through AppendMedia.
// Mutations caught (seen failing): the fast path accepting escapes or
// control characters in strings, or trailing bytes after the object.
func FuzzMessage(f *testing.F) {
	for _, s := range []string{msgConnected, msgStart, msgMedia, msgMark, msgDTMF, msgStop,
		`{"event":"m\u0061rk","mark":{"name":"\ud83d\ude00"}}`, `{"event":"media","media":{"payload":"\/w=="}}`,
		`{"event":null,"media":null}`, `{"EVENT":"stop"}`, "{\"event\":\"\xff\"}",
		` { "media" : { "payload" : "AA==" } , "event" : "media" } `, `{"event":"media","media":{"chunk":"1"}}x`,
		`{"event":"media","media":{"track":"a\tb"}}`, `{"event":"media","media":{},"media":{"chunk":"2"}}`,
		"{\"event\":\"media\",\"media\":{\"track\":\"a\x01b\"}}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fast := &Message{}
		if parseMediaFast(data, fast) {
			slow := &Message{}
			if err := json.Unmarshal(data, slow); err != nil {
				t.Fatalf("fast path accepted what encoding/json rejects: %v", err)
			}
			slow.Event = fast.Event
			if a, b := fmt.Sprintf("%v", *fast), fmt.Sprintf("%v", *slow); a != b {
				t.Fatalf("fast path %s, encoding/json %s", a, b)
			}
		}
		m := &Message{}
		if err := m.Parse(data); err != nil {
			if !errors.Is(err, ErrBadJSON) {
				t.Fatalf("error %v is not ErrBadJSON", err)
			}
			return
		}
		var o oracle
		if err := json.Unmarshal(data, &o); err != nil {
			t.Fatalf("Parse accepted what encoding/json rejects: %v", err)
		}
		pairs := [][2]string{
			{string(m.EventName), o.Event}, {string(m.StreamSID), o.StreamSID},
			{string(m.Start.CallSID), o.Start.CallSID}, {string(m.Start.MediaFormat.Encoding), o.Start.MediaFormat.Encoding},
			{string(m.Media.Track), o.Media.Track}, {string(m.Media.Payload), o.Media.Payload},
			{string(m.Mark.Name), o.Mark.Name}, {string(m.DTMF.Digit), o.DTMF.Digit},
		}
		for i, p := range pairs {
			if p[0] != p[1] {
				t.Fatalf("field %d: %q, encoding/json %q", i, p[0], p[1])
			}
		}
		if m.Start.MediaFormat.SampleRate != o.Start.MediaFormat.SampleRate {
			t.Fatalf("sampleRate %d, encoding/json %d", m.Start.MediaFormat.SampleRate, o.Start.MediaFormat.SampleRate)
		}
		mu, err := m.DecodePayload(nil)
		if err != nil {
			if !errors.Is(err, ErrBadPayload) {
				t.Fatalf("payload error %v is not ErrBadPayload", err)
			}
			return
		}
		var back Message
		if err := back.Parse(AppendMedia(nil, QuoteSID(string(m.StreamSID)), mu)); err != nil {
			t.Fatalf("our media message does not parse: %v", err)
		}
		mu2, err := back.DecodePayload(nil)
		if err != nil || !bytes.Equal(mu, mu2) || string(back.StreamSID) != string(m.StreamSID) {
			t.Fatalf("media round trip: %x -> %x (%v)", mu, mu2, err)
		}
	})
}
