package aura

import (
	"encoding/json"
	"strings"

	"github.com/brisvox/brisvox/providers"
)

// The client messages without a body.
var (
	msgFlush = []byte(`{"type":"Flush"}`)
	msgClear = []byte(`{"type":"Clear"}`)
	msgClose = []byte(`{"type":"Close"}`)
)

// appendSpeak appends a Speak message carrying text.
func appendSpeak(b []byte, text string) []byte {
	q, _ := json.Marshal(text) // a string always marshals
	b = append(b, `{"type":"Speak","text":`...)
	b = append(b, q...)
	return append(b, '}')
}

// kind is what an inbound message is.
type kind int

const (
	kindAudio    kind = iota + 1 // a binary frame of PCM16
	kindMetadata                 // the session's request id and model
	kindFlushed                  // the answer to a Flush, after its audio
	kindCleared                  // the answer to a Clear
	kindWarning                  // a warning (e.g. too many flushes)
	kindError                    // an error; the session cannot go on
	kindOther                    // a type this adapter does not know
)

// message is one decoded inbound message. audio aliases the frame.
type message struct {
	kind  kind
	seq   int64  // sequence_id of Flushed and Cleared
	code  string // the short code of a Warning or an Error
	audio []byte
}

// wire is the JSON shape of the service's text messages.
type wire struct {
	Type    *string `json:"type"`
	Seq     int64   `json:"sequence_id"`
	Code    string  `json:"code"`
	ErrCode string  `json:"err_code"`
}

// decode reads one inbound message into m. A text message that is not a
// JSON object with a string type is *providers.Protocol; an unknown type
// is kindOther (the service may add messages). Nothing of the message is
// put in an error but its type and a short code.
func decode(binary bool, data []byte, m *message) error {
	*m = message{}
	if binary {
		m.kind, m.audio = kindAudio, data
		return nil
	}
	var w wire
	if err := json.Unmarshal(data, &w); err != nil {
		return &providers.Protocol{Detail: "text message is not a JSON object of the service"}
	}
	if w.Type == nil {
		return &providers.Protocol{Detail: "text message without a type"}
	}
	m.seq = w.Seq
	m.code = clip(w.Code, 64)
	if m.code == "" {
		m.code = clip(w.ErrCode, 64)
	}
	switch *w.Type {
	case "Metadata":
		m.kind = kindMetadata
	case "Flushed":
		m.kind = kindFlushed
	case "Cleared":
		m.kind = kindCleared
	case "Warning":
		m.kind = kindWarning
	case "Error":
		m.kind = kindError
	default:
		m.kind = kindOther
	}
	return nil
}

// clip cuts s to n bytes and keeps it to printable ASCII, so a code from
// the service cannot smuggle anything into a log line.
func clip(s string, n int) string {
	if len(s) > n {
		s = s[:n]
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e {
			return '?'
		}
		return r
	}, s)
}

// pcm16 turns little-endian PCM16 bytes into samples, carrying an odd
// byte over to the next frame of the same context through odd/hasOdd.
func pcm16(b []byte, odd *byte, hasOdd *bool) []int16 {
	n := len(b)
	if *hasOdd {
		n++
	}
	if n/2 == 0 {
		if len(b) == 1 {
			*odd, *hasOdd = b[0], true
		}
		return nil
	}
	out := make([]int16, n/2)
	i := 0
	if *hasOdd {
		out[0] = int16(uint16(*odd) | uint16(b[0])<<8)
		b, i, *hasOdd = b[1:], 1, false
	}
	for j := 0; j+1 < len(b); j += 2 {
		out[i] = int16(uint16(b[j]) | uint16(b[j+1])<<8)
		i++
	}
	if len(b)%2 == 1 {
		*odd, *hasOdd = b[len(b)-1], true
	}
	return out
}
