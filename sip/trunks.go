package sip

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Trunk transfer and DTMF modes.
const (
	DTMFAuto    = "auto"    // RFC 4733 when negotiated, else SIP INFO
	DTMFRFC4733 = "rfc4733" // telephone-event packets only
	DTMFInfo    = "info"    // SIP INFO (application/dtmf-relay) only

	TransferRefer  = "refer"  // blind transfer by REFER (RFC 3515)
	TransferBridge = "bridge" // a second leg bridged by the engine
)

// Trunk defaults.
const (
	// DefaultCallsPerSecond is a trunk's rate of new outbound calls
	// when none is set.
	DefaultCallsPerSecond = 10
	// DefaultRegisterExpires is a registration's asked lifetime.
	DefaultRegisterExpires = time.Hour
)

// TrunkConfig is one carrier (or PBX) we place calls through.
type TrunkConfig struct {
	// Address is where calls go: host[:port] or a sip:/sips: URI
	// (its user part, if any, is replaced by the number dialled).
	Address string
	// Transport is UDP, TCP or TLS; "" is UDP (a sips: Address: TLS).
	Transport string
	// OutboundProxy is a proxy URI requests go through ("" none).
	OutboundProxy string
	// Routes is a pre-loaded Route set (after the proxy).
	Routes []string
	// AuthUser and AuthPassword answer the trunk's digest challenge;
	// both or neither.
	AuthUser, AuthPassword string
	// From is the default caller id: a number or a sip: URI.
	From string
	// MaxCalls bounds the trunk's live outbound calls; 0 no bound but
	// the server's.
	MaxCalls int
	// CallsPerSecond is the rate of new outbound calls (a token bucket
	// with a burst of one second's worth, at least 1); 0 is
	// DefaultCallsPerSecond.
	CallsPerSecond float64
	// EarlyMedia plays a 18x's audio to the call's input; off, early
	// media is ignored (counted).
	EarlyMedia bool
	// DTMF is how keys are sent: DTMFAuto (""), DTMFRFC4733, DTMFInfo.
	DTMF string
	// Transfer is how a call is handed on: TransferRefer (""),
	// TransferBridge.
	Transfer string
	// Register keeps a registration with the trunk (REGISTER with the
	// trunk's credentials); RegisterExpires its lifetime (0: default).
	Register        bool
	RegisterExpires time.Duration
}

func (t TrunkConfig) withDefaults() TrunkConfig {
	if t.Transport == "" {
		t.Transport = "UDP"
		if strings.HasPrefix(strings.ToLower(t.Address), "sips:") {
			t.Transport = "TLS"
		}
	}
	t.Transport = strings.ToUpper(t.Transport)
	if t.CallsPerSecond == 0 {
		t.CallsPerSecond = DefaultCallsPerSecond
	}
	if t.DTMF == "" {
		t.DTMF = DTMFAuto
	}
	if t.Transfer == "" {
		t.Transfer = TransferRefer
	}
	if t.RegisterExpires == 0 {
		t.RegisterExpires = DefaultRegisterExpires
	}
	return t
}

// Validate checks a trunk after defaults. Errors name the field, never
// its value (an address or a password may be private).
func (t TrunkConfig) Validate() error {
	for name, v := range map[string]string{
		"address": t.Address, "transport": t.Transport, "outbound_proxy": t.OutboundProxy,
		"auth_user": t.AuthUser, "auth_password": t.AuthPassword, "from": t.From,
	} {
		if strings.ContainsAny(v, "\r\n\x00") {
			return fmt.Errorf("%w: %s holds CR, LF or NUL", ErrInvalidConfig, name)
		}
	}
	if _, err := trunkHostPort(t.Address); err != nil {
		return err
	}
	switch t.Transport {
	case "UDP", "TCP", "TLS":
	default:
		return fmt.Errorf("%w: transport %q (want UDP, TCP or TLS)", ErrInvalidConfig, t.Transport)
	}
	if t.OutboundProxy != "" && !isSIPURI(t.OutboundProxy) {
		return fmt.Errorf("%w: outbound_proxy is not a sip: or sips: URI", ErrInvalidConfig)
	}
	for i, r := range t.Routes {
		if strings.ContainsAny(r, "\r\n\x00") || !isSIPURI(r) {
			return fmt.Errorf("%w: routes[%d] is not a sip: or sips: URI", ErrInvalidConfig, i)
		}
	}
	if (t.AuthUser == "") != (t.AuthPassword == "") {
		return fmt.Errorf("%w: auth_user and auth_password go together", ErrInvalidConfig)
	}
	if t.From != "" && !isSIPURI(t.From) && !validNumber(t.From) {
		return fmt.Errorf("%w: from is neither a number nor a sip: URI", ErrInvalidConfig)
	}
	switch {
	case t.MaxCalls < 0:
		return fmt.Errorf("%w: max_calls %d", ErrInvalidConfig, t.MaxCalls)
	case t.CallsPerSecond <= 0 || math.IsNaN(t.CallsPerSecond) || math.IsInf(t.CallsPerSecond, 0):
		return fmt.Errorf("%w: calls_per_second %v (want > 0)", ErrInvalidConfig, t.CallsPerSecond)
	case t.RegisterExpires < time.Minute:
		return fmt.Errorf("%w: register_expires %v (want at least 1m)", ErrInvalidConfig, t.RegisterExpires)
	}
	switch t.DTMF {
	case DTMFAuto, DTMFRFC4733, DTMFInfo:
	default:
		return fmt.Errorf("%w: dtmf %q (want auto, rfc4733 or info)", ErrInvalidConfig, t.DTMF)
	}
	switch t.Transfer {
	case TransferRefer, TransferBridge:
	default:
		return fmt.Errorf("%w: transfer %q (want refer or bridge)", ErrInvalidConfig, t.Transfer)
	}
	return nil
}

// Target is the Request-URI of a call to number through the trunk.
func (t TrunkConfig) Target(number string) (string, error) {
	if !validNumber(number) {
		return "", fmt.Errorf("%w: the number dialled has characters a SIP user part may not", ErrInvalidDial)
	}
	hp, err := trunkHostPort(t.Address)
	if err != nil {
		return "", err
	}
	scheme := "sip:"
	if strings.HasPrefix(strings.ToLower(t.Address), "sips:") {
		scheme = "sips:"
	}
	uri := scheme + number + "@" + hp
	if tr := strings.ToLower(t.Transport); tr != "" && tr != "udp" {
		uri += ";transport=" + tr
	}
	return uri, nil
}

// isSIPURI says whether v starts like a SIP URI with a host.
func isSIPURI(v string) bool {
	l := strings.ToLower(v)
	rest, ok := strings.CutPrefix(l, "sip:")
	if !ok {
		rest, ok = strings.CutPrefix(l, "sips:")
	}
	return ok && rest != "" && !strings.ContainsAny(rest, " \t\r\n\x00<>\"")
}

// validNumber says whether v may be a SIP user part we dial: digits, an
// optional leading +, and * # . - _ and letters (extensions by name).
func validNumber(v string) bool {
	if v == "" || len(v) > 64 {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case c == '+' && i == 0:
		case c == '*' || c == '#' || c == '.' || c == '-' || c == '_':
		default:
			return false
		}
	}
	return true
}

// trunkHostPort is the host[:port] of a trunk's Address.
func trunkHostPort(addr string) (string, error) {
	hp := addr
	if l := strings.ToLower(addr); strings.HasPrefix(l, "sip:") || strings.HasPrefix(l, "sips:") {
		_, hp, _ = strings.Cut(addr, ":")
		if _, after, ok := strings.Cut(hp, "@"); ok {
			hp = after
		}
		hp, _, _ = strings.Cut(hp, ";")
	}
	if hp == "" || strings.ContainsAny(hp, " \t\r\n\x00<>\"@;/?") {
		return "", fmt.Errorf("%w: address is not host[:port] or a sip: URI", ErrInvalidConfig)
	}
	if strings.HasPrefix(hp, "[") { // [v6]:port
		end := strings.IndexByte(hp, ']')
		if end < 0 {
			return "", fmt.Errorf("%w: address has an unclosed IPv6 bracket", ErrInvalidConfig)
		}
		if rest := hp[end+1:]; rest != "" {
			if err := checkPort(strings.TrimPrefix(rest, ":"), rest[0] == ':'); err != nil {
				return "", err
			}
		}
		return hp, nil
	}
	if host, port, ok := strings.Cut(hp, ":"); ok {
		if host == "" {
			return "", fmt.Errorf("%w: address has no host", ErrInvalidConfig)
		}
		if err := checkPort(port, true); err != nil {
			return "", err
		}
	}
	return hp, nil
}

func checkPort(p string, colon bool) error {
	n, err := strconv.Atoi(p)
	if !colon || err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%w: address has a bad port", ErrInvalidConfig)
	}
	return nil
}

// trunkLimits are one trunk's outbound limits: live calls under
// MaxCalls, new calls from a token bucket refilled at CallsPerSecond.
type trunkLimits struct {
	max   int
	rate  float64
	burst float64

	mu     sync.Mutex
	active int
	tokens float64
	last   time.Time
}

func newTrunkLimits(t TrunkConfig) *trunkLimits {
	return &trunkLimits{max: t.MaxCalls, rate: t.CallsPerSecond, burst: math.Max(1, t.CallsPerSecond), tokens: math.Max(1, t.CallsPerSecond)}
}

// acquire takes a slot and a token at now, or says which limit refused:
// a refusal takes neither. release gives the slot back (once).
func (l *trunkLimits) acquire(now time.Time) (release func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.last.IsZero() {
		if d := now.Sub(l.last); d > 0 {
			l.tokens = math.Min(l.burst, l.tokens+d.Seconds()*l.rate)
		}
	}
	if l.last.IsZero() || now.After(l.last) {
		l.last = now
	}
	if l.max > 0 && l.active >= l.max {
		return nil, fmt.Errorf("%w: the trunk's max_calls are live", ErrDialLimited)
	}
	if l.tokens < 1 {
		return nil, fmt.Errorf("%w: the trunk's calls_per_second are spent", ErrDialLimited)
	}
	l.tokens--
	l.active++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			l.active--
			l.mu.Unlock()
		})
	}, nil
}

// live is the number of slots held.
func (l *trunkLimits) live() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.active
}
