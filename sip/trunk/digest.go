package trunk

import (
	"crypto/md5"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
	"time"
)

// authResult is one Verify outcome, counted in Stats as "auth_<name>".
type authResult uint8

const (
	authOK authResult = iota
	authUnknownUser
	authWrongPassword
	authStaleNonce
	authReplayedNonce
	authMalformed
	authURIMismatch

	numAuthResults
)

var authNames = [numAuthResults]string{"ok", "unknown_user", "wrong_password", "stale_nonce", "replayed_nonce", "malformed", "uri_mismatch"}

func (r authResult) String() string { return authNames[r] }

// nonceLen is the random bytes of a nonce (hex in the header).
const nonceLen = 16

// Challenge returns a new WWW-Authenticate header value for a 401: our
// realm, a fresh single-use nonce valid for Config.NonceTTL from now, the
// opaque value, the algorithm and qop="auth". The error wraps ErrRandom.
func (p *Policy) Challenge(now time.Time) (string, error) {
	return p.challenge(now, false)
}

// StaleChallenge is Challenge with stale=true, the answer to a Verify
// error that matches ErrStaleNonce: the client's password was right and
// it may retry with the new nonce at once.
func (p *Policy) StaleChallenge(now time.Time) (string, error) {
	return p.challenge(now, true)
}

func (p *Policy) challenge(now time.Time, stale bool) (string, error) {
	var raw [nonceLen]byte
	if _, err := io.ReadFull(p.rand, raw[:]); err != nil {
		return "", fmt.Errorf("%w: %v", ErrRandom, err)
	}
	nonce := hex.EncodeToString(raw[:])
	p.authMu.Lock()
	p.nonces.add(nonce, now)
	p.authMu.Unlock()
	p.challenges.Add(1)
	var b strings.Builder
	b.Grow(128)
	b.WriteString(`Digest realm="`)
	b.WriteString(p.cfg.Realm)
	b.WriteString(`", nonce="`)
	b.WriteString(nonce)
	b.WriteString(`", opaque="`)
	b.WriteString(p.opaque)
	b.WriteString(`", algorithm=`)
	b.WriteString(p.cfg.Algorithm)
	b.WriteString(`, qop="auth"`)
	if stale {
		b.WriteString(", stale=true")
	}
	return b.String(), nil
}

// Verify checks the Authorization header value of a request (method and
// its request URI exactly as received) against a nonce we handed out.
// nil means authenticated; any failure is ErrAuthFailed, and a right
// digest on an expired or forgotten nonce also matches ErrStaleNonce.
// Each nonce authenticates one request.
func (p *Policy) Verify(method, requestURI, authorization string, now time.Time) error {
	r := p.verify(method, requestURI, authorization, now)
	p.auth[r].Add(1)
	switch r {
	case authOK:
		return nil
	case authStaleNonce:
		return errStale
	}
	return ErrAuthFailed
}

func (p *Policy) verify(method, uri, authorization string, now time.Time) authResult {
	var buf [maxParams]authParam
	c, err := parseCredentials(authorization, buf[:0])
	if err != nil || c.realm != p.cfg.Realm || c.opaque != p.opaque ||
		!strings.EqualFold(c.qop, "auth") || !validNC(c.nc) {
		return authMalformed
	}
	alg := c.algorithm
	if alg == "" {
		alg = AlgorithmMD5 // RFC 2617: absent means MD5
	}
	if !strings.EqualFold(alg, p.cfg.Algorithm) {
		return authMalformed // only what we offered: no downgrade
	}
	sha := p.cfg.Algorithm == AlgorithmSHA256
	size := md5.Size
	if sha {
		size = sha256.Size
	}
	var want, got [sha256.Size]byte
	if !decodeHex(got[:size], c.response) {
		return authMalformed
	}
	if c.uri != uri {
		return authURIMismatch
	}
	password, known := p.users[c.username]
	if !known {
		password = p.dummy // the same work as a wrong password
	}
	digest(sha, want[:0], c.username, p.cfg.Realm, password, method, c.uri, c.nonce, c.nc, c.cnonce, c.qop)
	match := subtle.ConstantTimeCompare(want[:size], got[:size]) == 1
	switch {
	case !known:
		return authUnknownUser
	case !match:
		return authWrongPassword
	}
	p.authMu.Lock()
	defer p.authMu.Unlock()
	e := p.nonces.get(c.nonce)
	switch {
	case e == nil || now.Sub(e.issued) > p.cfg.NonceTTL:
		return authStaleNonce
	case e.used || c.nc != "00000001":
		return authReplayedNonce
	}
	e.used = true
	return authOK
}

// validNC: eight hex digits.
func validNC(nc string) bool {
	if len(nc) != 8 {
		return false
	}
	for i := 0; i < len(nc); i++ {
		if _, ok := fromHex(nc[i]); !ok {
			return false
		}
	}
	return true
}

// decodeHex decodes s (either case) into exactly dst.
func decodeHex(dst []byte, s string) bool {
	if len(s) != 2*len(dst) {
		return false
	}
	for i := range dst {
		hi, ok1 := fromHex(s[2*i])
		lo, ok2 := fromHex(s[2*i+1])
		if !ok1 || !ok2 {
			return false
		}
		dst[i] = hi<<4 | lo
	}
	return true
}

func fromHex(c byte) (byte, bool) {
	switch c = lower(c); {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// digest appends to dst the raw RFC 2617 qop=auth response:
// H(hex H(user:realm:password):nonce:nc:cnonce:qop:hex H(method:uri)).
// The inputs are joined on the stack and hashed with md5.Sum or
// sha256.Sum256: no hash object, no allocation for common sizes.
func digest(sha bool, dst []byte, user, realm, password, method, uri, nonce, nc, cnonce, qop string) []byte {
	var stack [512]byte
	var ha1, ha2 [2 * sha256.Size]byte
	in := append(append(append(append(append(stack[:0], user...), ':'), realm...), ':'), password...)
	h1 := hexHash(sha, ha1[:0], in)
	in = append(append(append(stack[:0], method...), ':'), uri...)
	h2 := hexHash(sha, ha2[:0], in)
	in = append(append(stack[:0], h1...), ':')
	in = append(append(append(append(in, nonce...), ':'), nc...), ':')
	in = append(append(append(append(in, cnonce...), ':'), qop...), ':')
	in = append(in, h2...)
	return sum(sha, dst, in)
}

// hexHash appends the hash of in, in hex, to dst.
func hexHash(sha bool, dst, in []byte) []byte {
	var raw [sha256.Size]byte
	return hex.AppendEncode(dst, sum(sha, raw[:0], in))
}

// sum appends the hash of in to dst.
func sum(sha bool, dst, in []byte) []byte {
	if sha {
		s := sha256.Sum256(in)
		return append(dst, s[:]...)
	}
	s := md5.Sum(in)
	return append(dst, s[:]...)
}

// challengeEntry is one nonce handed out.
type challengeEntry struct {
	nonce  string
	issued time.Time
	used   bool
}

// nonceTable holds the nonces handed out, in a ring in the order they
// were issued: when it is full the oldest goes. A used nonce stays until
// it is pushed out, so that a replay is told from a stale nonce.
type nonceTable struct {
	ring    []challengeEntry
	next    int
	byNonce map[string]int
}

func newNonceTable(max int) nonceTable {
	return nonceTable{ring: make([]challengeEntry, max), byNonce: make(map[string]int, max)}
}

func (t *nonceTable) len() int { return len(t.byNonce) }

func (t *nonceTable) add(nonce string, now time.Time) {
	if old := t.ring[t.next].nonce; old != "" && t.byNonce[old] == t.next {
		delete(t.byNonce, old)
	}
	t.ring[t.next] = challengeEntry{nonce: nonce, issued: now}
	t.byNonce[nonce] = t.next
	t.next = (t.next + 1) % len(t.ring)
}

func (t *nonceTable) get(nonce string) *challengeEntry {
	i, ok := t.byNonce[nonce]
	if !ok {
		return nil
	}
	return &t.ring[i]
}
