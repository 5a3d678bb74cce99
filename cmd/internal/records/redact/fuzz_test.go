package redact

import (
	"strings"
	"testing"
)

// FuzzRedact plants a Luhn-valid card (written compact, in fours with
// spaces or dashes, as an Amex 4-6-5, or in digit words) and an email address, built from
// the fuzzed digits and name, between fuzzed text, and checks that the
// output holds neither, whatever the text around them (the planted items
// are separated from it by a space, as words are).
func FuzzRedact(f *testing.F) {
	f.Add("my card is", "thanks", "411111111111111", uint8(1), "jo", "then 07700 900123")
	f.Add("12 34", "56", "555555555555444", uint8(0), "a.b", "+44 (0) 20")
	f.Add("£", "th", "37828224631000", uint8(3), "x_y", "born 12/05/1980")
	f.Add("GB82", "WEST", "601100099013942", uint8(2), "z", "ACC-")
	f.Fuzz(func(t *testing.T, before, after, digits string, format uint8, name, tail string) {
		r := newRedactor(t, Config{})
		card := plantCard(digits, format)
		email := plantEmail(name)
		in := before + " " + card + " " + after + " " + email + " " + tail
		out, _ := r.String(in)
		if card != "" && strings.Contains(out, card) {
			t.Errorf("card %q left in %q (from %q)", card, out, in)
		}
		if strings.Contains(out, email) {
			t.Errorf("email %q left in %q (from %q)", email, out, in)
		}
		// The JSON path redacts the same string value.
		js := appendString(nil, in)
		red, _, err := r.JSON(js)
		if err != nil {
			t.Fatalf("JSON of a string: %v", err)
		}
		if card != "" && strings.Contains(string(red), card) {
			t.Errorf("JSON: card %q left in %s", card, red)
		}
	})
}

// plantCard makes a Luhn-valid number of 13 to 19 digits from the fuzzed
// digits (a check digit appended) and writes it in one of the formats.
func plantCard(digits string, format uint8) string {
	var d []byte
	for i := 0; i < len(digits) && len(d) < 18; i++ {
		d = append(d, '0'+digits[i]%10)
	}
	for len(d) < 12 {
		d = append(d, '4')
	}
	if format%4 == 3 {
		for len(d) < 14 {
			d = append(d, '3')
		}
		d = d[:14] // Amex: 15 digits with the check digit
	}
	d = append(d, luhnDigit(d))
	if format%8 == 4 { // said digit by digit, as a recognizer writes it
		names := []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"}
		var w []string
		for _, c := range d {
			w = append(w, names[c-'0'])
		}
		return strings.Join(w, " ")
	}
	switch format % 4 {
	case 1, 2:
		if len(d) != 16 {
			return string(d)
		}
		sep := " "
		if format%4 == 2 {
			sep = "-"
		}
		return string(d[0:4]) + sep + string(d[4:8]) + sep + string(d[8:12]) + sep + string(d[12:16])
	case 3:
		return string(d[0:4]) + " " + string(d[4:10]) + " " + string(d[10:15])
	}
	return string(d)
}

func luhnDigit(d []byte) byte {
	sum := 0
	for i := len(d) - 1; i >= 0; i-- {
		v := int(d[i] - '0')
		if (len(d)-1-i)%2 == 0 {
			v *= 2
			if v > 9 {
				v -= 9
			}
		}
		sum += v
	}
	return byte('0' + (10-sum%10)%10)
}

func plantEmail(name string) string {
	var b strings.Builder
	for i := 0; i < len(name) && b.Len() < 20; i++ {
		c := name[i]
		if isAlnum(c) || c == '.' || c == '_' {
			b.WriteByte(c)
		}
	}
	local := strings.Trim(b.String(), ".")
	if local == "" {
		local = "someone"
	}
	return local + "@example.com"
}
