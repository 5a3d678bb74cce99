package redact

import (
	"regexp"
	"strings"
)

// Email: an address as written (local@domain.tld, ASCII), or as a
// recognizer writes one spoken ("john dot smith at example dot com",
// ending in a common top-level domain).
var (
	emailRe       = regexp.MustCompile(`[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}`)
	spokenEmailRe = regexp.MustCompile(`(?i)\b[a-z0-9][a-z0-9._\-]*(?: dot [a-z0-9_\-]+)* at [a-z0-9\-]+(?: dot [a-z0-9\-]+)* dot (?:com|org|net|edu|gov|io|co|uk|de|fr|es|it|nl|ie|info|biz|me)\b`)
)

func redactEmail(s string) (string, int) {
	n, m := 0, 0
	if strings.IndexByte(s, '@') >= 0 {
		s, n = replaceAll(s, emailRe, "["+KindEmail+"]")
	}
	if containsFold(s, " at ") && containsFold(s, " dot ") {
		s, m = replaceAll(s, spokenEmailRe, "["+KindEmail+"]")
	}
	return s, n + m
}

// containsFold reports whether s contains word (lower-case ASCII),
// ignoring ASCII case, without allocating.
func containsFold(s, word string) bool {
	for i := 0; i+len(word) <= len(s); i++ {
		if s[i]|0x20 == word[0] && foldAt(s, i, word) {
			return true
		}
	}
	return false
}

// foldAt reports whether s holds word (lower-case ASCII) at i, ignoring
// ASCII case.
func foldAt(s string, i int, word string) bool {
	if i+len(word) > len(s) {
		return false
	}
	for j := 0; j < len(word); j++ {
		c := s[i+j]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != word[j] {
			return false
		}
	}
	return true
}
