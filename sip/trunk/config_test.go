package trunk

import (
	"errors"
	"math"
	"net/netip"
	"strings"
	"testing"
)

func TestConfigValidate(t *testing.T) {
	v4 := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	tests := []struct {
		name string
		cfg  Config
		want string // a part of the error; "" for valid
	}{
		{"allow list required", Config{}, "Allow must list"},
		{"open trunk spelled out", Config{Allow: open()}, ""},
		{"invalid prefix", Config{Allow: []netip.Prefix{{}}}, "not a valid prefix"},
		{"mapped prefix", Config{Allow: []netip.Prefix{netip.MustParsePrefix("::ffff:10.0.0.0/104")}}, "IPv4-mapped"},
		{"negative rate", Config{Allow: v4, Rate: -1}, "Rate"},
		{"NaN rate", Config{Allow: v4, Rate: math.NaN()}, "Rate"},
		{"infinite rate", Config{Allow: v4, Rate: math.Inf(1)}, "Rate"},
		{"negative burst", Config{Allow: v4, Burst: -1}, "negative"},
		{"negative block", Config{Allow: v4, BlockFor: -1}, "negative"},
		{"negative pending", Config{Allow: v4, MaxPending: -1}, "negative"},
		{"tiny message bound", Config{Allow: v4, MaxMessageBytes: 100}, "MaxMessageBytes"},
		{"empty scanner", Config{Allow: v4, Scanners: []string{""}}, "Scanners[0]"},
		{"scanner with space", Config{Allow: v4, Scanners: []string{"a b"}}, "Scanners[0]"},
		{"scanner ok", Config{Allow: v4, Scanners: []string{"evil-dialer"}}, ""},
		{"quote in realm", Config{Allow: v4, Realm: `a"b`}, "Realm"},
		{"unknown algorithm", Config{Allow: v4, Algorithm: "SHA-512-256"}, "Algorithm"},
		{"sha-256", Config{Allow: v4, Algorithm: AlgorithmSHA256}, ""},
		{"empty user", Config{Allow: v4, Users: map[string]string{"": "x"}}, "user name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate = %v, want ErrInvalidConfig with %q", err, tc.want)
			}
			if _, err := New(tc.cfg); !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("New = %v, want ErrInvalidConfig", err)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	c := Config{Allow: open()}.withDefaults()
	if c.Rate != DefaultRate || c.Burst != 2*DefaultRate || c.BlockFor != DefaultBlockFor ||
		c.MaxSources != DefaultMaxSources || c.MaxPending != DefaultMaxPending ||
		c.NonceTTL != DefaultNonceTTL || c.Realm != DefaultRealm || c.Algorithm != AlgorithmMD5 {
		t.Fatalf("defaults: %+v", c)
	}
	if c := (Config{Allow: open(), Rate: 0.2}).withDefaults(); c.Burst != 1 {
		t.Fatalf("burst of rate 0.2 = %d, want 1", c.Burst)
	}
}

// The policy keeps its own copy of the users: a caller changing its map
// afterwards changes nothing.
func TestUsersCopied(t *testing.T) {
	users := map[string]string{"alice": "pw"}
	p := newPolicy(t, Config{Users: users})
	users["alice"] = "other"
	if p.users["alice"] != "pw" {
		t.Fatal("the policy shares the caller's users map")
	}
}
