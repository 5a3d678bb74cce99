package validate

import "strings"

// Byte-level grammar of RFC 3261 §25.1, written for parsed values
// (sipgo has removed the header's name, colon and outer whitespace).
// Nothing here allocates.

// isTokenByte: token = 1*(alphanum / "-" / "." / "!" / "%" / "*" / "_"
// / "+" / "`" / "'" / "~").
func isTokenByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '-', '.', '!', '%', '*', '_', '+', '`', '\'', '~':
		return true
	}
	return false
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isTokenByte(s[i]) {
			return false
		}
	}
	return true
}

// isWordByte: word = 1*(alphanum / "-" / "." / "!" / "%" / "*" / "_" /
// "+" / "`" / "'" / "~" / "(" / ")" / "<" / ">" / ":" / "\" / DQUOTE /
// "/" / "[" / "]" / "?" / "{" / "}"), the characters of a Call-ID.
func isWordByte(c byte) bool {
	if isTokenByte(c) {
		return true
	}
	switch c {
	case '(', ')', '<', '>', ':', '\\', '"', '/', '[', ']', '?', '{', '}':
		return true
	}
	return false
}

// isCallID: callid = word [ "@" word ].
func isCallID(s string) bool {
	at := strings.IndexByte(s, '@')
	if at < 0 {
		return isWord(s)
	}
	return isWord(s[:at]) && isWord(s[at+1:])
}

func isWord(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isWordByte(s[i]) {
			return false
		}
	}
	return true
}

// isCTL: a control character that no header may carry raw: below 0x20
// but HTAB, and DEL.
func isCTL(c byte) bool {
	return (c < 0x20 && c != '\t') || c == 0x7f
}

// clean reports whether s carries no control character outside a
// quoted-pair of a quoted string, and no CR or LF at all (a quoted-pair
// excludes them). quoted says s starts inside a quoted string (a display
// name, whose quotes sipgo removed).
func clean(s string, quoted bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			quoted = !quoted
		case c == '\\' && quoted:
			if i+1 < len(s) {
				i++
				if n := s[i]; n == '\r' || n == '\n' {
					return false
				}
			}
		case isCTL(c):
			return false
		}
	}
	return true
}

// plain reports whether s carries no control character at all.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if isCTL(s[i]) {
			return false
		}
	}
	return true
}

// nextItem cuts the first element of a comma-separated list, trimmed of
// linear whitespace; rest is what follows the comma.
func nextItem(s string) (item, rest string) {
	if i := strings.IndexByte(s, ','); i >= 0 {
		item, rest = s[:i], s[i+1:]
	} else {
		item = s
	}
	return strings.Trim(item, " \t"), rest
}

// mediaType returns the type/subtype of a Content-Type or Accept
// element, without parameters and whitespace.
func mediaType(s string) string {
	if i := strings.IndexByte(s, ';'); i >= 0 {
		s = s[:i]
	}
	return strings.Trim(s, " \t")
}

// isMediaType: type "/" subtype, both tokens.
func isMediaType(s string) bool {
	slash := strings.IndexByte(s, '/')
	return slash > 0 && isToken(s[:slash]) && isToken(s[slash+1:])
}

// acceptsSDP reports whether the Accept element a admits
// application/sdp (exactly, application/*, or */*) with a q above 0.
func acceptsSDP(a string) bool {
	t := mediaType(a)
	if !strings.EqualFold(t, "application/sdp") && !strings.EqualFold(t, "application/*") && t != "*/*" {
		return false
	}
	return !qZero(a)
}

// qZero reports whether the element's parameters hold q=0 (or 0.0...):
// "not acceptable" (RFC 3261 §20.1, after RFC 2616 §14.1).
func qZero(a string) bool {
	for rest := a; ; {
		i := strings.IndexByte(rest, ';')
		if i < 0 {
			return false
		}
		rest = rest[i+1:]
		param := rest
		if j := strings.IndexByte(param, ';'); j >= 0 {
			param = param[:j]
		}
		name, value, ok := strings.Cut(param, "=")
		if !ok || !strings.EqualFold(strings.Trim(name, " \t"), "q") {
			continue
		}
		value = strings.Trim(value, " \t")
		return value != "" && strings.Trim(value, "0.") == "" && value[0] == '0'
	}
}
