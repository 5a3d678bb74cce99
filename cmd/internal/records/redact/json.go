package redact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"unicode/utf8"
)

// JSON returns raw with every string value of every object and array
// redacted as String does (object keys are kept as they are) and every
// number written as a plain digit string that String would redact (a
// card or phone number sent as a JSON number) replaced by the string
// "[kind]". Malformed JSON is ErrMalformedJSON: the caller drops the
// field rather than keep it unredacted. Key order and the values'
// structure are kept; whitespace is not.
func (r *Redactor) JSON(raw []byte) ([]byte, map[string]int, error) {
	if !json.Valid(raw) {
		return nil, nil, fmt.Errorf("%w: the value does not parse as JSON", ErrMalformedJSON)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	type frame struct {
		object bool
		n      int // tokens so far: in an object, even is a key
	}
	var (
		c     counts
		stack []frame
		out   = make([]byte, 0, len(raw)+16)
	)
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %v", ErrMalformedJSON, err)
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			out = append(out, byte(d))
			continue
		}
		key := false
		if len(stack) > 0 {
			top := &stack[len(stack)-1]
			switch {
			case top.object && top.n%2 == 0:
				key = true
				if top.n > 0 {
					out = append(out, ',')
				}
			case top.object:
				out = append(out, ':')
			case top.n > 0:
				out = append(out, ',')
			}
			top.n++
		}
		switch v := tok.(type) {
		case json.Delim:
			out = append(out, byte(v))
			stack = append(stack, frame{object: v == '{'})
		case string:
			if !key {
				r.redact(&v, &c)
			}
			out = appendString(out, v)
		case json.Number:
			s := string(v)
			if allDigits(s) {
				red := s
				r.redact(&red, &c)
				if red != s {
					out = appendString(out, red)
					continue
				}
			}
			out = append(out, s...)
		case bool:
			if v {
				out = append(out, "true"...)
			} else {
				out = append(out, "false"...)
			}
		case nil:
			out = append(out, "null"...)
		}
	}
	return out, c, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return s != ""
}

const hex = "0123456789abcdef"

// appendString appends s as a JSON string (s is valid UTF-8: the decoder
// replaced invalid bytes, and replacements are ASCII).
func appendString(out []byte, s string) []byte {
	out = append(out, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, w := utf8.DecodeRuneInString(s[i:])
			if r == '\u2028' || r == '\u2029' {
				out = append(out, `\u202`...)
				out = append(out, hex[r&0xf])
			} else {
				out = append(out, s[i:i+w]...)
			}
			i += w
			continue
		}
		switch c {
		case '"', '\\':
			out = append(out, '\\', c)
		case '\n':
			out = append(out, '\\', 'n')
		case '\r':
			out = append(out, '\\', 'r')
		case '\t':
			out = append(out, '\\', 't')
		default:
			if c < 0x20 {
				out = append(out, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			} else {
				out = append(out, c)
			}
		}
		i++
	}
	return append(out, '"')
}
