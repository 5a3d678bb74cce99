package httpx

import (
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxExcerpt bounds the service's words quoted in an error.
const maxExcerpt = 200

// Excerpt makes a short, printable, key-free detail of an error body: the
// error.message of a JSON error body, else the text. The key, if the
// service echoes it, is redacted.
func Excerpt(body []byte, key string) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	s := string(body)
	if json.Unmarshal(body, &e) == nil && e.Error.Message != "" {
		s = e.Error.Message
	}
	if key != "" {
		s = strings.ReplaceAll(s, key, "[redacted]")
	}
	s = strings.Map(func(r rune) rune {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > maxExcerpt {
		cut := maxExcerpt
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
