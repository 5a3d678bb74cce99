package stock

import (
	"fmt"
	"strings"
)

// MaxDestinationBytes bounds a transfer destination (the schema's
// maxLength).
const MaxDestinationBytes = 256

// minPrefixDigits is the fewest digits a number prefix pattern may hold
// before its '*': "+1*" would be all of North America and its premium
// numbers, a toll-fraud hole rather than a destination.
const minPrefixDigits = 4

// Allowlist is the set of destinations transfer_call may reach. Its
// grammar (docs/TOOLS.md):
//
//   - a number: '+', a digit 1-9, then digits, 2 to 15 digits in all
//     (E.164), matched exactly; spaces, '-', '.', '(' and ')' between the
//     digits are ignored ("+33 1 23 45 67 89");
//   - a number prefix: the same ending in '*', with at least 4 digits
//     before it ("+4420*");
//   - a SIP URI "sip:user@host" or "sips:user@host", host with an optional
//     port, no parameters or headers; the user part may be '*' (any user of
//     that host) or end in '*' (a user prefix: "sip:sales-*@pbx.example").
//     No '*' anywhere else: a host wildcard would reach any machine.
//
// A destination matches after Normalize. An Allowlist is read-only once
// made: it is shared by every call of the agent.
type Allowlist struct {
	pats []pattern
	src  []string
}

// pattern is one parsed allowlist entry: norm is the normalised text
// without its '*'; prefix says a '*' ended the number or the user part.
type pattern struct {
	number bool
	scheme string // "sip" or "sips" for a URI
	user   string // user part without '*' ("" with prefix: any user)
	host   string // lowercased host[:port]
	norm   string // a number's digits with '+' (prefix: without '*')
	prefix bool
}

// NewAllowlist parses the entries; an error names the first bad one by
// index and wraps ErrAllowPattern.
func NewAllowlist(entries []string) (*Allowlist, error) {
	a := &Allowlist{}
	for i, e := range entries {
		p, err := parsePattern(e)
		if err != nil {
			return nil, fmt.Errorf("entry %d: %w", i, err)
		}
		a.pats = append(a.pats, p)
		a.src = append(a.src, e)
	}
	if len(a.pats) == 0 {
		return nil, fmt.Errorf("%w: the list is empty: nothing could be reached", ErrAllowPattern)
	}
	return a, nil
}

// CheckAllowPattern checks one allowlist entry (for `brisvox check`): nil
// or an error wrapping ErrAllowPattern, in fixed words.
func CheckAllowPattern(s string) error {
	_, err := parsePattern(s)
	return err
}

// Entries are the entries as written, in order.
func (a *Allowlist) Entries() []string { return append([]string(nil), a.src...) }

// Allows normalises dest and tells whether an entry matches it; the
// normalised destination is what is dialled (never the model's text, whose
// dropped parameters could redirect the call). An error (a hostile or
// malformed destination) wraps ErrBadDestination.
func (a *Allowlist) Allows(dest string) (norm string, ok bool, err error) {
	d, err := Normalize(dest)
	if err != nil {
		return "", false, err
	}
	for _, p := range a.pats {
		if p.matches(d) {
			return d.String(), true, nil
		}
	}
	return d.String(), false, nil
}

// Destination is a normalised destination: a number ("+33123456789") or
// a SIP URI's scheme, user and lowercased host[:port].
type Destination struct {
	Number             string
	Scheme, User, Host string
}

// String is the canonical form: the number, or scheme:user@host.
func (d Destination) String() string {
	if d.Number != "" {
		return d.Number
	}
	if d.User == "" {
		return d.Scheme + ":" + d.Host
	}
	return d.Scheme + ":" + d.User + "@" + d.Host
}

// Normalize reads a destination the model gave: an E.164 number or a
// sip:/sips: URI. The number keeps '+' and its digits; the URI loses its
// parameters and headers and its host is lowercased. CR, LF, NUL, any
// other control byte, spaces, quotes and angle brackets anywhere are
// refused (header injection), as are a password in the URI and more than
// MaxDestinationBytes. Errors wrap ErrBadDestination and never quote the
// destination.
func Normalize(dest string) (Destination, error) {
	if len(dest) > MaxDestinationBytes {
		return Destination{}, fmt.Errorf("%w: longer than %d bytes", ErrBadDestination, MaxDestinationBytes)
	}
	for i := 0; i < len(dest); i++ {
		if c := dest[i]; c < 0x21 || c == 0x7f || c == '"' || c == '<' || c == '>' || c >= 0x80 {
			return Destination{}, fmt.Errorf("%w: a control, space, quote, angle bracket or non-ASCII byte", ErrBadDestination)
		}
	}
	if strings.HasPrefix(dest, "+") {
		n, ok := number(dest, false)
		if !ok {
			return Destination{}, fmt.Errorf("%w: not an E.164 number (+ then 2 to 15 digits)", ErrBadDestination)
		}
		return Destination{Number: n}, nil
	}
	scheme, user, host, err := splitURI(dest, false)
	if err != nil {
		return Destination{}, fmt.Errorf("%w: %v", ErrBadDestination, err)
	}
	return Destination{Scheme: scheme, User: user, Host: host}, nil
}

// number reads an E.164 number, separators dropped; with prefix a
// trailing '*' is allowed (and removed).
func number(s string, prefix bool) (string, bool) {
	var b strings.Builder
	b.WriteByte('+')
	digits := 0
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			if digits == 0 && c == '0' {
				return "", false
			}
			digits++
			b.WriteByte(c)
		case c == ' ' || c == '-' || c == '.' || c == '(' || c == ')':
			if !prefix {
				return "", false // a destination is written plainly
			}
		default:
			return "", false
		}
	}
	return b.String(), digits >= 2 && digits <= 15
}

// splitURI splits "sip:user@host[:port][;params][?headers]". In a
// pattern '*' may end the user part.
func splitURI(s string, pat bool) (scheme, user, host string, err error) {
	colon := strings.IndexByte(s, ':')
	if colon < 0 {
		return "", "", "", fmt.Errorf("neither a number (+...) nor a sip: or sips: URI")
	}
	scheme = strings.ToLower(s[:colon])
	if scheme != "sip" && scheme != "sips" {
		return "", "", "", fmt.Errorf("neither a number (+...) nor a sip: or sips: URI")
	}
	rest := s[colon+1:]
	if at := strings.IndexByte(rest, '@'); at >= 0 {
		user, rest = rest[:at], rest[at+1:]
		if user == "" {
			return "", "", "", fmt.Errorf("an empty user part")
		}
		if strings.ContainsAny(user, ":@;?") {
			return "", "", "", fmt.Errorf("a user part with ':', '@', ';' or '?' (a password, or a second address)")
		}
	}
	if i := strings.IndexAny(rest, ";?"); i >= 0 {
		if pat {
			return "", "", "", fmt.Errorf("parameters or headers in a pattern (they are ignored in a destination)")
		}
		rest = rest[:i]
	}
	host = strings.ToLower(rest)
	if !validHost(host) {
		return "", "", "", fmt.Errorf("not a host[:port]")
	}
	return scheme, user, host, nil
}

// validHost accepts a name or IPv4 address, or a bracketed IPv6 address,
// with an optional port.
func validHost(h string) bool {
	if h == "" {
		return false
	}
	name := h
	if strings.HasPrefix(h, "[") {
		end := strings.IndexByte(h, ']')
		if end < 0 {
			return false
		}
		for _, c := range h[1:end] {
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c == ':' || c == '.') {
				return false
			}
		}
		if end == 1 {
			return false
		}
		name = ""
		h = h[end+1:]
		if h != "" && h[0] != ':' {
			return false
		}
	} else if i := strings.IndexByte(h, ':'); i >= 0 {
		name, h = h[:i], h[i:]
	} else {
		h = ""
	}
	if name != "" || !strings.HasPrefix(h, ":") && h != "" {
		if name == "" || name[0] == '.' || name[0] == '-' || strings.Contains(name, "..") {
			return false
		}
		for _, c := range name {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
				return false
			}
		}
	}
	if strings.HasPrefix(h, ":") {
		port := h[1:]
		if port == "" || len(port) > 5 {
			return false
		}
		n := 0
		for _, c := range port {
			if c < '0' || c > '9' {
				return false
			}
			n = n*10 + int(c-'0')
		}
		if n == 0 || n > 65535 {
			return false
		}
	}
	return true
}

// parsePattern reads one allowlist entry.
func parsePattern(s string) (pattern, error) {
	if strings.TrimSpace(s) == "" {
		return pattern{}, fmt.Errorf("%w: empty", ErrAllowPattern)
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c == '"' || c == '<' || c == '>' || c >= 0x80 {
			return pattern{}, fmt.Errorf("%w: a control, quote, angle bracket or non-ASCII byte at byte %d", ErrAllowPattern, i)
		}
	}
	if strings.HasPrefix(s, "+") {
		body, prefix := strings.CutSuffix(s, "*")
		if strings.Contains(body, "*") {
			return pattern{}, fmt.Errorf("%w: '*' only at the end of a number", ErrAllowPattern)
		}
		n, ok := number(body, true)
		if prefix {
			digits := len(n) - 1
			switch {
			case n == "":
				return pattern{}, fmt.Errorf("%w: not an E.164 number prefix (+, a digit 1-9, digits, then '*')", ErrAllowPattern)
			case digits < minPrefixDigits:
				return pattern{}, fmt.Errorf("%w: a number prefix needs at least %d digits before '*' (fewer reach a whole country or more)", ErrAllowPattern, minPrefixDigits)
			case digits > 14:
				return pattern{}, fmt.Errorf("%w: a number prefix of more than 14 digits (E.164 numbers have at most 15)", ErrAllowPattern)
			}
			return pattern{number: true, norm: n, prefix: true}, nil
		}
		if !ok {
			return pattern{}, fmt.Errorf("%w: not an E.164 number (+, a digit 1-9, 2 to 15 digits in all)", ErrAllowPattern)
		}
		return pattern{number: true, norm: n}, nil
	}
	if strings.ContainsAny(s, " \t") {
		return pattern{}, fmt.Errorf("%w: a space in a URI", ErrAllowPattern)
	}
	scheme, user, host, err := splitURI(s, true)
	if err != nil {
		if !strings.Contains(s, ":") {
			return pattern{}, fmt.Errorf("%w: neither a number (+...) nor a sip: or sips: URI", ErrAllowPattern)
		}
		return pattern{}, fmt.Errorf("%w: %v", ErrAllowPattern, err)
	}
	if strings.Contains(host, "*") {
		return pattern{}, fmt.Errorf("%w: '*' in the host (only the user part may hold one)", ErrAllowPattern)
	}
	p := pattern{scheme: scheme, host: host}
	body, prefix := strings.CutSuffix(user, "*")
	if strings.Contains(body, "*") {
		return pattern{}, fmt.Errorf("%w: '*' only at the end of the user part", ErrAllowPattern)
	}
	p.user, p.prefix = body, prefix
	return p, nil
}

// matches tells whether the normalised d is in p.
func (p pattern) matches(d Destination) bool {
	if p.number {
		if d.Number == "" {
			return false
		}
		if p.prefix {
			return strings.HasPrefix(d.Number, p.norm) && len(d.Number) > len(p.norm)
		}
		return d.Number == p.norm
	}
	if d.Number != "" || d.Scheme != p.scheme || d.Host != p.host {
		return false
	}
	if p.prefix {
		return d.User != "" && strings.HasPrefix(d.User, p.user)
	}
	return d.User == p.user
}
