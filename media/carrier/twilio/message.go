package twilio

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/brisvox/brisvox/media/carrier/internal/wscall"
)

// Event is the kind of an inbound message.
type Event uint8

// The events of a Media Stream.
const (
	EventUnknown Event = iota
	EventConnected
	EventStart
	EventMedia
	EventMark
	EventDTMF
	EventStop
)

// String is the event's name on the wire.
func (e Event) String() string {
	switch e {
	case EventConnected:
		return "connected"
	case EventStart:
		return "start"
	case EventMedia:
		return "media"
	case EventMark:
		return "mark"
	case EventDTMF:
		return "dtmf"
	case EventStop:
		return "stop"
	default:
		return "unknown"
	}
}

// Text is a JSON string decoded into a buffer that is reused from one
// message to the next (null and absent decode to empty).
type Text []byte

// UnmarshalJSON copies the string's bytes; only a string with escapes or
// invalid UTF-8 goes through encoding/json's string decoder.
func (t *Text) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*t = (*t)[:0]
		return nil
	}
	if len(b) < 2 || b[0] != '"' {
		return fmt.Errorf("%w: not a string", ErrBadJSON)
	}
	inner := b[1 : len(b)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		*t = append((*t)[:0], inner...)
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*t = append((*t)[:0], s...)
	return nil
}

// Number is an unsigned integer that Twilio sends as a string of digits
// ("chunk":"12"); a bare JSON number is taken too.
type Number struct {
	V   uint64
	Set bool
}

// UnmarshalJSON parses the digits.
func (n *Number) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = Number{}
		return nil
	}
	if len(b) >= 2 && b[0] == '"' {
		b = b[1 : len(b)-1]
	}
	v, err := parseUint(b)
	if err != nil {
		return err
	}
	*n = Number{V: v, Set: true}
	return nil
}

// parseUint parses decimal digits without allocating.
func parseUint(b []byte) (uint64, error) {
	if len(b) == 0 || len(b) > 19 {
		return 0, fmt.Errorf("%w: not a number of up to 19 digits", ErrBadJSON)
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%w: not a number of digits", ErrBadJSON)
		}
		v = v*10 + uint64(c-'0')
	}
	return v, nil
}

// MediaFormat is the start message's description of the audio.
type MediaFormat struct {
	Encoding   Text `json:"encoding"`
	SampleRate int  `json:"sampleRate"`
	Channels   int  `json:"channels"`
}

// StartBody is the body of a start message.
type StartBody struct {
	StreamSID        Text              `json:"streamSid"`
	AccountSID       Text              `json:"accountSid"`
	CallSID          Text              `json:"callSid"`
	Tracks           []string          `json:"tracks"`
	CustomParameters map[string]string `json:"customParameters"`
	MediaFormat      MediaFormat       `json:"mediaFormat"`
}

// MediaBody is the body of a media message.
type MediaBody struct {
	Track     Text   `json:"track"`
	Chunk     Number `json:"chunk"`
	Timestamp Number `json:"timestamp"`
	// Payload is the base64 of the mu-law bytes, still encoded.
	Payload Text `json:"payload"`
}

// MarkBody is the body of a mark message.
type MarkBody struct {
	Name Text `json:"name"`
}

// DTMFBody is the body of a dtmf message.
type DTMFBody struct {
	Track Text `json:"track"`
	Digit Text `json:"digit"`
}

// StopBody is the body of a stop message.
type StopBody struct {
	AccountSID Text `json:"accountSid"`
	CallSID    Text `json:"callSid"`
}

// Message is one inbound message. Parse one stream's messages into the
// same Message: its buffers are reused, so decoding a media message
// allocates nothing of its own.
type Message struct {
	Event          Event  `json:"-"`
	EventName      Text   `json:"event"`
	SequenceNumber Number `json:"sequenceNumber"`
	StreamSID      Text   `json:"streamSid"`
	// Protocol and Version come with connected.
	Protocol Text      `json:"protocol"`
	Version  Text      `json:"version"`
	Start    StartBody `json:"start"`
	Media    MediaBody `json:"media"`
	Mark     MarkBody  `json:"mark"`
	DTMF     DTMFBody  `json:"dtmf"`
	Stop     StopBody  `json:"stop"`
}

// reset empties m, keeping its buffers.
func (m *Message) reset() {
	*m = Message{
		EventName: m.EventName[:0], StreamSID: m.StreamSID[:0],
		Protocol: m.Protocol[:0], Version: m.Version[:0],
		Start: StartBody{
			StreamSID: m.Start.StreamSID[:0], AccountSID: m.Start.AccountSID[:0], CallSID: m.Start.CallSID[:0],
			MediaFormat: MediaFormat{Encoding: m.Start.MediaFormat.Encoding[:0]},
		},
		Media: MediaBody{Track: m.Media.Track[:0], Payload: m.Media.Payload[:0]},
		Mark:  MarkBody{Name: m.Mark.Name[:0]},
		DTMF:  DTMFBody{Track: m.DTMF.Track[:0], Digit: m.DTMF.Digit[:0]},
		Stop:  StopBody{AccountSID: m.Stop.AccountSID[:0], CallSID: m.Stop.CallSID[:0]},
	}
}

// Parse decodes one message into m (media messages of the usual shape
// without encoding/json; see parseMediaFast). Malformed JSON, or a field of the
// wrong type, is ErrBadJSON; an unknown event is not an error (Event is
// EventUnknown).
func (m *Message) Parse(data []byte) error {
	m.reset()
	if parseMediaFast(data, m) {
		m.Event = EventMedia
		return nil
	}
	m.reset()
	if err := json.Unmarshal(data, m); err != nil {
		return fmt.Errorf("%w: %w", ErrBadJSON, err)
	}
	switch string(m.EventName) {
	case "connected":
		m.Event = EventConnected
	case "start":
		m.Event = EventStart
	case "media":
		m.Event = EventMedia
	case "mark":
		m.Event = EventMark
	case "dtmf":
		m.Event = EventDTMF
	case "stop":
		m.Event = EventStop
	default:
		m.Event = EventUnknown
	}
	return nil
}

// DecodePayload decodes the media payload (standard base64) into dst's
// backing array when it is large enough, and returns the mu-law bytes.
func (m *Message) DecodePayload(dst []byte) ([]byte, error) {
	p := m.Media.Payload
	need := base64.StdEncoding.DecodedLen(len(p))
	if cap(dst) < need {
		dst = make([]byte, need)
	}
	n, err := base64.StdEncoding.Decode(dst[:need], p)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadPayload, err)
	}
	return dst[:n], nil
}

// ValidFormat tells whether the start message's format is the one the
// bidirectional stream uses: audio/x-mulaw, 8000 Hz, mono.
func (m *Message) ValidFormat() bool {
	f := m.Start.MediaFormat
	return string(f.Encoding) == "audio/x-mulaw" && f.SampleRate == Rate && f.Channels == 1
}

// Outbound messages. The stream SID is JSON-quoted once per call.

// AppendMedia appends a media message carrying mulaw.
func AppendMedia(dst, quotedSID, mulaw []byte) []byte {
	dst = append(dst, `{"event":"media","streamSid":`...)
	dst = append(dst, quotedSID...)
	dst = append(dst, `,"media":{"payload":"`...)
	dst = base64.StdEncoding.AppendEncode(dst, mulaw)
	return append(dst, `"}}`...)
}

// AppendMark appends a mark message.
func AppendMark(dst, quotedSID []byte, name string) []byte {
	dst = append(dst, `{"event":"mark","streamSid":`...)
	dst = append(dst, quotedSID...)
	dst = append(dst, `,"mark":{"name":`...)
	dst = wscall.AppendJSONString(dst, name)
	return append(dst, `}}`...)
}

// AppendClear appends a clear message.
func AppendClear(dst, quotedSID []byte) []byte {
	dst = append(dst, `{"event":"clear","streamSid":`...)
	dst = append(dst, quotedSID...)
	return append(dst, '}')
}

// QuoteSID is the stream SID as a JSON string, for the Append functions.
func QuoteSID(sid string) []byte { return wscall.AppendJSONString(nil, sid) }
