package rules

import (
	"fmt"
	"strconv"
	"strings"
)

// clock is a time of day, 24 h.
type clock struct{ h, m int }

// String is the HH:MM form book_table takes.
func (c clock) String() string { return fmt.Sprintf("%02d:%02d", c.h, c.m) }

// parseHHMM reads "19:30" (one or two digits of hour).
func parseHHMM(s string) (clock, bool) {
	hs, ms, ok := strings.Cut(s, ":")
	if !ok || len(hs) < 1 || len(hs) > 2 || len(ms) != 2 || !isDigits(hs) || !isDigits(ms) {
		return clock{}, false
	}
	h, _ := strconv.Atoi(hs)
	m, _ := strconv.Atoi(ms)
	if h > 23 || m > 59 {
		return clock{}, false
	}
	return clock{h, m}, true
}

// meridiems are the words that say the side of noon, in the order they
// are tried: +1 for the afternoon or evening, -1 for the morning.
var meridiems = []struct {
	words []string
	side  int
}{
	{[]string{"am"}, -1}, {[]string{"pm"}, 1}, {[]string{"tonight"}, 1},
	{[]string{"a", "m"}, -1}, {[]string{"p", "m"}, 1},
	{[]string{"in", "the", "morning"}, -1}, {[]string{"in", "the", "afternoon"}, 1}, {[]string{"in", "the", "evening"}, 1},
}

// namedTimes are the times said by a name.
var namedTimes = map[string]clock{"noon": {12, 0}, "midday": {12, 0}, "midnight": {0, 0}}

// meridiem reads one of meridiems at words[i] ("am", "p m", "in the
// evening", "tonight"): its side, 0 for none, and the words taken.
func meridiem(words []string, i int) (side, n int) {
	for _, m := range meridiems {
		if i+len(m.words) <= len(words) && equal(words[i:i+len(m.words)], m.words) {
			return m.side, len(m.words)
		}
	}
	return 0, 0
}

// timeAt reads a time of day at words[i]: "noon", "midnight", "half past
// seven", "quarter to eight", "twenty past seven", "19:30", or an hour
// with optional minutes ("seven", "seven thirty", "seven oh five"), each
// followed by an optional "o'clock" and an optional am/pm. A bare hour or
// hour and minutes count only when bare is set (after "at", or when the
// time was asked for); otherwise a marker (o'clock, am/pm) must follow. An
// hour without am/pm from 1 to 10 is taken as the afternoon or evening
// (a table for "seven" is at 19:00); 11, 12 and 13 to 23 as said.
func timeAt(words []string, i int, bare bool) (c clock, n int, ok bool) {
	if i >= len(words) {
		return clock{}, 0, false
	}
	if c, ok := namedTimes[words[i]]; ok {
		return c, 1, true
	}
	h, m, j := -1, 0, i
	marked := false
	switch {
	case (words[i] == "half" || words[i] == "quarter") && i+2 < len(words) && (words[i+1] == "past" || words[i+1] == "to"):
		hv, hn := number(words, i+2)
		if hn == 0 || hv < 1 || hv > 12 {
			return clock{}, 0, false
		}
		switch {
		case words[i] == "half" && words[i+1] == "past":
			h, m = hv, 30
		case words[i+1] == "past":
			h, m = hv, 15
		case words[i] == "quarter":
			h, m = hv-1, 45
			if h == 0 {
				h = 12
			}
		default: // "half to" is not a time
			return clock{}, 0, false
		}
		j, marked = i+2+hn, true
	case strings.Contains(words[i], ":"):
		hm, okc := parseHHMM(words[i])
		if !okc {
			return clock{}, 0, false
		}
		h, m, j, marked = hm.h, hm.m, i+1, true
	default:
		v, vn := number(words, i)
		if vn == 0 {
			return clock{}, 0, false
		}
		if j2 := i + vn; j2 < len(words) && words[j2] == "past" {
			// "twenty past seven"
			hv, hn := number(words, j2+1)
			if v >= 1 && v < 30 && hn > 0 && hv >= 1 && hv <= 12 {
				h, m, j, marked = hv, v, j2+1+hn, true
				break
			}
		}
		if v > 23 {
			return clock{}, 0, false
		}
		h, j = v, i+vn
		// Minutes: "oh five", or 10 to 59 ("thirty", "forty five").
		if j+1 < len(words) && (words[j] == "oh" || words[j] == "o") {
			if u, un := number(words, j+1); un == 1 && u >= 1 && u <= 9 {
				m, j = u, j+1+un
			}
		} else if mv, mn := number(words, j); mn > 0 && mv >= 10 && mv <= 59 {
			m, j = mv, j+mn
			if !bare {
				marked = true // "seven thirty" is a time, not a count
			}
		}
	}
	if j < len(words) && words[j] == "oclock" {
		j, marked = j+1, true
	} else if j+1 < len(words) && words[j] == "o" && words[j+1] == "clock" {
		j, marked = j+2, true
	}
	side, sn := meridiem(words, j)
	if sn > 0 {
		j, marked = j+sn, true
	}
	if !marked && !bare {
		return clock{}, 0, false
	}
	switch {
	case side < 0 && h == 12:
		h = 0
	case side < 0 && h > 12:
		return clock{}, 0, false
	case side > 0 && h < 12:
		h += 12
	case side == 0 && h >= 1 && h <= 10:
		h += 12
	}
	if h > 23 || m > 59 {
		return clock{}, 0, false
	}
	return clock{h, m}, j - i, true
}

// spoken says a time the way a TTS reads it well: "seven PM", "seven
// thirty PM", "seven oh five AM", "twelve PM" (noon).
func (c clock) spoken() string {
	h12, side := c.h%12, "AM"
	if h12 == 0 {
		h12 = 12
	}
	if c.h >= 12 {
		side = "PM"
	}
	var b strings.Builder
	b.WriteString(numberWords(h12))
	switch {
	case c.m == 0:
	case c.m < 10:
		b.WriteString(" oh ")
		b.WriteString(numberWords(c.m))
	default:
		b.WriteByte(' ')
		b.WriteString(numberWords(c.m))
	}
	b.WriteByte(' ')
	b.WriteString(side)
	return b.String()
}

var unitWords = [...]string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
	"ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"}

var tenWords = [...]string{"", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"}

// numberWords says 0 to 99 in words; other values in digits.
func numberWords(n int) string {
	switch {
	case n < 0 || n > 99:
		return strconv.Itoa(n)
	case n < 20:
		return unitWords[n]
	case n%10 == 0:
		return tenWords[n/10]
	}
	return tenWords[n/10] + " " + unitWords[n%10]
}

// spellOut says a reference letter by letter and digit by digit ("B-0001"
// -> "B zero zero zero one"), skipping everything else.
func spellOut(s string) string {
	var parts []string
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			parts = append(parts, unitWords[r-'0'])
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
			parts = append(parts, strings.ToUpper(string(r)))
		}
	}
	return strings.Join(parts, " ")
}
