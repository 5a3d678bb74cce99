package trunk

import (
	"fmt"
	"math"
	"net/netip"
	"time"
)

// Defaults of the zero Config fields.
const (
	// DefaultRate is the sustained messages per second of one source.
	DefaultRate = 20
	// DefaultBlockFor is how long an overflowing source stays silenced
	// after its last overflow.
	DefaultBlockFor = 60 * time.Second
	// DefaultMaxSources bounds the per-source table.
	DefaultMaxSources = 10_000
	// DefaultMaxMessageBytes bounds a datagram. An INVITE with an SDP
	// offer of every common codec is 1 to 3 KiB.
	DefaultMaxMessageBytes = 16 << 10
	// DefaultMaxDialogsPerSource bounds the open dialogs of one source.
	DefaultMaxDialogsPerSource = 100
	// DefaultRealm is the digest realm.
	DefaultRealm = "brisvox"
	// DefaultNonceTTL is how long a challenge's nonce may be answered.
	DefaultNonceTTL = 30 * time.Second
	// DefaultMaxPending bounds the table of nonces handed out.
	DefaultMaxPending = 1024
	// DefaultAlgorithm is the digest algorithm of the challenges: MD5 is
	// what every SIP client speaks (sipp 3.6 speaks no other).
	DefaultAlgorithm = AlgorithmMD5
)

// Digest algorithms (RFC 8760).
const (
	AlgorithmMD5    = "MD5"
	AlgorithmSHA256 = "SHA-256"
)

// Bounds of the configurable lists.
const (
	maxScanners       = 64
	maxScannerLen     = 64
	maxAllowPrefixes  = 1024
	minMaxMessageSize = 1024
)

// Config sets up a Policy. Only Allow is required.
type Config struct {
	// Allow lists the source prefixes that may send anything at all. It
	// must not be empty: an open trunk is spelled out as 0.0.0.0/0 and
	// ::/0. IPv4-mapped IPv6 prefixes are refused (write the IPv4 one;
	// mapped sources are matched as IPv4).
	Allow []netip.Prefix

	// Rate is the token bucket's refill in messages per second per
	// source (DefaultRate).
	Rate float64
	// Burst is the bucket's size, the messages a quiet source may send at
	// once (default: twice Rate, at least 1).
	Burst int
	// BlockFor is how long a source that overflowed its bucket is
	// silenced, counted from its last overflow (DefaultBlockFor).
	BlockFor time.Duration
	// MaxSources bounds the sources with state (DefaultMaxSources).
	MaxSources int

	// MaxMessageBytes bounds a datagram (DefaultMaxMessageBytes).
	MaxMessageBytes int

	// Scanners extends DefaultScanners(): User-Agent words whose messages
	// are dropped. Each is 1 to 64 printable ASCII bytes without spaces.
	Scanners []string

	// MaxDialogsPerSource bounds the open dialogs of one source
	// (DefaultMaxDialogsPerSource).
	MaxDialogsPerSource int

	// Users maps user names to passwords for digest authentication of
	// INVITEs; empty: no authentication. The caller reads the passwords
	// from the environment.
	Users map[string]string
	// Realm is the digest realm (DefaultRealm): printable ASCII without
	// quotes or backslashes.
	Realm string
	// Algorithm is the digest algorithm of the challenges,
	// AlgorithmMD5 (default) or AlgorithmSHA256.
	Algorithm string
	// NonceTTL is how long a nonce may be answered (DefaultNonceTTL).
	NonceTTL time.Duration
	// MaxPending bounds the nonces held (DefaultMaxPending).
	MaxPending int
}

// Validate checks the config; zero fields mean the defaults. The error
// wraps ErrInvalidConfig.
func (c Config) Validate() error {
	if len(c.Allow) == 0 {
		return fmt.Errorf("%w: Allow must list at least one prefix (an open trunk is 0.0.0.0/0 and ::/0)", ErrInvalidConfig)
	}
	if len(c.Allow) > maxAllowPrefixes {
		return fmt.Errorf("%w: Allow lists more than %d prefixes", ErrInvalidConfig, maxAllowPrefixes)
	}
	for i, p := range c.Allow {
		if !p.IsValid() {
			return fmt.Errorf("%w: Allow[%d] is not a valid prefix", ErrInvalidConfig, i)
		}
		if p.Addr().Is4In6() {
			return fmt.Errorf("%w: Allow[%d] is an IPv4-mapped IPv6 prefix; write the IPv4 prefix", ErrInvalidConfig, i)
		}
		if p.Addr().Zone() != "" {
			return fmt.Errorf("%w: Allow[%d] has a zone", ErrInvalidConfig, i)
		}
	}
	if c.Rate < 0 || math.IsNaN(c.Rate) || math.IsInf(c.Rate, 0) {
		return fmt.Errorf("%w: Rate must be a finite number, 0 (default) or more", ErrInvalidConfig)
	}
	if c.Burst < 0 || c.BlockFor < 0 || c.MaxSources < 0 || c.MaxDialogsPerSource < 0 ||
		c.NonceTTL < 0 || c.MaxPending < 0 {
		return fmt.Errorf("%w: Burst, BlockFor, MaxSources, MaxDialogsPerSource, NonceTTL and MaxPending must not be negative", ErrInvalidConfig)
	}
	if c.MaxMessageBytes < 0 || (c.MaxMessageBytes > 0 && c.MaxMessageBytes < minMaxMessageSize) {
		return fmt.Errorf("%w: MaxMessageBytes must be 0 (default) or at least %d", ErrInvalidConfig, minMaxMessageSize)
	}
	if len(c.Scanners) > maxScanners {
		return fmt.Errorf("%w: more than %d Scanners", ErrInvalidConfig, maxScanners)
	}
	for i, s := range c.Scanners {
		if len(s) == 0 || len(s) > maxScannerLen {
			return fmt.Errorf("%w: Scanners[%d] must be 1 to %d bytes", ErrInvalidConfig, i, maxScannerLen)
		}
		for j := 0; j < len(s); j++ {
			if s[j] <= ' ' || s[j] >= 0x7f {
				return fmt.Errorf("%w: Scanners[%d] must be printable ASCII without spaces", ErrInvalidConfig, i)
			}
		}
	}
	for j := 0; j < len(c.Realm); j++ {
		if b := c.Realm[j]; b < ' ' || b >= 0x7f || b == '"' || b == '\\' {
			return fmt.Errorf("%w: Realm must be printable ASCII without quotes or backslashes", ErrInvalidConfig)
		}
	}
	switch c.Algorithm {
	case "", AlgorithmMD5, AlgorithmSHA256:
	default:
		return fmt.Errorf("%w: Algorithm must be %s or %s", ErrInvalidConfig, AlgorithmMD5, AlgorithmSHA256)
	}
	for u := range c.Users {
		if u == "" || len(u) > maxParamLen {
			return fmt.Errorf("%w: a user name must be 1 to %d bytes", ErrInvalidConfig, maxParamLen)
		}
	}
	return nil
}

// withDefaults fills the zero fields.
func (c Config) withDefaults() Config {
	if c.Rate == 0 {
		c.Rate = DefaultRate
	}
	if c.Burst == 0 {
		c.Burst = max(1, int(math.Ceil(2*c.Rate)))
	}
	if c.BlockFor == 0 {
		c.BlockFor = DefaultBlockFor
	}
	if c.MaxSources == 0 {
		c.MaxSources = DefaultMaxSources
	}
	if c.MaxMessageBytes == 0 {
		c.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if c.MaxDialogsPerSource == 0 {
		c.MaxDialogsPerSource = DefaultMaxDialogsPerSource
	}
	if c.Realm == "" {
		c.Realm = DefaultRealm
	}
	if c.Algorithm == "" {
		c.Algorithm = DefaultAlgorithm
	}
	if c.NonceTTL == 0 {
		c.NonceTTL = DefaultNonceTTL
	}
	if c.MaxPending == 0 {
		c.MaxPending = DefaultMaxPending
	}
	return c
}
