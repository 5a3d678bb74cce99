package elevenlabs

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/jsonscan"
)

// The messages without a context, as text frames.
var (
	// msgKeepAlive is an empty text: the service ignores it and resets its
	// inactivity timer.
	msgKeepAlive = []byte(`{"text":""}`)
	// msgCloseSocket ends every context and the socket.
	msgCloseSocket = []byte(`{"close_socket":true}`)
)

// appendOpen is the opening of a context: a single space, as the service
// asks, with extras (Config.openingExtras) before the closing brace.
func appendOpen(b []byte, wire string, extras []byte) []byte {
	b = append(b, `{"text":" ","context_id":`...)
	b = appendString(b, wire)
	b = append(b, extras...)
	return append(b, '}')
}

// appendText is a text piece of a context.
func appendText(b []byte, wire, text string) []byte {
	b = append(b, `{"text":`...)
	b = appendString(b, text)
	b = append(b, `,"context_id":`...)
	b = appendString(b, wire)
	return append(b, '}')
}

// appendFlush asks the context to speak all the text it holds.
func appendFlush(b []byte, wire string) []byte {
	b = append(b, `{"context_id":`...)
	b = appendString(b, wire)
	return append(b, `,"flush":true}`...)
}

// appendCloseContext closes a context: a flushed one goes on to its end,
// then isFinal follows.
func appendCloseContext(b []byte, wire string) []byte {
	b = append(b, `{"context_id":`...)
	b = appendString(b, wire)
	return append(b, `,"close_context":true}`...)
}

// appendString appends s as a JSON string; invalid UTF-8 becomes U+FFFD.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return append(b, '"')
}

// alignment is one alignment object, kept in reused buffers: the
// characters back to back in chars (character i is chars[ends[i-1]:ends[i]]),
// their start times and durations in milliseconds, relative to the chunk.
type alignment struct {
	present bool
	chars   []byte
	ends    []int
	starts  []int
	durs    []int
}

func (a *alignment) reset() {
	a.present = false
	a.chars, a.ends, a.starts, a.durs = a.chars[:0], a.ends[:0], a.starts[:0], a.durs[:0]
}

// char is character i.
func (a *alignment) char(i int) []byte {
	from := 0
	if i > 0 {
		from = a.ends[i-1]
	}
	return a.chars[from:a.ends[i]]
}

// message is what the adapter reads of one inbound message. One is reused
// per session (the reader goroutine's): decoding allocates nothing once
// its buffers have grown.
type message struct {
	sc jsonscan.Scanner

	contextID []byte // copied out of the scanner
	hasAudio  bool
	audio     []byte // decoded PCM bytes
	final     bool
	errCode   []byte // the "error" member of an error message
	isError   bool
	badTime   bool // a time at or over maxMs
	align     alignment
	normAlign alignment
}

// aligned is the alignment to build words from: the original text's, else
// the normalized text's; nil when the message has none.
func (m *message) aligned() *alignment {
	if m.align.present {
		return &m.align
	}
	if m.normAlign.present {
		return &m.normAlign
	}
	return nil
}

// decode reads one text message into m. Malformed JSON, a value of the
// wrong type, bad base64, alignment arrays of different lengths and an
// error message are *providers.Protocol; the detail never quotes the
// message (it holds the spoken text).
func (m *message) decode(data []byte) error {
	m.contextID, m.hasAudio, m.audio, m.final = m.contextID[:0], false, m.audio[:0], false
	m.errCode, m.isError, m.badTime = m.errCode[:0], false, false
	m.align.reset()
	m.normAlign.reset()
	sc := &m.sc
	sc.Reset(data)
	if sc.Peek() != '{' {
		return &providers.Protocol{Detail: fmt.Sprintf("message is not a JSON object (%d bytes)", len(data))}
	}
	bad := ""
	sc.Object()
	for sc.More() {
		switch string(sc.Key()) {
		case "audio":
			m.hasAudio, m.audio = false, m.audio[:0]
			if sc.Null() {
				continue
			}
			b64 := sc.StrBytes()
			if sc.Err() != nil {
				break
			}
			m.hasAudio = true
			n := base64.StdEncoding.DecodedLen(len(b64))
			if cap(m.audio) < n {
				m.audio = make([]byte, n)
			}
			got, err := base64.StdEncoding.Decode(m.audio[:n], b64)
			if err != nil {
				bad = "audio is not base64"
			}
			m.audio = m.audio[:got]
		case "isFinal":
			m.final = sc.Bool()
		case "contextId":
			m.contextID = append(m.contextID[:0], sc.StrBytes()...) // the last of duplicates wins
		case "alignment":
			if !m.readAlignment(&m.align) && bad == "" {
				bad = "alignment arrays differ in length"
			}
		case "normalizedAlignment":
			if !m.readAlignment(&m.normAlign) && bad == "" {
				bad = "normalizedAlignment arrays differ in length"
			}
		case "error":
			m.isError = true
			if sc.Peek() == '"' {
				m.errCode = append(m.errCode, clipBytes(sc.StrBytes(), 64)...)
			} else {
				sc.Skip()
			}
		default:
			sc.Skip()
		}
	}
	if err := sc.Done(); err != nil {
		return &providers.Protocol{Detail: "malformed message: " + err.Error()}
	}
	if bad == "" && m.badTime {
		bad = "alignment time out of range"
	}
	if bad != "" {
		return &providers.Protocol{Detail: bad}
	}
	if m.isError {
		return &providers.Protocol{Detail: "error message from the service: " + string(m.errCode)}
	}
	return nil
}

// readAlignment reads an alignment object or null into a; false when its
// arrays differ in length (a JSON error sticks in the scanner instead).
func (m *message) readAlignment(a *alignment) bool {
	sc := &m.sc
	a.reset() // the last of duplicates wins
	if sc.Null() {
		return true
	}
	a.present = true
	sc.Object()
	for sc.More() {
		switch string(sc.Key()) {
		case "chars":
			a.chars, a.ends = a.chars[:0], a.ends[:0]
			if sc.Null() {
				continue
			}
			sc.Array()
			for sc.More() {
				a.chars = append(a.chars, sc.StrBytes()...)
				a.ends = append(a.ends, len(a.chars))
			}
		case "charStartTimesMs":
			a.starts = m.readMsArray(a.starts[:0])
		case "charDurationsMs":
			a.durs = m.readMsArray(a.durs[:0])
		default:
			sc.Skip()
		}
	}
	return len(a.ends) == len(a.starts) && (len(a.durs) == 0 || len(a.durs) == len(a.ends))
}

func (m *message) readMsArray(dst []int) []int {
	sc := &m.sc
	if sc.Null() {
		return dst
	}
	sc.Array()
	for sc.More() {
		dst = append(dst, m.readMs())
	}
	return dst
}

// maxMs bounds a time in an alignment (about 11 days): more is an error,
// so that sums of them cannot overflow.
const maxMs = 1e9

// readMs reads a time in milliseconds: an integer, as the service sends,
// or a number with a fraction (rounded) or an exponent. Negative times
// read as 0.
func (m *message) readMs() int {
	sc := &m.sc
	c := sc.Peek()
	if c != '-' && (c < '0' || c > '9') {
		return sc.Int() // null reads as 0, anything else fails
	}
	raw := sc.Raw()
	if raw == nil {
		return 0
	}
	v, ok := parseMs(raw)
	if !ok {
		// Exponents and huge values: rare, so the allocation is fine.
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil || f >= maxMs {
			m.badTime = true
			return 0
		}
		v = int(f + 0.5)
	}
	return max(v, 0)
}

// parseMs parses -?digits(.digits)? rounded to an integer; false for an
// exponent or a value at or over maxMs.
func parseMs(b []byte) (int, bool) {
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg, b = true, b[1:]
	}
	v, i := 0, 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		v = v*10 + int(b[i]-'0')
		if v >= maxMs {
			return 0, false
		}
	}
	if i < len(b) && b[i] == '.' {
		if i+1 < len(b) && b[i+1] >= '5' && b[i+1] <= '9' {
			v++
		}
		for i++; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		}
	}
	if i != len(b) {
		return 0, false
	}
	if neg {
		return 0, true
	}
	return v, true
}

func clipBytes(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
