package trunk

import "bytes"

// DefaultScanners returns the User-Agent words of known SIP scanners and
// attack tools, always in force: sipvicious' svmap, svwar and svcrack
// send "friendly-scanner" (their default, checked in sipvicious 0.3.3;
// svmap has no option to change it, though its compact mode, -c, sends
// no User-Agent at all); the others are the tools' own names.
func DefaultScanners() []string {
	return []string{
		"friendly-scanner", "sipvicious", "sipcli", "sip-scan", "SIPScan",
		"VaxSIPUserAgent", "iWar", "sundayddr", "SIVuS", "Gulp", "smap",
		"pplsip", "siparmyknife",
	}
}

// maxAgentScan bounds the User-Agent bytes one scan compares.
const maxAgentScan = 1024

// scanner finds scanner names in the User-Agent headers of raw messages.
type scanner struct {
	words [][]byte  // lower case
	first [256]bool // the first bytes of the words, in both cases
}

func newScanner(words []string) scanner {
	s := scanner{words: make([][]byte, 0, len(words))}
	for _, w := range words {
		b := []byte(w)
		for i, c := range b {
			b[i] = lower(c)
		}
		s.words = append(s.words, b)
		s.first[b[0]] = true
		if b[0] >= 'a' && b[0] <= 'z' {
			s.first[b[0]-'a'+'A'] = true
		}
	}
	return s
}

// scan walks the header sections of data: the one message of a
// datagram, or on a stream every message that starts in the chunk (a
// body is skipped by the message's Content-Length; without one the rest
// is taken for body). It reports how many messages start in data and
// whether a User-Agent value names a scanner. Bodies are never read.
func (s *scanner) scan(data []byte, stream bool) (msgs int, hit bool) {
	budget := maxAgentScan
	i := 0
	for i < len(data) {
		for i < len(data) && (data[i] == '\r' || data[i] == '\n') {
			i++ // keep-alives between messages
		}
		if i >= len(data) {
			break
		}
		msgs++
		i = lineEnd(data, i) // the start line
		length := -1
		for {
			if i >= len(data) {
				return msgs, hit
			}
			if data[i] == '\n' {
				i++
				break
			}
			if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
				i += 2
				break
			}
			end := headerEnd(data, i)
			name, value, ok := splitHeader(data[i:end])
			switch {
			case !ok:
			case equalFold(name, "user-agent"):
				n := min(len(value), budget)
				budget -= n
				if s.match(value[:n]) {
					return msgs, true
				}
			case stream && (equalFold(name, "content-length") || equalFold(name, "l")):
				length = parseLength(value)
			}
			i = end
		}
		if !stream || length < 0 || length > len(data)-i {
			break
		}
		i += length
	}
	return msgs, hit
}

// match reports whether v holds one of the words, case-insensitively and
// as a word: not inside a longer run of letters and digits.
func (s *scanner) match(v []byte) bool {
	for i := 0; i < len(v); i++ {
		if !s.first[v[i]] || (i > 0 && alnum(v[i-1])) {
			continue
		}
		c := lower(v[i])
		for _, w := range s.words {
			if w[0] != c || len(w) > len(v)-i {
				continue
			}
			if end := i + len(w); hasPrefixFold(v[i:], w) && (end == len(v) || !alnum(v[end])) {
				return true
			}
		}
	}
	return false
}

// lineEnd is the index after the line that starts at i (after its '\n',
// or len(data)).
func lineEnd(data []byte, i int) int {
	if j := bytes.IndexByte(data[i:], '\n'); j >= 0 {
		return i + j + 1
	}
	return len(data)
}

// headerEnd is the index after the header that starts at i, its folded
// continuation lines (starting with a space or a tab) included.
func headerEnd(data []byte, i int) int {
	for {
		i = lineEnd(data, i)
		if i >= len(data) || (data[i] != ' ' && data[i] != '\t') {
			return i
		}
	}
}

// splitHeader cuts one header into its name (without trailing white
// space) and its value (without leading white space).
func splitHeader(h []byte) (name, value []byte, ok bool) {
	for j, c := range h {
		if c == ':' {
			name = h[:j]
			for len(name) > 0 && (name[len(name)-1] == ' ' || name[len(name)-1] == '\t') {
				name = name[:len(name)-1]
			}
			value = h[j+1:]
			for len(value) > 0 && (value[0] == ' ' || value[0] == '\t') {
				value = value[1:]
			}
			return name, value, true
		}
		if c == '\n' {
			break
		}
	}
	return nil, nil, false
}

// parseLength reads a Content-Length value; -1 when it is not a number.
func parseLength(v []byte) int {
	n, digits := 0, 0
	for _, c := range v {
		switch {
		case c >= '0' && c <= '9':
			if digits > 9 {
				return -1
			}
			n = n*10 + int(c-'0')
			digits++
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			if digits > 0 {
				return n
			}
		default:
			return -1
		}
	}
	if digits == 0 {
		return -1
	}
	return n
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func alnum(c byte) bool {
	c = lower(c)
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
}

// equalFold compares b with the lower-case ASCII s, ignoring case.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		if lower(b[i]) != s[i] {
			return false
		}
	}
	return true
}

// hasPrefixFold reports whether v starts with the lower-case w, ignoring
// case.
func hasPrefixFold(v, w []byte) bool {
	if len(v) < len(w) {
		return false
	}
	for i := range w {
		if lower(v[i]) != w[i] {
			return false
		}
	}
	return true
}
