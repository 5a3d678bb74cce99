package gate

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"hash"
	"net/url"
	"strconv"
	"time"
)

// The query parameters of a signed URL.
const (
	ParamExp = "exp"
	ParamSig = "sig"
)

// sigPrefix starts every canonical string: a signature made for another
// purpose with the same secret never verifies here.
const sigPrefix = "brisvox-signed-url-v1\n"

// Sign signs a URL of method and path with query for secret until exp,
// and returns the query string to append after "?": query's parameters
// with exp and sig added (any exp or sig already in query is replaced).
//
// The signature is the unpadded base64url HMAC-SHA256 under secret of
//
//	"brisvox-signed-url-v1\n" + method + "\n" + path + "\n" + exp + "\n" + rest
//
// where exp is in unix seconds and rest is the other parameters as
// url.Values.Encode writes them: sorted by key, each key's values in
// their order, escaped. A server verifies what it parsed, so how a
// client escapes the query does not matter, but a parameter added,
// dropped or changed does.
func Sign(secret []byte, method, path string, query url.Values, exp time.Time) string {
	rest := make(url.Values, len(query)+2)
	for k, vs := range query {
		if k != ParamExp && k != ParamSig {
			rest[k] = vs
		}
	}
	e := exp.Unix()
	sum := newSigner(secret).signature(method, path, e, rest.Encode())
	rest.Set(ParamExp, strconv.FormatInt(e, 10))
	rest.Set(ParamSig, base64.RawURLEncoding.EncodeToString(sum[:]))
	return rest.Encode()
}

// maxKeptBuf is the largest canonical-string buffer a signer keeps.
const maxKeptBuf = 4 << 10

// signer computes signatures for one secret; it is reused (a pool),
// so its buffer and MAC cost nothing after the first.
type signer struct {
	mac hash.Hash
	buf []byte
}

func newSigner(secret []byte) *signer {
	return &signer{mac: hmac.New(sha256.New, secret), buf: make([]byte, 0, 256)}
}

// signature is the MAC of the canonical string.
func (sg *signer) signature(method, path string, exp int64, rest string) [sha256.Size]byte {
	b := append(sg.buf[:0], sigPrefix...)
	b = append(b, method...)
	b = append(b, '\n')
	b = append(b, path...)
	b = append(b, '\n')
	b = strconv.AppendInt(b, exp, 10)
	b = append(b, '\n')
	b = append(b, rest...)
	if cap(b) <= maxKeptBuf { // a huge query's buffer is not kept
		sg.buf = b[:0]
	}
	sg.mac.Reset()
	sg.mac.Write(b)
	var sum [sha256.Size]byte
	sg.mac.Sum(sum[:0])
	return sum
}

// signedURL is what parseSigned reads of a query: exp, the signature and
// the canonical form of the other parameters.
type signedURL struct {
	exp  int64
	sig  [sha256.Size]byte
	rest string
}

// isSigned reports whether a raw query tries a signed URL (names exp or
// sig); it does not parse the query.
func isSigned(rawQuery string) bool {
	return hasParam(rawQuery, ParamSig) || hasParam(rawQuery, ParamExp)
}

// hasParam reports whether a raw query has a parameter named name,
// unescaped in the query; an escaped name fails verification anyway.
func hasParam(rawQuery, name string) bool {
	for rawQuery != "" {
		var kv string
		kv, rawQuery = cut(rawQuery, '&')
		k, _ := cut(kv, '=')
		if k == name {
			return true
		}
	}
	return false
}

func cut(s string, sep byte) (before, after string) {
	for i := 0; i < len(s); i++ {
		if s[i] == sep {
			return s[:i], s[i+1:]
		}
	}
	return s, ""
}

// parseSigned reads a signed URL's query. Any defect is ErrForbidden: a
// query that does not parse, exp or sig missing or given twice, exp not
// in canonical decimal, sig not 32 bytes of unpadded base64url.
func parseSigned(rawQuery string) (signedURL, error) {
	var s signedURL
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return s, fmt.Errorf("%w: the query does not parse", ErrForbidden)
	}
	exps, sigs := q[ParamExp], q[ParamSig]
	if len(exps) != 1 || len(sigs) != 1 {
		return s, fmt.Errorf("%w: want one %s and one %s", ErrForbidden, ParamExp, ParamSig)
	}
	s.exp, err = strconv.ParseInt(exps[0], 10, 64)
	if err != nil || s.exp < 0 || strconv.FormatInt(s.exp, 10) != exps[0] {
		return s, fmt.Errorf("%w: %s is not unix seconds", ErrForbidden, ParamExp)
	}
	if base64.RawURLEncoding.DecodedLen(len(sigs[0])) != len(s.sig) {
		return s, fmt.Errorf("%w: %s has the wrong length", ErrForbidden, ParamSig)
	}
	if n, err := base64.RawURLEncoding.Strict().Decode(s.sig[:], []byte(sigs[0])); err != nil || n != len(s.sig) {
		return s, fmt.Errorf("%w: %s is not base64url", ErrForbidden, ParamSig)
	}
	delete(q, ParamExp)
	delete(q, ParamSig)
	s.rest = q.Encode()
	return s, nil
}

// verify checks a signed URL of method and path with sg (of the
// secret) at now: its signature in constant time, then its expiry and
// how far ahead it lies.
func verify(sg *signer, s signedURL, method, path string, now time.Time, maxTTL time.Duration) error {
	want := sg.signature(method, path, s.exp, s.rest)
	if !hmac.Equal(want[:], s.sig[:]) {
		return fmt.Errorf("%w: the signature does not verify", ErrForbidden)
	}
	exp := time.Unix(s.exp, 0)
	if !now.Before(exp) {
		return fmt.Errorf("%w: %v ago", ErrExpired, now.Sub(exp).Truncate(time.Second))
	}
	if exp.Sub(now) > maxTTL {
		return fmt.Errorf("%w: signed for %v ahead, more than the max TTL %v", ErrForbidden, exp.Sub(now).Truncate(time.Second), maxTTL)
	}
	return nil
}
