package twilio

import (
	"crypto/hmac"
	"crypto/sha1" //nolint:gosec // Twilio's request signature is HMAC-SHA1
	"crypto/subtle"
	"encoding/base64"
	"net"
	"net/http"
	"strings"
)

// SignatureHeader is the header of Twilio's request signature.
const SignatureHeader = "X-Twilio-Signature"

// The rule, as the vendor states it: every request Twilio makes,
// the Media Streams websocket upgrade included, carries
// X-Twilio-Signature, and the application must validate it
// (twilio.com/docs/global-infrastructure/firewall-configurations/
// media-streams-configuration, linking /docs/usage/security#validating-requests):
// base64(HMAC-SHA1(auth token, the full URL Twilio requested, then each
// POST parameter's name and value in sorted order)). The upgrade is a
// GET, so there are no parameters: the URL alone is signed. The URL is
// the <Stream url> Twilio connected to, wss:// and all; <Stream> takes no
// query string (twilio.com/docs/api/errors/31920), so a query, if any,
// is signed as sent. Twilio's own validators (twilio-node
// src/webhooks/webhooks.ts validateRequest; twilio-python, twilio-ruby
// RequestValidator.validate) accept the signature over the URL with or
// without its port, because which of the two Twilio signed differs
// (addPort: the scheme's standard port when the URL has none;
// removePort: the URL without the port it has); that variant is the
// only one handled here. A trailing-slash difference is not: the
// vendor's notes ask the application to use the exact URL it gave.

// signatureCheck validates the signature of an upgrade request.
type signatureCheck struct {
	token     []byte
	publicURL string // scheme://host[:port][/prefix], no trailing slash; "" to build from Host
}

// requestURL is the URL Twilio requested: PublicURL and the request's
// path and query, or wss:// and the Host header with them.
func (s signatureCheck) requestURL(r *http.Request) string {
	if s.publicURL != "" {
		return s.publicURL + r.URL.RequestURI()
	}
	return "wss://" + r.Host + r.URL.RequestURI()
}

// valid tells whether the request's signature is the one over its URL
// (or the URL's port variant). The comparison is constant-time; the
// header and the URL are never logged.
func (s signatureCheck) valid(r *http.Request) bool {
	got := r.Header.Get(SignatureHeader)
	if got == "" {
		return false
	}
	u := s.requestURL(r)
	ok := subtle.ConstantTimeCompare([]byte(Signature(s.token, u)), []byte(got))
	if alt, has := portVariant(u); has {
		ok |= subtle.ConstantTimeCompare([]byte(Signature(s.token, alt)), []byte(got))
	}
	return ok == 1
}

// Signature is Twilio's signature of a request to rawURL with no POST
// parameters: base64(HMAC-SHA1(token, rawURL)).
func Signature(token []byte, rawURL string) string {
	m := hmac.New(sha1.New, token)
	m.Write([]byte(rawURL))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// portVariant is rawURL without its port when it has one, or with the
// scheme's standard port (443 for wss and https, 80 for ws and http)
// when it has none. Only the host changes: path and query stay as sent.
func portVariant(rawURL string) (string, bool) {
	scheme, rest, ok := strings.Cut(rawURL, "://")
	if !ok {
		return "", false
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	host, tail := rest[:end], rest[end:]
	if scheme == "" || host == "" {
		return "", false
	}
	if h, p, err := net.SplitHostPort(host); err == nil {
		if h == "" || p == "" || strings.Trim(p, "0123456789") != "" || strings.ContainsAny(h, "[]") {
			return "", false // not a host and port: no variant
		}
		if strings.Contains(h, ":") {
			h = "[" + h + "]" // IPv6
		}
		return scheme + "://" + h + tail, true
	}
	bare := host
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		bare = host[1 : len(host)-1]
		if !strings.Contains(bare, ":") {
			return "", false // brackets hold an IPv6 address
		}
	} else if strings.Contains(host, ":") {
		return "", false
	}
	if bare == "" || strings.ContainsAny(bare, "[]") {
		return "", false
	}
	port := "443"
	if scheme == "ws" || scheme == "http" {
		port = "80"
	}
	return scheme + "://" + net.JoinHostPort(bare, port) + tail, true
}
