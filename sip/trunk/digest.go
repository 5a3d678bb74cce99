package trunk

import (
	"crypto/md5"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"hash"
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
	c, err := parseCredentials(authorization)
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
	h := newHash(p.cfg.Algorithm)
	var want, got [sha256.Size]byte
	size := h.Size()
	if len(c.response) != 2*size {
		return authMalformed
	}
	if _, err := hex.Decode(got[:size], []byte(c.response)); err != nil {
		return authMalformed
	}
	if c.uri != uri {
		return authURIMismatch
	}
	password, known := p.users[c.username]
	if !known {
		password = p.dummy // the same work as a wrong password
	}
	digest(h, want[:0], c.username, p.cfg.Realm, password, method, c.uri, c.nonce, c.nc, c.cnonce, c.qop)
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
		c := lower(nc[i])
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func newHash(alg string) hash.Hash {
	if alg == AlgorithmSHA256 {
		return sha256.New()
	}
	return md5.New()
}

// digest appends to dst the RFC 2617 qop=auth response:
// H(H(user:realm:password):nonce:nc:cnonce:qop:H(method:uri)), H in hex.
func digest(h hash.Hash, dst []byte, user, realm, password, method, uri, nonce, nc, cnonce, qop string) []byte {
	var ha1, ha2 [2 * sha256.Size]byte
	n := 2 * h.Size()
	hexSum(h, ha1[:n], user, ":", realm, ":", password)
	hexSum(h, ha2[:n], method, ":", uri)
	h.Reset()
	h.Write(ha1[:n])
	for _, s := range [...]string{":", nonce, ":", nc, ":", cnonce, ":", qop, ":"} {
		io.WriteString(h, s)
	}
	h.Write(ha2[:n])
	return h.Sum(dst)
}

// hexSum writes the hex hash of the concatenated parts into dst.
func hexSum(h hash.Hash, dst []byte, parts ...string) {
	h.Reset()
	for _, s := range parts {
		io.WriteString(h, s)
	}
	var sum [sha256.Size]byte
	hex.Encode(dst, h.Sum(sum[:0]))
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
