package gate

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brisvox/brisvox/internal/ratelog"
	"github.com/brisvox/brisvox/media/conn"
)

// The causes of a refusal, as Stats and the log name them.
const (
	CauseUnauthorized = "unauthorized"
	CauseForbidden    = "forbidden"
	CauseExpired      = "expired"
	CauseRateLimited  = string(conn.RefusedRateLimited)
)

// refusal is the answer to one cause: status and the JSON body, made
// once.
type refusal struct {
	status int
	body   []byte
}

func newRefusal(status int, msg, cause string) refusal {
	return refusal{status, []byte(`{"error":` + strconv.Quote(msg) + `,"cause":"` + cause + `"}` + "\n")}
}

var (
	refuseUnauthorized = newRefusal(http.StatusUnauthorized, "credentials required", CauseUnauthorized)
	refuseForbidden    = newRefusal(http.StatusForbidden, "wrong credentials", CauseForbidden)
	refuseExpired      = newRefusal(http.StatusForbidden, "signed URL expired", CauseExpired)
	refuseRateLimited  = newRefusal(http.StatusTooManyRequests, "too many requests", CauseRateLimited)
)

// Gate rate-limits and authenticates requests (see the package doc).
// Safe for concurrent use.
type Gate struct {
	cfg     Config
	token   [sha256.Size]byte // SHA-256 of Config.Token
	signers sync.Pool         // of *signer for Config.Secret
	limit   *limiter
	tally   *ratelog.Tally
	counts  struct {
		unauthorized, forbidden, expired, rateLimited atomic.Uint64
	}
}

// New makes a gate for cfg.
func New(cfg Config) (*Gate, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.Secret = append([]byte(nil), cfg.Secret...) // the caller's slice may change
	g := &Gate{cfg: cfg}
	if cfg.Token != "" {
		g.token = sha256.Sum256([]byte(cfg.Token))
	}
	g.signers.New = func() any { return newSigner(cfg.Secret) }
	g.limit = newLimiter(cfg.RatePerSec, cfg.Burst, cfg.MaxSources)
	g.tally = ratelog.New(cfg.Log, "gate: requests refused", cfg.LogEvery)
	return g, nil
}

// Protected reports whether the gate asks for a credential (a token or
// signed URLs), and not only rate-limits.
func (g *Gate) Protected() bool {
	return g.cfg.Token != "" || len(g.cfg.Secret) != 0
}

// Wrap guards next: a request over its source's rate is answered 429, one
// without a valid credential 401 or 403 (see the package doc), and only
// the others reach next.
func (g *Gate) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ok, retry := g.Allow(remoteAddr(r)); !ok {
			w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(retry)))
			refuseRateLimited.write(w)
			return
		}
		if err := g.Authorize(r); err != nil {
			switch {
			case errors.Is(err, ErrUnauthorized):
				w.Header().Set("WWW-Authenticate", "Bearer")
				refuseUnauthorized.write(w)
			case errors.Is(err, ErrExpired):
				refuseExpired.write(w)
			default:
				refuseForbidden.write(w)
			}
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (rf refusal) write(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(rf.status)
	w.Write(rf.body)
}

// Allow takes a token of addr's bucket: ok, or not and how long until a
// retry may pass. A refusal is counted and logged as rate_limited.
func (g *Gate) Allow(addr netip.Addr) (ok bool, retry time.Duration) {
	ok, retry = g.limit.allow(sourceKey(addr))
	if !ok {
		g.counts.rateLimited.Add(1)
		g.tally.Add(CauseRateLimited)
	}
	return ok, retry
}

// Authorize checks r's credentials: nil when a configured one is valid
// (or none is configured), else ErrUnauthorized (none given),
// ErrExpired, or ErrForbidden, wrapped with detail that holds no secret.
// A refusal is counted and logged under its cause.
func (g *Gate) Authorize(r *http.Request) error {
	err := g.authorize(r)
	if err == nil {
		return nil
	}
	cause := CauseForbidden
	switch {
	case errors.Is(err, ErrUnauthorized):
		cause = CauseUnauthorized
		g.counts.unauthorized.Add(1)
	case errors.Is(err, ErrExpired):
		cause = CauseExpired
		g.counts.expired.Add(1)
	default:
		g.counts.forbidden.Add(1)
	}
	g.tally.Add(cause)
	return err
}

func (g *Gate) authorize(r *http.Request) error {
	if !g.Protected() {
		return nil
	}
	var tokenErr error
	if g.cfg.Token != "" {
		if tok, ok := bearer(r.Header.Get("Authorization")); ok {
			if g.tokenMatches(tok) {
				return nil
			}
			tokenErr = errWrongToken
		}
	}
	if len(g.cfg.Secret) != 0 && isSigned(r.URL.RawQuery) {
		s, err := parseSigned(r.URL.RawQuery)
		if err == nil {
			sg := g.signers.Get().(*signer)
			err = verify(sg, s, r.Method, r.URL.Path, time.Now(), g.cfg.MaxTTL)
			g.signers.Put(sg)
		}
		// A bad signature says more than a bad token beside it.
		return err
	}
	if tokenErr != nil {
		return tokenErr
	}
	return errNoCredentials
}

// The errors of the token path, made once: the allowed path and a
// refused token allocate nothing.
var (
	errWrongToken    = fmt.Errorf("%w: the bearer token does not match", ErrForbidden)
	errNoCredentials = fmt.Errorf("%w: neither a bearer token nor a signed URL", ErrUnauthorized)
)

// tokenMatches compares the digests, so the time taken tells nothing of
// the token, not even its length.
func (g *Gate) tokenMatches(tok string) bool {
	if len(tok) > MaxTokenLen {
		return false // no configured token is that long
	}
	var buf [MaxTokenLen]byte // on the stack: []byte(tok) would allocate
	n := copy(buf[:], tok)
	sum := sha256.Sum256(buf[:n])
	return subtle.ConstantTimeCompare(sum[:], g.token[:]) == 1
}

// bearer is the token of an Authorization header of the Bearer scheme
// (the scheme's name in any case, RFC 7235).
func bearer(h string) (string, bool) {
	const scheme = "Bearer "
	if len(h) <= len(scheme) || !strings.EqualFold(h[:len(scheme)], scheme) {
		return "", false
	}
	return strings.TrimLeft(h[len(scheme):], " "), true
}

// remoteAddr is the peer's address of r, the zero Addr (one shared
// source) when RemoteAddr is not an ip:port.
func remoteAddr(r *http.Request) netip.Addr {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr()
}

// retryAfterSeconds is a Retry-After value: whole seconds rounded up, at
// least 1.
func retryAfterSeconds(d time.Duration) int {
	return max(1, int((d+time.Second-1)/time.Second))
}

// Stats counts the refusals by cause, and the sources the rate limit
// forgot to make room for new ones (sources_evicted: many means a flood
// of addresses, or MaxSources too small).
func (g *Gate) Stats() map[string]uint64 {
	_, evicted := g.limit.sources()
	return map[string]uint64{
		CauseUnauthorized: g.counts.unauthorized.Load(),
		CauseForbidden:    g.counts.forbidden.Load(),
		CauseExpired:      g.counts.expired.Load(),
		CauseRateLimited:  g.counts.rateLimited.Load(),
		"sources_evicted": evicted,
	}
}

// Close writes the refusals' pending summary and stops its timer. The
// gate still guards requests afterwards, without logging them.
func (g *Gate) Close() { g.tally.Close() }
