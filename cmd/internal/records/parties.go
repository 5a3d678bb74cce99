package records

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// normaliseNumber strips what people write between a number's digits
// (spaces, dashes, dots, parentheses), so "+44 20 7946 0000" and
// "+442079460000" are one number. A leading + is kept; a SIP user part
// that is not a number ("alice") only loses those characters too.
func normaliseNumber(n string) string {
	n = strings.TrimSpace(n)
	if !strings.ContainsAny(n, " -.()\t") {
		return n
	}
	var b strings.Builder
	b.Grow(len(n))
	for _, r := range n {
		switch r {
		case ' ', '-', '.', '(', ')', '\t':
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// hashNumber is hex(HMAC-SHA256(key, the normalised number)); "" for an
// unknown number or without a key.
func hashNumber(key []byte, n string) string {
	n = normaliseNumber(n)
	if n == "" || len(key) == 0 {
		return ""
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(n))
	return hex.EncodeToString(m.Sum(nil))
}

// party is a number as the policy keeps it.
func party(p NumberPolicy, key []byte, n string) Party {
	switch p {
	case NumbersKeep:
		return Party{Number: normaliseNumber(n), Hash: hashNumber(key, n)}
	case NumbersHash:
		return Party{Hash: hashNumber(key, n)}
	}
	return Party{}
}

// HashNumber is the hash a record keeps of number n (Party.Hash), for
// finding and erasing a caller's records by their number. It is "" when
// the service has no key (numbers policy drop without one).
func (s *Service) HashNumber(n string) string {
	return hashNumber(s.cfg.NumberKey, n)
}
