package trunk

import (
	"errors"
	"strings"
)

// MaxAuthorizationBytes bounds the Authorization header value Verify
// reads; a longer one is malformed.
const MaxAuthorizationBytes = 4096

// Bounds of one header's parameters.
const (
	maxParams   = 24
	maxParamLen = 1024
)

// errMalformed is the parser's one error: the caller turns it into
// ErrAuthFailed and counts it.
var errMalformed = errors.New("trunk: malformed authorization")

// authParam is one name=value of a credentials header, the name in lower
// case and the value unquoted.
type authParam struct {
	name, value string
}

// parseAuthorization splits a credentials header value (RFC 3261 §25.1,
// RFC 2617 §3.2.2): a scheme token, white space, then comma-separated
// name=value pairs whose value is a token or a quoted string (with
// backslash escapes). A duplicate name, an empty element, a control
// character, an unterminated quote or more than maxParams pairs make it
// malformed.
// The pairs are appended to params (a caller's buffer, or nil).
func parseAuthorization(s string, params []authParam) (scheme string, _ []authParam, err error) {
	if len(s) > MaxAuthorizationBytes {
		return "", nil, errMalformed
	}
	i := skipWS(s, 0)
	j := scanToken(s, i)
	if j == i || j >= len(s) || (s[j] != ' ' && s[j] != '\t') {
		return "", nil, errMalformed
	}
	scheme = s[i:j]
	i = skipWS(s, j)
	params = params[:0]
	for {
		var p authParam
		j = scanToken(s, i)
		if j == i {
			return "", nil, errMalformed
		}
		p.name = strings.ToLower(s[i:j])
		i = skipWS(s, j)
		if i >= len(s) || s[i] != '=' {
			return "", nil, errMalformed
		}
		i = skipWS(s, i+1)
		if i < len(s) && s[i] == '"' {
			p.value, i, err = scanQuoted(s, i)
			if err != nil {
				return "", nil, err
			}
		} else {
			j = scanToken(s, i)
			if j == i {
				return "", nil, errMalformed
			}
			p.value, i = s[i:j], j
		}
		if len(p.value) > maxParamLen || len(params) == maxParams {
			return "", nil, errMalformed
		}
		for _, q := range params {
			if q.name == p.name {
				return "", nil, errMalformed
			}
		}
		params = append(params, p)
		i = skipWS(s, i)
		if i == len(s) {
			return scheme, params, nil
		}
		if s[i] != ',' {
			return "", nil, errMalformed
		}
		i = skipWS(s, i+1)
	}
}

// scanQuoted reads the quoted string that starts at s[i] == '"' and
// returns its unescaped content and the index after the closing quote.
func scanQuoted(s string, i int) (string, int, error) {
	start := i + 1
	escaped := false
	for j := start; j < len(s); j++ {
		switch c := s[j]; {
		case c == '"':
			if !escaped {
				return s[start:j], j + 1, nil
			}
			return unescape(s[start:j]), j + 1, nil
		case c == '\\':
			if j+1 >= len(s) || isCtl(s[j+1]) {
				return "", 0, errMalformed
			}
			escaped = true
			j++
		case isCtl(c):
			return "", 0, errMalformed
		}
	}
	return "", 0, errMalformed
}

// unescape drops the backslash of each quoted pair of q (checked by
// scanQuoted).
func unescape(q string) string {
	var b strings.Builder
	b.Grow(len(q))
	for j := 0; j < len(q); j++ {
		if q[j] == '\\' {
			j++
		}
		b.WriteByte(q[j])
	}
	return b.String()
}

// quote writes v as a quoted string, escaping quotes and backslashes.
func quote(b *strings.Builder, v string) {
	b.WriteByte('"')
	for j := 0; j < len(v); j++ {
		if v[j] == '"' || v[j] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(v[j])
	}
	b.WriteByte('"')
}

// isCtl: a control character other than the horizontal tab.
func isCtl(c byte) bool { return (c < ' ' && c != '\t') || c == 0x7f }

func skipWS(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// scanToken is the index after the RFC 3261 token starting at i.
func scanToken(s string, i int) int {
	for i < len(s) && isTokenChar(s[i]) {
		i++
	}
	return i
}

func isTokenChar(c byte) bool {
	if alnum(c) {
		return true
	}
	switch c {
	case '-', '.', '!', '%', '*', '_', '+', '`', '\'', '~':
		return true
	}
	return false
}

// credentials are the digest parameters Verify reads.
type credentials struct {
	username, realm, nonce, uri, response string
	algorithm, cnonce, opaque, qop, nc    string
}

// parseCredentials parses a Digest Authorization header value into the
// parameters Verify needs; all of username, realm, nonce, uri, response,
// qop, nc and cnonce are required (we always offer qop=auth, and a
// client must use it then).
// buf is room for the pairs.
func parseCredentials(s string, buf []authParam) (credentials, error) {
	scheme, params, err := parseAuthorization(s, buf)
	if err != nil {
		return credentials{}, err
	}
	if !strings.EqualFold(scheme, "Digest") {
		return credentials{}, errMalformed
	}
	var c credentials
	for _, p := range params {
		var dst *string
		switch p.name {
		case "username":
			dst = &c.username
		case "realm":
			dst = &c.realm
		case "nonce":
			dst = &c.nonce
		case "uri":
			dst = &c.uri
		case "response":
			dst = &c.response
		case "algorithm":
			dst = &c.algorithm
		case "cnonce":
			dst = &c.cnonce
		case "opaque":
			dst = &c.opaque
		case "qop":
			dst = &c.qop
		case "nc":
			dst = &c.nc
		case "userhash":
			if !strings.EqualFold(p.value, "false") {
				return credentials{}, errMalformed // RFC 7616 user hashing is not offered
			}
			continue
		default:
			continue // an extension parameter
		}
		*dst = p.value
	}
	if c.username == "" || c.realm == "" || c.nonce == "" || c.uri == "" || c.response == "" ||
		c.qop == "" || c.nc == "" || c.cnonce == "" {
		return credentials{}, errMalformed
	}
	return c, nil
}
