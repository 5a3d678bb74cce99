package redact

import (
	"unicode"
	"unicode/utf8"
)

// A digit run is what card and phone numbers are found in: groups of
// ASCII digits joined by short separators (1 to 3 of space, '-', '.',
// '(' and ')'), optionally led by '+' or '('. A run does not start inside
// a word (a digit right after a letter: "BA2490", "A1234567"), and a last
// group glued to a letter ("2nd", "5th") is not part of it. ':' , '/' and
// ',' separate runs, so times (10:30), dates written with '/' and amounts
// with thousands commas are never one long run.

type group struct{ start, end int }

const maxSep = 3

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isSep(c byte) bool { return c == ' ' || c == '-' || c == '.' || c == '(' || c == ')' }

// wordBefore reports whether the rune ending at i is a letter or digit.
func wordBefore(s string, i int) bool {
	if i == 0 {
		return false
	}
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

func letterAt(s string, i int) bool {
	if i >= len(s) {
		return false
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return unicode.IsLetter(r)
}

// redactDigits replaces card numbers (when card) and phone numbers (when
// phone) and returns the counts of each.
func redactDigits(s string, card, phone bool) (string, int, int) {
	out := spans{s: s}
	var groups []group
	var stack [24]group
	nc, np := 0, 0
	for i := 0; i < len(s); {
		c := s[i]
		lead := i
		switch {
		case isDigit(c):
		case (c == '+' || c == '(') && i+1 < len(s) && isDigit(s[i+1]):
			i++
		case c == '+' && i+2 < len(s) && s[i+1] == '(' && isDigit(s[i+2]):
			i += 2
		default:
			i++
			continue
		}
		if wordBefore(s, lead) {
			// Inside a word: skip its digits and letters.
			for i < len(s) && (isDigit(s[i]) || letterAt(s, i)) {
				_, w := utf8.DecodeRuneInString(s[i:])
				i += w
			}
			continue
		}
		groups = stack[:0]
		j := i
		for {
			k := j
			for k < len(s) && isDigit(s[k]) {
				k++
			}
			groups = append(groups, group{j, k})
			m := k
			for m < len(s) && m-k < maxSep && isSep(s[m]) {
				m++
			}
			if m == k || m >= len(s) || !isDigit(s[m]) {
				j = k
				break
			}
			j = m
		}
		end := j
		if letterAt(s, end) {
			// "07700 900123 2nd": the glued group is a word, not digits.
			groups = groups[:len(groups)-1]
			for end < len(s) && (isDigit(s[end]) || letterAt(s, end)) {
				_, w := utf8.DecodeRuneInString(s[end:])
				end += w
			}
		}
		if len(groups) > 0 {
			c, p := classify(s, lead, groups, card, phone, &out)
			nc += c
			np += p
		}
		i = end
	}
	r, _ := out.result()
	return r, nc, np
}

// classify finds the cards of a run, then the phone numbers among the
// rest of it, and replaces them.
//
// Card: 13 to 19 digits joined by spaces or '-' only, Luhn-valid; the
// whole run, or a stretch of it grouped as cards are written (one group,
// or groups of 4 with a shorter last one, or 4-6-5 / 4-6-4).
//
// Phone: what is left between cards, as a whole: 8 to 15 digits (E.164's
// most), except a decimal (one '.'), a date (d-m-yyyy, yyyy-m-d with any
// separator), a year range (1990-2000), a US ZIP+4 (12345-6789), an IPv4
// address, or digits right after a currency sign (£ $ € ¥).
func classify(s string, lead int, g []group, card, phone bool, out *spans) (cards, phones int) {
	from := 0
	flush := func(to int) {
		if phone && to > from && isPhone(s, lead, g[from:to], from == 0) {
			start := g[from].start
			if from == 0 {
				start = lead
			}
			out.replace(start, g[to-1].end, "["+KindPhone+"]")
			phones++
		}
	}
	if card {
		for i := 0; i < len(g); i++ {
			// Past the whole run, a card starts with a group of 4 or is
			// one group of 13 to 19 (cardGrouping): skip other starts
			// before trying ends (a long run of single digits costs
			// one look per group, not 19 squared).
			if l := g[i].end - g[i].start; i > 0 && l != 4 && (l < 13 || l > 19) {
				continue
			}
			// A card has at most 19 digits, so at most 19 groups.
			jmax, n := i, 0
			for jmax < len(g) && n+g[jmax].end-g[jmax].start <= 19 {
				n += g[jmax].end - g[jmax].start
				jmax++
			}
			for j := jmax; j > i; j-- {
				if isCard(s, g[i:j], i == 0 && j == len(g)) {
					flush(i)
					out.replace(g[i].start, g[j-1].end, "["+KindCard+"]")
					cards++
					from = j
					i = j - 1
					break
				}
			}
		}
	}
	flush(len(g))
	return cards, phones
}

func digitsOf(g []group) int {
	n := 0
	for _, x := range g {
		n += x.end - x.start
	}
	return n
}

func isCard(s string, g []group, whole bool) bool {
	n := digitsOf(g)
	if n < 13 || n > 19 {
		return false
	}
	for k := 1; k < len(g); k++ {
		sep := s[g[k-1].end:g[k].start]
		if sep != " " && sep != "-" {
			return false
		}
	}
	if !whole && !cardGrouping(g) {
		return false
	}
	return luhn(s, g)
}

func cardGrouping(g []group) bool {
	if len(g) == 1 {
		return true
	}
	l := func(k int) int { return g[k].end - g[k].start }
	if len(g) == 3 && l(0) == 4 && l(1) == 6 && (l(2) == 5 || l(2) == 4) {
		return true
	}
	for k := 0; k < len(g)-1; k++ {
		if l(k) != 4 {
			return false
		}
	}
	return l(len(g)-1) <= 4
}

// luhn checks the Luhn digit of the digits of g.
func luhn(s string, g []group) bool {
	sum, double := 0, false
	for k := len(g) - 1; k >= 0; k-- {
		for i := g[k].end - 1; i >= g[k].start; i-- {
			d := int(s[i] - '0')
			if double {
				d *= 2
				if d > 9 {
					d -= 9
				}
			}
			sum += d
			double = !double
		}
	}
	return sum%10 == 0
}

func isPhone(s string, lead int, g []group, first bool) bool {
	n := digitsOf(g)
	if n < 8 || n > 15 {
		return false
	}
	plus := first && s[lead] == '+'
	if first && !plus && currencyBefore(s, lead) {
		return false
	}
	if plus {
		return true
	}
	l := func(k int) int { return g[k].end - g[k].start }
	sep := func(k int) string { return s[g[k-1].end:g[k].start] }
	val := func(k int) int {
		v := 0
		for i := g[k].start; i < g[k].end; i++ {
			v = v*10 + int(s[i]-'0')
		}
		return v
	}
	dots, others := 0, 0
	for k := 1; k < len(g); k++ {
		for _, c := range []byte(sep(k)) {
			if c == '.' {
				dots++
			} else if c != ' ' {
				others++
			}
		}
	}
	switch {
	case len(g) == 2 && dots == 1 && sep(1) == ".":
		return false // 1234567.50
	case len(g) == 3 && l(2) == 4 && l(0) <= 2 && l(1) <= 2 && val(0) >= 1 && val(0) <= 31 && val(1) >= 1 && val(1) <= 31:
		return false // 12.05.2024, 12-05-2024, 5 12 1980
	case len(g) == 3 && l(0) == 4 && l(1) <= 2 && l(2) <= 2 && val(1) >= 1 && val(1) <= 12 && val(2) >= 1 && val(2) <= 31:
		return false // 2024-05-12
	case len(g) == 2 && l(0) == 4 && l(1) == 4 && isYear(val(0)) && isYear(val(1)):
		return false // 1990-2000
	case len(g) == 2 && l(0) == 5 && l(1) == 4 && sep(1) == "-":
		return false // ZIP+4
	case len(g) == 4 && dots == 3 && others == 0 && l(0) <= 3 && l(1) <= 3 && l(2) <= 3 && l(3) <= 3:
		return false // 192.168.100.200
	}
	return true
}

func isYear(v int) bool { return v >= 1900 && v <= 2099 }

// currencyBefore reports a currency sign right before i (or before one
// space): "£12 500 000", "$ 10 000 000".
func currencyBefore(s string, i int) bool {
	if i > 0 && s[i-1] == ' ' {
		i--
	}
	if i == 0 {
		return false
	}
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	switch r {
	case '£', '$', '€', '¥', '₹':
		return true
	}
	return unicode.Is(unicode.Sc, r)
}
