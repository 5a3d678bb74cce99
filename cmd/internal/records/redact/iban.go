package redact

// IBAN: two letters (the country), two check digits (02 to 98), then
// letters and digits, 15 to 34 in all, valid by ISO 13616's mod-97
// check; written as one word or in groups of four separated by single
// spaces (the last group 1 to 4), in either case. Groups are taken only
// while the whole stays valid, so a following word is not swallowed.
func redactIBAN(s string) (string, int) {
	out := spans{s: s}
	var buf [34]byte
	for i := 0; i+4 <= len(s); i++ {
		if !isLetter(s[i]) || !isLetter(s[i+1]) || !isDigit(s[i+2]) || !isDigit(s[i+3]) || wordBefore(s, i) {
			continue
		}
		word := i
		for word < len(s) && isAlnum(s[word]) {
			word++
		}
		if l := word - i; l >= 15 && l <= 34 {
			if ibanValid(s[i:word]) {
				out.replace(i, word, "["+KindIBAN+"]")
				i = word - 1
			}
			continue
		}
		if word-i != 4 {
			i = word - 1
			continue
		}
		// Grouped: "GB82 WEST 1234 5698 7654 32".
		compact := append(buf[:0], s[i:word]...)
		best, end := -1, word
		for end < len(s) && s[end] == ' ' {
			g := end + 1
			for g < len(s) && isAlnum(s[g]) && g-end-1 < 5 {
				g++
			}
			l := g - end - 1
			if l == 0 || l > 4 || (g < len(s) && isAlnum(s[g])) || len(compact)+l > 34 {
				break
			}
			compact = append(compact, s[end+1:g]...)
			end = g
			if len(compact) >= 15 && ibanValid(compact) {
				best = end
			}
			if l < 4 {
				break
			}
		}
		if best > 0 {
			out.replace(i, best, "["+KindIBAN+"]")
			i = best - 1
		}
	}
	r, n := out.result()
	return r, n
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isAlnum(c byte) bool  { return isLetter(c) || isDigit(c) }

// ibanValid runs the mod-97 check: the first four characters moved to
// the end, letters as 10 to 35, the number mod 97 is 1.
func ibanValid[T string | []byte](iban T) bool {
	if len(iban) < 15 || len(iban) > 34 {
		return false
	}
	check := int(iban[2]-'0')*10 + int(iban[3]-'0')
	if check < 2 || check > 98 {
		return false
	}
	rem := 0
	digit := func(c byte) bool {
		switch {
		case isDigit(c):
			rem = (rem*10 + int(c-'0')) % 97
		case isLetter(c):
			v := int(c|0x20-'a') + 10
			rem = (rem*100 + v) % 97
		default:
			return false
		}
		return true
	}
	for k := 4; k < len(iban); k++ {
		if !digit(iban[k]) {
			return false
		}
	}
	for k := 0; k < 4; k++ {
		if !digit(iban[k]) {
			return false
		}
	}
	return rem == 1
}
