package deepgram

import (
	"encoding/json"
	"fmt"

	"github.com/brisvox/brisvox/providers"
)

// The control messages the adapter sends, as text frames.
var (
	msgKeepAlive   = []byte(`{"type":"KeepAlive"}`)
	msgFinalize    = []byte(`{"type":"Finalize"}`)
	msgCloseStream = []byte(`{"type":"CloseStream"}`)
)

// kind is what an inbound message is, for the adapter.
type kind int

const (
	kindOther        kind = iota // Metadata, SpeechStarted, unknown types: no event
	kindResult                   // Results
	kindUtteranceEnd             // UtteranceEnd
)

// message is the part of an inbound message the adapter reads. One is
// reused per session: json.Unmarshal keeps the alternatives' capacity.
type message struct {
	Type         string  `json:"type"`
	Channel      channel `json:"channel"`
	IsFinal      bool    `json:"is_final"`
	SpeechFinal  bool    `json:"speech_final"`
	FromFinalize bool    `json:"from_finalize"`
	Variant      string  `json:"variant"` // of an Error message
}

// channel is the channel object of a Results message. UtteranceEnd and
// SpeechStarted carry "channel" as an array of indices instead; it is
// skipped there.
type channel struct {
	Alternatives []struct {
		Transcript string `json:"transcript"`
	} `json:"alternatives"`
}

// UnmarshalJSON reads the object form and skips any other.
func (c *channel) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || b[0] != '{' {
		return nil
	}
	type plain channel
	return json.Unmarshal(b, (*plain)(c))
}

// decode reads one text message into m and says what it is, with the
// event of a Results or UtteranceEnd. Malformed JSON, a message without a
// type and an Error message are *providers.Protocol; their Detail never
// quotes the message (it may hold a transcript).
func (m *message) decode(data []byte) (kind, providers.STTEvent, error) {
	m.Type, m.IsFinal, m.SpeechFinal, m.FromFinalize, m.Variant = "", false, false, false, ""
	m.Channel.Alternatives = m.Channel.Alternatives[:0]
	if err := json.Unmarshal(data, m); err != nil {
		return kindOther, providers.STTEvent{}, &providers.Protocol{Detail: fmt.Sprintf("malformed message (%d bytes)", len(data))}
	}
	switch m.Type {
	case "Results":
		ev := providers.STTEvent{Final: m.IsFinal, SpeechFinal: m.SpeechFinal, FromFinalize: m.FromFinalize}
		if len(m.Channel.Alternatives) > 0 {
			ev.Text = m.Channel.Alternatives[0].Transcript
		}
		return kindResult, ev, nil
	case "UtteranceEnd":
		return kindUtteranceEnd, providers.STTEvent{Final: true, SpeechFinal: true}, nil
	case "":
		return kindOther, providers.STTEvent{}, &providers.Protocol{Detail: "message without a type"}
	case "Error":
		return kindOther, providers.STTEvent{}, &providers.Protocol{Detail: "error message from the service: " + clip(m.Variant, 64)}
	}
	return kindOther, providers.STTEvent{}, nil
}

// clip cuts s to at most n bytes.
func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
