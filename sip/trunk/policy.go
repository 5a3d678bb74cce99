package trunk

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// Policy is one trunk's policy. Its methods are safe for concurrent use
// (the UDP reader and each stream's reader call Filter at once).
type Policy struct {
	cfg    Config
	allow4 []netip.Prefix
	allow6 []netip.Prefix
	scan   scanner
	rand   io.Reader
	clock  func() time.Time
	users  map[string]string
	dummy  string // hashed for an unknown user
	opaque string

	mu      sync.Mutex
	sources sourceTable        // guarded by mu
	dialogs map[netip.Addr]int // open dialogs by source key; guarded by mu

	authMu sync.Mutex
	nonces nonceTable // guarded by authMu

	verdicts       [numVerdicts]atomic.Uint64
	auth           [numAuthResults]atomic.Uint64
	blocks         atomic.Uint64
	dialogsRefused atomic.Uint64
	challenges     atomic.Uint64
}

// Option changes how a Policy is built; options do no I/O.
type Option func(*Policy)

// WithRand takes the nonces (and the opaque value and dummy password)
// from r instead of crypto/rand: for tests that need fixed nonces.
func WithRand(r io.Reader) Option { return func(p *Policy) { p.rand = r } }

// WithClock sets the clock Stats reads to count the sources blocked now
// (time.Now by default; the filter and the digest take the time as an
// argument).
func WithClock(now func() time.Time) Option { return func(p *Policy) { p.clock = now } }

// New builds a Policy from a valid Config.
func New(cfg Config, opts ...Option) (*Policy, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	p := &Policy{
		rand:    rand.Reader,
		clock:   time.Now,
		users:   maps.Clone(cfg.Users),
		dialogs: make(map[netip.Addr]int),
	}
	for _, o := range opts {
		o(p)
	}
	for _, pf := range cfg.Allow {
		pf = pf.Masked()
		if pf.Addr().Is4() {
			p.allow4 = append(p.allow4, pf)
		} else {
			p.allow6 = append(p.allow6, pf)
		}
	}
	cfg.Users = nil
	cfg.Scanners = append(DefaultScanners(), cfg.Scanners...)
	p.cfg = cfg
	p.scan = newScanner(cfg.Scanners)
	p.sources = newSourceTable(cfg.MaxSources)
	p.nonces = newNonceTable(cfg.MaxPending)
	var secret [32]byte
	if _, err := io.ReadFull(p.rand, secret[:]); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrRandom, err)
	}
	p.dummy = hex.EncodeToString(secret[:16])
	p.opaque = hex.EncodeToString(secret[16:24])
	return p, nil
}

// Authenticates says whether INVITEs must carry credentials (Config.Users
// is not empty).
func (p *Policy) Authenticates() bool { return len(p.users) > 0 }

// MaxMessageBytes is the datagram bound in force.
func (p *Policy) MaxMessageBytes() int { return p.cfg.MaxMessageBytes }

// Stats keys, besides "drop_<cause>" and "passed" for each Verdict and
// "auth_<result>" for each Verify result (ok, unknown_user,
// wrong_password, stale_nonce, replayed_nonce, malformed, uri_mismatch).
const (
	// StatBlocks counts the times a source was blocked.
	StatBlocks = "blocks"
	// StatBlockedNow is the number of sources blocked now.
	StatBlockedNow = "blocked_sources"
	// StatSources is the number of sources with state.
	StatSources = "sources"
	// StatDialogsOpen is the number of dialogs acquired and not released.
	StatDialogsOpen = "dialogs_open"
	// StatDialogsRefused counts Acquire refusals.
	StatDialogsRefused = "dialogs_refused"
	// StatChallenges counts challenges handed out.
	StatChallenges = "challenges"
	// StatNoncesHeld is the number of nonces in the table.
	StatNoncesHeld = "nonces_held"
)

// Stats returns the counters and gauges (see the Stat constants).
func (p *Policy) Stats() map[string]uint64 {
	m := make(map[string]uint64, int(numVerdicts)+int(numAuthResults)+7)
	for v := range Verdict(numVerdicts) {
		m[v.statKey()] = p.verdicts[v].Load()
	}
	for r := range authResult(numAuthResults) {
		m["auth_"+r.String()] = p.auth[r].Load()
	}
	m[StatBlocks] = p.blocks.Load()
	m[StatDialogsRefused] = p.dialogsRefused.Load()
	m[StatChallenges] = p.challenges.Load()
	now := p.clock()
	p.mu.Lock()
	m[StatBlockedNow] = uint64(p.sources.blockedAt(now))
	m[StatSources] = uint64(p.sources.len())
	open := 0
	for _, n := range p.dialogs {
		open += n
	}
	m[StatDialogsOpen] = uint64(open)
	p.mu.Unlock()
	p.authMu.Lock()
	m[StatNoncesHeld] = uint64(p.nonces.len())
	p.authMu.Unlock()
	return m
}

// v6KeyBits is the prefix an IPv6 source is keyed by: a /64 is what one
// subscriber gets, and its host bits are the sender's to choose.
const v6KeyBits = 64

// key is the per-source state's key of an address: unmapped, without a
// zone, and an IPv6 address cut to its /64.
func (p *Policy) key(a netip.Addr) netip.Addr {
	a = a.Unmap().WithZone("")
	if a.Is6() {
		pf, _ := a.Prefix(v6KeyBits)
		return pf.Addr()
	}
	return a
}

// allowed reports whether a (unmapped, no zone) is in the allowlist.
func (p *Policy) allowed(a netip.Addr) bool {
	list := p.allow6
	if a.Is4() {
		list = p.allow4
	}
	for _, pf := range list {
		if pf.Contains(a) {
			return true
		}
	}
	return false
}
