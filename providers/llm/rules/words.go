package rules

import (
	"strconv"
	"strings"
	"unicode"
)

// normalize splits text into lower-case words: letters and digits are
// kept, apostrophes are dropped ("that's" -> "thats", "o'clock" ->
// "oclock"), a colon between two digits is kept ("7:30"), a run of digits
// and a run of letters are split ("7pm" -> "7", "pm"), and everything else
// separates words. Speech recognizers write no punctuation; typed text
// (and tests) may.
func normalize(text string) []string {
	var words []string
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			words = append(words, b.String())
			b.Reset()
		}
	}
	rs := []rune(text)
	prevDigit := false
	for i, r := range rs {
		switch {
		case r == '\'' || r == '\u2019':
			continue
		case r == ':' && prevDigit && i+1 < len(rs) && unicode.IsDigit(rs[i+1]):
			b.WriteRune(r)
			continue
		case unicode.IsDigit(r):
			if b.Len() > 0 && !prevDigit {
				flush()
			}
			b.WriteRune(r)
			prevDigit = true
			continue
		case unicode.IsLetter(r):
			if prevDigit {
				flush()
			}
			b.WriteRune(unicode.ToLower(r))
		default:
			flush()
		}
		prevDigit = false
	}
	flush()
	return words
}

// Words are the words the provider reads in text (normalize), with every
// number it reads, in words or digits, written as its digits ("forty
// five" -> "45", "eight" -> "8"): so "for 4" and "for four" are the same
// words. A measurement of a recognizer scores transcripts on them.
func Words(text string) []string {
	words := normalize(text)
	out := make([]string, 0, len(words))
	for i := 0; i < len(words); {
		if v, n := number(words, i); n > 0 {
			out = append(out, strconv.Itoa(v))
			i += n
			continue
		}
		out = append(out, words[i])
		i++
	}
	return out
}

// units are the number words below twenty.
var units = map[string]int{
	"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
	"seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
	"thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
	"seventeen": 17, "eighteen": 18, "nineteen": 19,
}

// tens are the number words of whole tens up to fifty.
var tens = map[string]int{"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50}

// number reads a number at words[i]: digits ("4", "19"), a number word
// ("four"), or a ten and a unit ("forty five"). It returns the value and
// how many words it took (0 for none). Digit runs longer than four are
// not numbers here.
func number(words []string, i int) (value, n int) {
	if i >= len(words) {
		return 0, 0
	}
	w := words[i]
	if isDigits(w) {
		if len(w) > 4 {
			return 0, 0
		}
		v, _ := strconv.Atoi(w)
		return v, 1
	}
	if v, ok := units[w]; ok {
		return v, 1
	}
	if v, ok := tens[w]; ok {
		if i+1 < len(words) {
			if u, ok := units[words[i+1]]; ok && u >= 1 && u <= 9 {
				return v + u, 2
			}
		}
		return v, 1
	}
	return 0, 0
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// has tells whether words hold w.
func has(words []string, w string) bool {
	for _, x := range words {
		if x == w {
			return true
		}
	}
	return false
}

// hasAny tells whether words hold one of ws.
func hasAny(words []string, ws ...string) bool {
	for _, w := range ws {
		if has(words, w) {
			return true
		}
	}
	return false
}

// hasPhrase tells whether words hold phrase (space-separated words) as a
// run.
func hasPhrase(words []string, phrase string) bool {
	p := strings.Fields(phrase)
	for i := 0; i+len(p) <= len(words); i++ {
		match := true
		for j := range p {
			if words[i+j] != p[j] {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// countWords estimates tokens: the runs of letters or digits in s.
func countWords(s string) int {
	n, in := 0, false
	for _, r := range s {
		w := unicode.IsLetter(r) || unicode.IsDigit(r)
		if w && !in {
			n++
		}
		in = w
	}
	return n
}
