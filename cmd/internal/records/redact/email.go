package redact

import (
	"regexp"
	"strings"
)

// Email: an address as written (local@domain.tld, ASCII: the local part
// of letters, digits and . _ % + -, the domain of two or more labels, the
// last one starting with two letters), or as a recognizer writes one
// spoken ("john dot smith at example dot com", ending in a common
// top-level domain).
var spokenEmailRe = regexp.MustCompile(`(?i)\b[a-z0-9][a-z0-9._\-]*(?: dot [a-z0-9_\-]+)* at [a-z0-9\-]+(?: dot [a-z0-9\-]+)* dot (?:com|org|net|edu|gov|io|co|uk|de|fr|es|it|nl|ie|info|biz|me)\b`)

func redactEmail(s string) (string, int) {
	n, m := 0, 0
	if strings.IndexByte(s, '@') >= 0 {
		s, n = redactWrittenEmail(s)
	}
	if containsFold(s, " at ") && containsFold(s, " dot ") {
		s, m = replaceAll(s, spokenEmailRe, "["+KindEmail+"]")
	}
	return s, n + m
}

// redactWrittenEmail finds addresses from each '@' outwards, in one pass
// (a regexp's local part, tried at every position, costs far more).
func redactWrittenEmail(s string) (string, int) {
	out := spans{s: s}
	last := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '@' {
			continue
		}
		l := i
		for l > last && isLocal(s[l-1]) {
			l--
		}
		if l == i {
			continue
		}
		end := domainEnd(s, i+1)
		if end < 0 {
			continue
		}
		out.replace(l, end, "["+KindEmail+"]")
		last = end
		i = end - 1
	}
	return out.result()
}

func isLocal(c byte) bool {
	return isAlnum(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-'
}

func isDomain(c byte) bool { return isAlnum(c) || c == '-' }

// domainEnd is the end of the domain starting at i: labels of letters,
// digits and '-' joined by single dots, at least two, the match ending
// after the leading letters (two or more) of the last label that has
// them; -1 when there is none.
func domainEnd(s string, i int) int {
	best, labels := -1, 0
	for i < len(s) {
		j := i
		for j < len(s) && isDomain(s[j]) {
			j++
		}
		if j == i {
			break
		}
		if labels > 0 {
			k := i
			for k < j && isLetter(s[k]) {
				k++
			}
			if k-i >= 2 {
				best = k
			}
		}
		labels++
		if j+1 >= len(s) || s[j] != '.' {
			break
		}
		i = j + 1
	}
	return best
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
