package agentfile

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Bounds and defaults of [transports.sip.trunks.NAME]. The defaults are
// sip.TrunkConfig's (sip.DefaultCallsPerSecond,
// sip.DefaultRegisterExpires); cmd/brisvox's TestTrunkDefaults keeps
// them equal, since this package may not import sip.
const (
	maxTrunks              = 32
	maxTrunkName           = 32
	defaultCallsPerSecond  = 10
	defaultRegisterExpires = time.Hour
)

// Trunk is one [transports.sip.trunks.NAME] table: a carrier (or PBX)
// outbound calls are placed through. Its fields map one to one onto
// sip.TrunkConfig (cmd/brisvox's sipTrunks builds it); the file holds no
// password, only the name of the variable that does.
type Trunk struct {
	// Name is the table's name: letters, digits, '-' and '_'.
	Name string
	// Address is where calls go: host[:port] or a sip:/sips: URI;
	// required.
	Address Value[string]
	// Transport is "udp", "tcp" or "tls"; default "tls" for a sips:
	// address, else "udp".
	Transport Value[string]
	// OutboundProxy is a sip: or sips: URI requests go through ("": none).
	OutboundProxy Value[string]
	// Routes is a pre-loaded Route set of sip: or sips: URIs.
	Routes []Value[string]
	// AuthUser and AuthPasswordEnv answer the trunk's digest challenge:
	// both or neither; the password is read from the named variable.
	AuthUser        Value[string]
	AuthPasswordEnv Value[string]
	// From is the default caller id: a number or a sip: URI ("": each
	// dial gives one).
	From Value[string]
	// MaxCalls bounds the trunk's live outbound calls (0: none but the
	// server's).
	MaxCalls Value[int]
	// CallsPerSecond is the rate of new outbound calls (default 10).
	CallsPerSecond Value[float64]
	// EarlyMedia plays a 18x's audio to the call's input (default false).
	EarlyMedia Value[bool]
	// DTMF is how keys are sent: "auto" (default), "rfc4733" or "info".
	DTMF Value[string]
	// Transfer is how a call is handed on: "refer" (default) or
	// "bridge".
	Transfer Value[string]
	// Register keeps a registration with the trunk (needs AuthUser);
	// RegisterExpires is its asked lifetime (1m..24h, default 1h).
	Register        Value[bool]
	RegisterExpires Value[time.Duration]
	Pos             Pos // of the table's name
}

// validTrunkName tells whether a trunk's name is usable as a metric
// label and in the operator API.
func validTrunkName(s string) bool {
	if s == "" || len(s) > maxTrunkName {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// trunks reads [transports.sip.trunks]: one table per trunk, sorted by
// name.
func (w *walker) trunks(t *tbl) []Trunk {
	if !t.present() {
		return nil
	}
	var out []Trunk
	over := false
	for _, e := range t.n.entries {
		path := join(t.path, e.key)
		switch {
		case !validTrunkName(e.key):
			w.at(e.keyPos, path, fmt.Sprintf("%s is not a trunk name: want 1 to %d letters, digits, '-' or '_'", showValue(e.key), maxTrunkName),
				"name the carrier, e.g. "+w.format.Table(join(t.path, "carrier")))
		case e.val.kind != kTable:
			w.at(e.val.pos, path, "want a table, got "+e.val.kind.what(), "write each trunk as a table, e.g. "+w.format.Table(path)+" with "+w.format.Setting("address", "sip.carrier.example:5060"))
		case len(out) == maxTrunks:
			if !over {
				over = true
				w.at(e.keyPos, path, fmt.Sprintf("more than %d trunks", maxTrunks), "an agent places calls through a few carriers: remove the trunks it does not use")
			}
		default:
			out = append(out, w.trunk(&tbl{w: w, n: e.val, path: path, pos: e.keyPos}, e.key))
		}
	}
	slices.SortFunc(out, func(a, b Trunk) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// trunk reads one [transports.sip.trunks.NAME], with the checks of
// sip.TrunkConfig.Validate reported at the values.
func (w *walker) trunk(t *tbl, name string) Trunk {
	tr := Trunk{Name: name, Pos: t.pos}
	f := w.format
	tr.Address = w.oneLine(t, "address")
	switch a := tr.Address; {
	case !a.Set && t.n.get("address") == nil:
		w.missing(t.pos, join(t.path, "address"), "missing: a trunk needs the address calls go to", "e.g. "+f.Setting("address", "sip.carrier.example:5060")+" or "+f.Setting("address", "sip:carrier.example;transport=tcp"))
	case a.Set:
		if msg := trunkAddress(a.V); msg != "" {
			w.at(a.Pos, join(t.path, "address"), "address "+msg, "host[:port] or a sip: URI, e.g. "+f.Setting("address", "sip.carrier.example:5060")+" or "+f.Setting("address", "[2001:db8::1]:5060"))
			tr.Address.V, tr.Address.Set = "", false
		}
	}
	def := "udp"
	if strings.HasPrefix(strings.ToLower(tr.Address.V), "sips:") {
		def = "tls"
	}
	tr.Transport = t.oneOf("transport", def, "udp", "tcp", "tls")
	tr.OutboundProxy = w.oneLine(t, "outbound_proxy")
	if p := tr.OutboundProxy; p.Set && p.V != "" && !isSIPURI(p.V) {
		w.at(p.Pos, join(t.path, "outbound_proxy"), showValue(p.V)+" is not a sip: or sips: URI", "e.g. "+f.Setting("outbound_proxy", "sip:proxy.carrier.example;lr"))
		tr.OutboundProxy.V, tr.OutboundProxy.Set = "", false
	}
	tr.Routes = t.list("routes", func(s string) (string, string) {
		if strings.ContainsAny(s, "\r\n\x00") {
			return "holds CR, LF or NUL", "write each route on one line"
		}
		if !isSIPURI(s) {
			return showValue(s) + " is not a sip: or sips: URI", "e.g. " + f.Setting("routes", []string{"sip:edge.carrier.example;lr"})
		}
		return "", ""
	})
	tr.AuthUser = w.oneLine(t, "auth_user")
	tr.AuthPasswordEnv = w.envVar(t, "auth_password_env", "BRISVOX_TRUNK_PASSWORD", true)
	if (tr.AuthUser.V == "") != (tr.AuthPasswordEnv.V == "") {
		pos := tr.AuthUser.Pos
		if tr.AuthUser.V == "" {
			pos = tr.AuthPasswordEnv.Pos
		}
		w.at(pos, t.path, "digest authentication needs both auth_user and auth_password_env",
			f.Setting("auth_user", "brisvox")+" and "+f.Setting("auth_password_env", "BRISVOX_TRUNK_PASSWORD")+" (the password is never written in the file)")
	}
	tr.From = w.oneLine(t, "from")
	if v := tr.From; v.Set && v.V != "" && !isSIPURI(v.V) && !validNumber(v.V) {
		w.at(v.Pos, join(t.path, "from"), "from is neither a number nor a sip: URI", "the caller id the trunk lets you present, e.g. "+f.Setting("from", "+33123456789")+" or "+f.Setting("from", "sip:desk@pbx.example"))
		tr.From.V, tr.From.Set = "", false
	}
	tr.MaxCalls = t.integer("max_calls", 0, 0, 100_000)
	tr.CallsPerSecond = w.rate(t, "calls_per_second", defaultCallsPerSecond, 1000)
	tr.EarlyMedia = t.boolean("early_media", false)
	tr.DTMF = t.oneOf("dtmf", "auto", "auto", "rfc4733", "info")
	tr.Transfer = t.oneOf("transfer", "refer", "refer", "bridge")
	tr.Register = t.boolean("register", false)
	tr.RegisterExpires = t.duration("register_expires", defaultRegisterExpires, time.Minute, 24*time.Hour)
	switch {
	case tr.Register.V && tr.AuthUser.V == "":
		w.at(tr.Register.Pos, join(t.path, "register"), "registration needs auth_user: it is the user part of the address registered",
			"add "+f.Setting("auth_user", "brisvox")+" and "+f.Setting("auth_password_env", "BRISVOX_TRUNK_PASSWORD")+", or remove register")
	case tr.RegisterExpires.Set && !tr.Register.V:
		w.at(tr.RegisterExpires.Pos, join(t.path, "register_expires"), "register_expires is the lifetime of a registration, and register is off",
			"set "+f.Setting("register", true)+", or remove register_expires")
	}
	t.done("key", " of a trunk", nil)
	return tr
}

// oneLine reads a string that goes into a SIP header: CR, LF and NUL are
// refused (a header injection), and the value is not shown.
func (w *walker) oneLine(t *tbl, key string) Value[string] {
	v := t.str(key, "")
	if v.Set && strings.ContainsAny(v.V, "\r\n\x00") {
		w.at(v.Pos, join(t.path, key), "holds CR, LF or NUL (the value is not shown)", "write it on one line, without control characters")
		v.V, v.Set = "", false
	}
	return v
}

// The checks below are sip's (isSIPURI, validNumber, trunkHostPort in
// sip/trunks.go), copied because this package may not import sip;
// cmd/brisvox's TestTrunksAgree runs both over the same values.

// isSIPURI says whether v starts like a SIP URI with a host.
func isSIPURI(v string) bool {
	l := strings.ToLower(v)
	rest, ok := strings.CutPrefix(l, "sip:")
	if !ok {
		rest, ok = strings.CutPrefix(l, "sips:")
	}
	return ok && rest != "" && !strings.ContainsAny(rest, " \t\r\n\x00<>\"")
}

// validNumber says whether v may be a SIP user part: digits, an optional
// leading +, and * # . - _ and letters.
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

// trunkAddress says what is wrong with a trunk's address ("": nothing):
// host[:port] or a sip:/sips: URI whose host part is one.
func trunkAddress(addr string) string {
	hp := addr
	if l := strings.ToLower(addr); strings.HasPrefix(l, "sip:") || strings.HasPrefix(l, "sips:") {
		_, hp, _ = strings.Cut(addr, ":")
		if _, after, ok := strings.Cut(hp, "@"); ok {
			hp = after
		}
		hp, _, _ = strings.Cut(hp, ";")
	}
	if hp == "" || strings.ContainsAny(hp, " \t\r\n\x00<>\"@;/?") {
		return "is not host[:port] or a sip: URI"
	}
	if strings.HasPrefix(hp, "[") {
		end := strings.IndexByte(hp, ']')
		if end < 0 {
			return "has an unclosed IPv6 bracket"
		}
		if rest := hp[end+1:]; rest != "" && !goodPort(strings.TrimPrefix(rest, ":"), rest[0] == ':') {
			return "has a bad port"
		}
		return ""
	}
	if host, port, ok := strings.Cut(hp, ":"); ok {
		if host == "" {
			return "has no host"
		}
		if !goodPort(port, true) {
			return "has a bad port"
		}
	}
	return ""
}

func goodPort(p string, colon bool) bool {
	n, err := strconv.Atoi(p)
	return colon && err == nil && n >= 1 && n <= 65535
}
