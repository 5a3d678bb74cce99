package redact

// Spoken digits: a recognizer that writes what it hears as words (the
// local pocketsphinx model does: "zero seven seven zero zero nine ...")
// turns a number said digit by digit into a run of digit words. A run of
// the words zero, oh, nought, one to nine, with "double" and "triple"
// repeating the next one, and digit groups written as numerals, joined by
// spaces, commas, dots or '-' (up to 3 of them), is redacted whole when it
// has 8 digits or more: as a card when 13 to 19 of its digits in a row
// are Luhn-valid, else as a phone number ("plus" before it is taken with
// it). A number said digit by digit that long is an identifier (phone,
// card, account, member number), and a run may have taken in a digit
// word said just before the number, so its length is not a test. Any other word ends a run, so
// "seven thirty", "two hundred" or "one or two" never make one, and a
// unit right after a tens word ("fifty one") is not a digit.

// word is one token of s: letters or digits.
type word struct {
	start, end int
	digits     string // what it says as digits; "" for no digit word
	repeat     int    // double: 2, triple: 3
}

func redactSpokenDigits(s string, card, phone bool) (string, int, int) {
	out := spans{s: s}
	nc, np := 0, 0
	var runBuf [24]word
	run := runBuf[:0]
	var buf [64]byte
	flush := func() {
		for len(run) > 0 && run[len(run)-1].repeat > 0 {
			run = run[:len(run)-1] // a trailing "double" is not part of it
		}
		if len(run) == 0 {
			return
		}
		digits := buf[:0]
		words := 0
		for k := 0; k < len(run); k++ {
			w := run[k]
			if w.repeat > 0 {
				continue
			}
			n := 1
			if k > 0 && run[k-1].repeat > 0 {
				n = run[k-1].repeat
			}
			for range n {
				digits = append(digits, w.digits...)
			}
			if s[w.start] > '9' {
				words++
			}
		}
		start, end := run[0].start, run[len(run)-1].end
		run = run[:0]
		if words == 0 {
			return // numerals only: the digit runs' rules had them
		}
		n := len(digits)
		switch {
		case card && luhnWindow(digits):
			out.replace(start, end, "["+KindCard+"]")
			nc++
		case phone && n >= 8:
			if p := plusBefore(s, start); p >= 0 {
				start = p
			}
			out.replace(start, end, "["+KindPhone+"]")
			np++
		}
	}
	prevEnd, compound := 0, false
	for i := 0; i < len(s); {
		if !isAlnum(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isAlnum(s[j]) {
			j++
		}
		w, ok := digitWord(s[i:j])
		w.start, w.end = i, j
		// A token glued to a non-ASCII letter is part of another word;
		// the units of a compound number ("fifty one") are not digits.
		gap := s[prevEnd:i]
		ok = ok && (j == len(s) || s[j] < 0x80) && (i == 0 || s[i-1] < 0x80) &&
			!(compound && (gap == " " || gap == "-"))
		compound = isTensWord(s[i:j])
		prevEnd, i = j, j
		switch {
		case !ok:
			flush()
			continue
		case len(run) > 0 && !(len(gap) <= maxSep && onlyRunSeps(gap)):
			flush()
		case w.repeat > 0 && len(run) > 0 && run[len(run)-1].repeat > 0:
			flush() // "double double"
		}
		run = append(run, w)
	}
	flush()
	r, _ := out.result()
	return r, nc, np
}

// isTensWord: a word a unit word after it makes a compound number of.
func isTensWord(tok string) bool {
	for _, w := range []string{"twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety", "hundred", "thousand"} {
		if len(tok) == len(w) && foldAt(tok, 0, w) {
			return true
		}
	}
	return false
}

func onlyRunSeps(gap string) bool {
	for i := 0; i < len(gap); i++ {
		switch gap[i] {
		case ' ', ',', '.', '-':
		default:
			return false
		}
	}
	return gap != ""
}

// digitWord reads one token: a digit word, double/triple, or numerals.
func digitWord(tok string) (word, bool) {
	if isDigit(tok[0]) {
		for i := 1; i < len(tok); i++ {
			if !isDigit(tok[i]) {
				return word{}, false
			}
		}
		return word{digits: tok}, true
	}
	if len(tok) > 6 {
		return word{}, false
	}
	var low [6]byte
	for i := 0; i < len(tok); i++ {
		low[i] = tok[i] | 0x20
		if !isLetter(tok[i]) {
			return word{}, false
		}
	}
	var d string
	switch string(low[:len(tok)]) {
	case "double":
		return word{repeat: 2}, true
	case "triple":
		return word{repeat: 3}, true
	case "zero", "oh", "nought":
		d = "0"
	case "one":
		d = "1"
	case "two":
		d = "2"
	case "three":
		d = "3"
	case "four":
		d = "4"
	case "five":
		d = "5"
	case "six":
		d = "6"
	case "seven":
		d = "7"
	case "eight":
		d = "8"
	case "nine":
		d = "9"
	default:
		return word{}, false
	}
	return word{digits: d}, true
}

func plusBefore(s string, i int) int {
	j := i
	for j > 0 && s[j-1] == ' ' {
		j--
	}
	if j >= 4 && foldAt(s, j-4, "plus") && (j == 4 || !isAlnum(s[j-5])) {
		return j - 4
	}
	return -1
}

// luhnWindow reports whether 13 to 19 digits of d in a row are
// Luhn-valid (the whole run first).
func luhnWindow(d []byte) bool {
	for l := min(len(d), 19); l >= 13; l-- {
		for i := 0; i+l <= len(d); i++ {
			if luhnOf(d[i : i+l]) {
				return true
			}
		}
	}
	return false
}

func luhnOf(d []byte) bool {
	sum, double := 0, false
	for i := len(d) - 1; i >= 0; i-- {
		v := int(d[i] - '0')
		if double {
			v *= 2
			if v > 9 {
				v -= 9
			}
		}
		sum += v
		double = !double
	}
	return sum%10 == 0
}
