package twilio

import (
	"unicode/utf8"
)

// parseMediaFast decodes the common media message,
//
//	{"event":"media","sequenceNumber":"3","media":{"track":"inbound","chunk":"1","timestamp":"5","payload":"..."},"streamSid":"MZ..."}
//
// in any key order and spacing, without encoding/json: at 50 messages a
// second per call, its reflection (about 5 us and 6 allocations a
// message) is the stream's largest cost. It accepts only objects of
// exactly these keys (spelled so) whose values are strings without
// escapes; anything else returns false and Parse takes the
// encoding/json path, so the two always agree (FuzzMessage checks it).
// m must have been reset.
func parseMediaFast(data []byte, m *Message) bool {
	s := scan{b: data}
	if !s.object(func(key []byte) bool {
		switch string(key) {
		case "event":
			return s.str(&m.EventName)
		case "sequenceNumber":
			return s.num(&m.SequenceNumber)
		case "streamSid":
			return s.str(&m.StreamSID)
		case "media":
			return s.object(func(key []byte) bool {
				switch string(key) {
				case "track":
					return s.str(&m.Media.Track)
				case "chunk":
					return s.num(&m.Media.Chunk)
				case "timestamp":
					return s.num(&m.Media.Timestamp)
				case "payload":
					return s.str(&m.Media.Payload)
				}
				return false
			})
		}
		return false
	}) {
		return false
	}
	s.space()
	return s.i == len(s.b) && string(m.EventName) == "media"
}

// scan is the fast path's cursor.
type scan struct {
	b []byte
	i int
}

func (s *scan) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scan) byte(c byte) bool {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// raw reads a string without escapes and returns its bytes.
func (s *scan) raw() ([]byte, bool) {
	if !s.byte('"') {
		return nil, false
	}
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			v := s.b[start:s.i]
			s.i++
			return v, utf8.Valid(v)
		case c == '\\' || c < 0x20:
			return nil, false
		}
		s.i++
	}
	return nil, false
}

func (s *scan) str(t *Text) bool {
	v, ok := s.raw()
	if ok {
		*t = append((*t)[:0], v...)
	}
	return ok
}

func (s *scan) num(n *Number) bool {
	v, ok := s.raw()
	if !ok {
		return false
	}
	u, err := parseUint(v)
	if err != nil {
		return false
	}
	*n = Number{V: u, Set: true}
	return true
}

// object reads {"key": value, ...}, calling field for each key with the
// cursor before the value; field reads the value.
func (s *scan) object(field func(key []byte) bool) bool {
	if !s.byte('{') {
		return false
	}
	if s.byte('}') {
		return true
	}
	for {
		key, ok := s.raw()
		if !ok || !s.byte(':') || !field(key) {
			return false
		}
		if s.byte(',') {
			continue
		}
		return s.byte('}')
	}
}
