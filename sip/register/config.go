package register

import (
	"fmt"
	"strings"
	"time"

	"github.com/emiago/sipgo/sip"
	"github.com/rs/zerolog"
)

// Credentials answer the registrar's digest challenge.
type Credentials struct{ User, Password string }

// Config is one registration.
type Config struct {
	// Trunk names the registration in logs and metrics (the agent
	// file's key, never a number).
	Trunk string
	// Registrar is the Request-URI of the REGISTER: "sip:carrier.example".
	Registrar string
	// AOR is the address of record, user@domain (To and From).
	AOR string
	// Contact is our binding: "sip:user@host:port" of the listener
	// (signal.Server.ListenContact).
	Contact string
	// Transport is "UDP", "TCP" or "TLS"; "" leaves it to the URIs.
	Transport string
	// OutboundProxy ("" none) is the first Route, with lr.
	OutboundProxy string
	// Routes is a pre-loaded Route set, after the proxy.
	Routes []string
	// Auth answers challenges; nil: a challenge fails the registration.
	Auth *Credentials
	// Expires is what we ask (default 3600 s); the registrar's answer wins.
	Expires time.Duration
	// Margin bounds how early we refresh: at expiry - min(expiry/2,
	// Margin). Default 30 s.
	Margin time.Duration
	// BackoffMin, BackoffMax and Jitter shape the wait after a failure:
	// BackoffMin x 2^(failures-1), at most BackoffMax, less a random
	// share up to Jitter (0..1). Defaults 2 s, 5 min, 0.2.
	BackoffMin, BackoffMax time.Duration
	Jitter                 float64
	// MaxAuthAttempts is how many challenges in a row we answer
	// (default 2).
	MaxAuthAttempts int
	// RequestTimeout bounds one REGISTER (default 32 s, Timer F).
	RequestTimeout time.Duration
	// UnregisterTimeout bounds the REGISTER of Close (default 5 s).
	UnregisterTimeout time.Duration
	// Seed seeds the jitter and the tags (0: random).
	Seed uint64
	Log  zerolog.Logger
}

func (c Config) withDefaults() Config {
	if c.Expires == 0 {
		c.Expires = time.Hour
	}
	if c.Margin == 0 {
		c.Margin = 30 * time.Second
	}
	if c.BackoffMin == 0 {
		c.BackoffMin = 2 * time.Second
	}
	if c.BackoffMax == 0 {
		c.BackoffMax = 5 * time.Minute
	}
	if c.Jitter == 0 {
		c.Jitter = 0.2
	}
	if c.MaxAuthAttempts == 0 {
		c.MaxAuthAttempts = 2
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = 32 * time.Second
	}
	if c.UnregisterTimeout == 0 {
		c.UnregisterTimeout = 5 * time.Second
	}
	c.Transport = strings.ToUpper(c.Transport)
	return c
}

// parsed are the Config's URIs.
type parsed struct {
	registrar, aor, contact sip.Uri
	routes                  []sip.Uri
}

// Validate checks a config after defaults; the errors name the field,
// never its value.
func (c Config) Validate() error {
	_, err := c.parse()
	return err
}

func (c Config) parse() (parsed, error) {
	var p parsed
	bad := func(what string) (parsed, error) {
		return parsed{}, fmt.Errorf("%w: %s", ErrInvalidConfig, what)
	}
	switch {
	case c.Trunk == "":
		return bad("no trunk name")
	case c.Expires < time.Second || c.Expires > 0xffffffff*time.Second:
		return bad("expires out of range")
	case c.Margin < 0 || c.BackoffMin <= 0 || c.BackoffMax < c.BackoffMin:
		return bad("margin or backoff out of range")
	case c.Jitter < 0 || c.Jitter >= 1:
		return bad("jitter out of range (0..1)")
	case c.MaxAuthAttempts < 1 || c.RequestTimeout <= 0 || c.UnregisterTimeout <= 0:
		return bad("attempts or timeouts out of range")
	case c.Auth != nil && c.Auth.User == "":
		return bad("credentials without a user")
	}
	switch c.Transport {
	case "", "UDP", "TCP", "TLS":
	default:
		return bad("transport (want UDP, TCP or TLS)")
	}
	if err := parseURI(c.Registrar, &p.registrar); err != nil {
		return bad("registrar is not a SIP URI")
	}
	aor := c.AOR
	if !strings.HasPrefix(aor, "sip:") && !strings.HasPrefix(aor, "sips:") {
		aor = "sip:" + aor
	}
	if err := parseURI(aor, &p.aor); err != nil || p.aor.User == "" {
		return bad("aor is not user@domain")
	}
	if err := parseURI(c.Contact, &p.contact); err != nil {
		return bad("contact is not a SIP URI")
	}
	routes := c.Routes
	if c.OutboundProxy != "" {
		routes = append([]string{c.OutboundProxy}, routes...)
	}
	for i, r := range routes {
		var u sip.Uri
		if err := parseURI(r, &u); err != nil {
			return bad("a route is not a SIP URI")
		}
		if i == 0 && c.OutboundProxy != "" && !u.UriParams.Has("lr") {
			if u.UriParams == nil {
				u.UriParams = sip.NewParams()
			}
			u.UriParams.Add("lr", "")
		}
		p.routes = append(p.routes, u)
	}
	return p, nil
}

func parseURI(s string, u *sip.Uri) error {
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(s), "<"), ">"))
	if !strings.HasPrefix(s, "sip:") && !strings.HasPrefix(s, "sips:") {
		return ErrInvalidConfig
	}
	if strings.ContainsAny(s, "\r\n\x00 ") {
		return ErrInvalidConfig
	}
	if err := sip.ParseUri(s, u); err != nil || u.Host == "" {
		return ErrInvalidConfig
	}
	return nil
}
