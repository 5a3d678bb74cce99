package redact

import "regexp"

// Date of birth: a date in a common written form whose start is at most
// dobAfter bytes after the end of a birth word, or whose end is at most
// dobBefore bytes before the start of one, with no sentence end (". ",
// "! ", "? ", a newline) between them. Birth words (any case): born,
// birth, birthday(s), birthdate(s), date of birth, DOB, D.O.B. Date forms:
// 12/05/1980, 12-05-80, 12.05.1980, 12 05 1980 (day and month either
// way round), 1980-05-12, 12 May 1980, 12th of May, 1980, May 12th,
// May 12, 1980, May 1980 (month names in full or abbreviated). Not a
// year alone ("born in 1980"), and not dates in words ("the twelfth of
// May"). A date far from a birth word (a booking, a delivery) is kept.
const (
	dobAfter  = 40
	dobBefore = 30
)

var (
	birthRe = regexp.MustCompile(`(?i)\bborn\b|\bbirth(?:day|date)?s?\b|\bd\.o\.b\b\.?|\bdob\b`)
	dateRe  = regexp.MustCompile(func() string {
		day := `(?:3[01]|[12][0-9]|0?[1-9])`
		ord := day + `(?:st|nd|rd|th)?`
		month := `(?:1[0-2]|0?[1-9])`
		y4 := `(?:19|20)[0-9]{2}`
		mon := `(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b\.?`
		return `(?i)\b(?:` +
			y4 + `[-/.]` + month + `[-/.]` + day + `\b` + // 1980-05-12
			`|` + day + `[-/.]` + day + `[-/.](?:[0-9]{4}|[0-9]{2})\b` + // 12/05/1980
			`|` + day + ` ` + day + ` ` + y4 + `\b` + // 12 05 1980
			`|` + ord + `(?:\s+of)?\s+` + mon + `(?:,?\s+` + y4 + `\b)?` + // 12th of May, 1980
			`|` + mon + `\s+` + ord + `\b(?:,?\s+` + y4 + `\b)?` + // May 12th, 1980
			`|` + mon + `,?\s+` + y4 + `\b` + // May 1980
			`)`
	}())
)

func redactDOB(s string) (string, int) {
	if !hasBirthWord(s) {
		return s, 0
	}
	words := birthRe.FindAllStringIndex(s, -1)
	if len(words) == 0 {
		return s, 0
	}
	out := spans{s: s}
	k := 0 // words[k] is the first birth word not ending before the date
	for _, d := range dateRe.FindAllStringIndex(s, -1) {
		for k < len(words) && words[k][1] <= d[0] {
			k++
		}
		// The nearest word before the date (words[k-1]) and after it
		// (the first starting at or past its end): both ordered.
		after := k > 0 && d[0]-words[k-1][1] <= dobAfter && !sentenceEnd(s[words[k-1][1]:d[0]])
		n := k
		for n < len(words) && words[n][0] < d[1] {
			n++
		}
		before := n < len(words) && words[n][0]-d[1] <= dobBefore && !sentenceEnd(s[d[1]:words[n][0]])
		if after || before {
			out.replace(d[0], d[1], "["+KindDOB+"]")
		}
	}
	return out.result()
}

func sentenceEnd(gap string) bool {
	for i := 0; i < len(gap); i++ {
		switch gap[i] {
		case '\n':
			return true
		case '.', '!', '?':
			if i+1 < len(gap) && gap[i+1] == ' ' {
				return true
			}
		}
	}
	return false
}

// hasBirthWord is birthRe's cheap pre-check: one pass for the words'
// letters, no regexp.
func hasBirthWord(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] | 0x20 {
		case 'b':
			if foldAt(s, i, "born") || foldAt(s, i, "birth") {
				return true
			}
		case 'd':
			if foldAt(s, i, "dob") || foldAt(s, i, "d.o.b") {
				return true
			}
		}
	}
	return false
}
