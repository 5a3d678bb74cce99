package agentfile

import (
	"fmt"
	"net/netip"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/brisvox/brisvox/providers"
)

// SIP is the SIP trunk transport: signalling on sipgo, media on our own
// RTP sockets (sip.Config). Addresses are the file's: a trunk is
// configured with the addresses its carrier is told.
type SIP struct {
	Enabled Value[bool]
	// Public: the owner says anyone the allowlist lets through may call
	// (default false).
	Public Value[bool]
	// UDP, TCP and TLS are the listen addresses (host:port); "" leaves a
	// transport closed. At least one is needed.
	UDP, TCP, TLS Value[string]
	// TLSCert and TLSKey are PEM files, needed with TLS.
	TLSCert, TLSKey Value[string]
	// PublicAddress goes on the c= line and in the Contact when the
	// engine is behind NAT ("": the local address).
	PublicAddress Value[string]
	// RTPAddress is where the RTP sockets are bound ("": the host of the
	// first listen address).
	RTPAddress Value[string]
	// RTPPortMin and RTPPortMax bound the RTP ports (even ones; RTCP on
	// the next unless rtcp-mux).
	RTPPortMin, RTPPortMax Value[int]
	// Codecs in order of preference: opus, G722, PCMU, PCMA.
	Codecs []Value[string]
	// Ptime is the packet time we send unless asked for another.
	Ptime Value[time.Duration]
	// Ringing is the provisional answer: "180", "183" or "none".
	Ringing Value[string]
	// MediaTimeout ends a call that sends no RTP for this long (not while
	// on hold).
	MediaTimeout Value[time.Duration]
	// SessionExpires and MinSE are the session timer (RFC 4028).
	SessionExpires, MinSE Value[time.Duration]
	// SymmetricRTP lets media come from another address than the SDP
	// said (a caller behind NAT); off: only the signalled address latches.
	SymmetricRTP Value[bool]
	// Rate is the rate the pipeline hears and speaks: 16000 (G.711 is
	// upsampled once) or 8000.
	Rate Value[int]
	// Allow lists the source prefixes (CIDR) that may send SIP at all.
	Allow []Value[string]
	// RateLimit (messages per second), Burst and BlockFor are the
	// per-source flood limit.
	RateLimit Value[float64]
	Burst     Value[int]
	BlockFor  Value[time.Duration]
	// MaxDialogsPerSource bounds one source's open calls.
	MaxDialogsPerSource Value[int]
	// ScannerUserAgents are dropped silently, beside the built-in list.
	ScannerUserAgents []Value[string]
	// AuthUser and AuthPasswordEnv turn on digest authentication of
	// INVITEs: the password is read from the named variable.
	AuthUser        Value[string]
	AuthPasswordEnv Value[string]
	AuthRealm       Value[string]
	// Trunks are the [transports.sip.trunks.NAME] tables (trunks.go),
	// sorted by name: the carriers outbound calls go through.
	Trunks []Trunk
	// TransferTrunk names the trunk whose transfer mode (and second leg,
	// for "bridge") the calls that came in use; "": they are handed on
	// by REFER.
	TransferTrunk Value[string]
	Pos           Pos
	// codecsWritten: the file has a codecs list (perhaps all refused).
	codecsWritten bool
}

// Listens are the enabled listen addresses by network.
func (s SIP) Listens() map[string]string {
	out := map[string]string{}
	for n, v := range map[string]Value[string]{"udp": s.UDP, "tcp": s.TCP, "tls": s.TLS} {
		if v.V != "" {
			out[n] = v.V
		}
	}
	return out
}

// DTMF says what the caller's key presses do (turn.Config.DTMF).
type DTMF struct {
	// Mode: "collect" (digits become the caller's turn), "barge" (the
	// first digit also cuts the bot) or "ignore".
	Mode              Value[string]
	InterDigitTimeout Value[time.Duration]
	// Terminator ends a collection at once ("": none): one of # or *.
	Terminator Value[string]
	MaxDigits  Value[int]
	Pos        Pos
}

// SIPCodecs are the codec names of transports.sip.codecs, as SDP spells
// them.
var sipCodecs = []string{"opus", "G722", "PCMU", "PCMA"}

// sip reads [transports.sip].
func (w *walker) sip(t *tbl) SIP {
	s := SIP{Pos: t.pos, Enabled: t.boolean("enabled", t.present()), Public: t.boolean("public", false)}
	// written tells whether a key is in the file: a bad value there is
	// reported once, not again as a missing one.
	written := func(key string) bool { return t.n != nil && t.n.get(key) != nil }
	addr := func(key string) Value[string] {
		v := t.str(key, "")
		if v.Set && v.V != "" {
			if _, err := netip.ParseAddrPort(v.V); err != nil {
				w.at(v.Pos, join(t.path, key), showValue(v.V)+" is not an IP address and port", "e.g. "+w.format.Setting(key, "127.0.0.1:5060")+" or "+w.format.Setting(key, "[::1]:5060"))
				v.V, v.Set = "", false
			}
		}
		return v
	}
	s.UDP, s.TCP, s.TLS = addr("udp"), addr("tcp"), addr("tls")
	s.TLSCert, s.TLSKey = t.str("tls_cert", ""), t.str("tls_key", "")
	ip := func(key string) Value[string] {
		v := t.str(key, "")
		if v.Set && v.V != "" {
			if _, err := netip.ParseAddr(v.V); err != nil {
				w.at(v.Pos, join(t.path, key), showValue(v.V)+" is not an IP address", "an address, not a name (it goes on the SDP c= line), e.g. "+w.format.Setting(key, "203.0.113.7"))
				v.V, v.Set = "", false
			}
		}
		return v
	}
	s.PublicAddress, s.RTPAddress = ip("public_address"), ip("rtp_address")
	s.RTPPortMin = t.integer("rtp_port_min", 10000, 1024, 65534)
	s.RTPPortMax = t.integer("rtp_port_max", 20000, 1025, 65535)
	seen := map[string]bool{}
	s.Codecs = t.list("codecs", func(c string) (string, string) {
		for _, k := range sipCodecs {
			if strings.EqualFold(c, k) {
				if seen[k] {
					return k + " is listed twice", "remove the second one"
				}
				seen[k] = true
				return "", ""
			}
		}
		return showValue(c) + " is not one of " + strings.Join(sipCodecs, ", "), closestHint(c, sipCodecs)
	})
	for i := range s.Codecs {
		for _, k := range sipCodecs {
			if strings.EqualFold(s.Codecs[i].V, k) {
				s.Codecs[i].V = k
			}
		}
	}
	s.codecsWritten = written("codecs")
	s.Ptime = t.duration("ptime", 20*time.Millisecond, 10*time.Millisecond, 60*time.Millisecond)
	if p := s.Ptime; p.Set && p.V%(10*time.Millisecond) != 0 {
		w.at(p.Pos, join(t.path, "ptime"), fmt.Sprintf("%v is not a multiple of 10ms", p.V), w.format.Setting("ptime", 20*time.Millisecond)+" is what every trunk takes")
		s.Ptime.V, s.Ptime.Set = 20*time.Millisecond, false
	}
	s.Ringing = t.oneOf("ringing", "180", "180", "183", "none")
	s.MediaTimeout = t.duration("media_timeout", 30*time.Second, 5*time.Second, 10*time.Minute)
	s.SessionExpires = t.duration("session_expires", 30*time.Minute, 90*time.Second, 24*time.Hour)
	s.MinSE = t.duration("min_se", 90*time.Second, 90*time.Second, 24*time.Hour)
	if s.MinSE.V > s.SessionExpires.V {
		w.at(s.MinSE.Pos, join(t.path, "min_se"), fmt.Sprintf("%v is above session_expires %v", s.MinSE.V, s.SessionExpires.V), "min_se is the shortest interval a caller may ask for")
	}
	s.SymmetricRTP = t.boolean("symmetric_rtp", false)
	s.Rate = t.integer("rate", 16000, 0, 48000)
	if r := s.Rate; r.Set && r.V != 8000 && r.V != 16000 {
		w.at(r.Pos, join(t.path, "rate"), fmt.Sprintf("%d is not one of 8000, 16000", r.V), "e.g. "+w.format.Setting("rate", 16000)+" (G.711 is upsampled once)")
		s.Rate.V, s.Rate.Set = 16000, false
	}
	s.Allow = t.list("allow", func(c string) (string, string) {
		if _, err := netip.ParsePrefix(c); err != nil {
			if _, err := netip.ParseAddr(c); err == nil {
				bits := "/32"
				if strings.Contains(c, ":") {
					bits = "/128"
				}
				return showValue(c) + " is an address, not a prefix", "for that one address write " + w.format.Setting("allow", []string{c + bits})
			}
			return showValue(c) + " is not a CIDR prefix", "e.g. " + w.format.Setting("allow", []string{"203.0.113.0/24", "2001:db8::/32"})
		}
		return "", ""
	})
	s.RateLimit = t.number("rate_limit", 100, 1, 10000)
	s.Burst = t.integer("burst", 200, 1, 100000)
	s.BlockFor = t.duration("block_for", time.Minute, time.Second, 24*time.Hour)
	s.MaxDialogsPerSource = t.integer("max_dialogs_per_source", 50, 1, 100000)
	s.ScannerUserAgents = t.list("scanner_user_agents", nil)
	s.AuthUser = t.str("auth_user", "")
	s.AuthPasswordEnv = t.str("auth_password_env", "")
	s.AuthRealm = t.str("auth_realm", "brisvox")
	s.Trunks = w.trunks(t.sub("trunks"))
	s.TransferTrunk = t.str("transfer_trunk", "")
	if tt := s.TransferTrunk; tt.Set && !slices.ContainsFunc(s.Trunks, func(tr Trunk) bool { return tr.Name == tt.V }) {
		names := make([]string, len(s.Trunks))
		for i, tr := range s.Trunks {
			names[i] = tr.Name
		}
		hint := "name a trunk of the file, e.g. " + w.format.Table("transports.sip.trunks.carrier") + " and " + w.format.Setting("transfer_trunk", "carrier") + ", or remove transfer_trunk"
		if len(names) > 0 {
			hint = closestHint(tt.V, names)
		}
		w.at(tt.Pos, join(t.path, "transfer_trunk"), showValue(tt.V)+" is not a trunk of this file", hint)
		s.TransferTrunk.V, s.TransferTrunk.Set = "", false
	}
	t.done("key", "", nil)
	if !s.Enabled.V {
		return s
	}
	if len(s.Listens()) == 0 && !written("udp") && !written("tcp") && !written("tls") {
		w.missing(t.pos, t.path, "no listen address: set udp, tcp or tls", "e.g. "+w.format.Setting("udp", "127.0.0.1:5060"))
	}
	if s.TLS.V != "" && (s.TLSCert.V == "" || s.TLSKey.V == "") {
		w.at(s.TLS.Pos, join(t.path, "tls"), "TLS needs a certificate and its key", w.format.Setting("tls_cert", "/etc/brisvox/sip.crt")+" and "+w.format.Setting("tls_key", "/etc/brisvox/sip.key"))
	}
	for _, f := range []Value[string]{s.TLSCert, s.TLSKey} {
		if f.V != "" {
			if _, err := os.Stat(f.V); err != nil {
				w.at(f.Pos, t.path, fmt.Sprintf("cannot read %s: %v", showValue(f.V), err), "give the path of a PEM file brisvox can read")
			}
		}
	}
	if s.RTPPortMin.V >= s.RTPPortMax.V {
		w.at(s.RTPPortMax.Pos, join(t.path, "rtp_port_max"), fmt.Sprintf("%d is not above rtp_port_min %d", s.RTPPortMax.V, s.RTPPortMin.V), "a range of two ports per call: 10000..20000 serves 5000 calls")
	}
	if len(s.Allow) == 0 && !written("allow") {
		w.missing(t.pos, join(t.path, "allow"), "no allowed sources: a SIP port open to the world must be spelled out",
			w.format.Setting("allow", []string{"203.0.113.0/24"})+" (your carrier's signalling addresses), or "+w.format.Setting("allow", []string{"0.0.0.0/0", "::/0"})+" for anyone")
	}
	if (s.AuthUser.V == "") != (s.AuthPasswordEnv.V == "") {
		pos := s.AuthUser.Pos
		if s.AuthUser.V == "" {
			pos = s.AuthPasswordEnv.Pos
		}
		w.at(pos, t.path, "digest authentication needs both auth_user and auth_password_env", w.format.Setting("auth_user", "trunk")+" and "+w.format.Setting("auth_password_env", "BRISVOX_SIP_PASSWORD"))
	}
	if env := s.AuthPasswordEnv; env.V != "" {
		if !providers.IsEnvName(env.V) {
			w.at(env.Pos, join(t.path, "auth_password_env"), showValue(env.V)+" is not a variable name", "name the variable in capitals, digits and '_', e.g. "+w.format.Setting("auth_password_env", "BRISVOX_SIP_PASSWORD"))
		} else if _, ok := w.opts.LookupEnv(env.V); !ok {
			w.at(env.Pos, join(t.path, "auth_password_env"), env.V+" is not set", "export "+env.V+"=... (the password is never written in the file)")
		}
	}
	return s
}

// dtmf reads [dtmf].
func (w *walker) dtmf(t *tbl) DTMF {
	d := DTMF{Pos: t.pos}
	d.Mode = t.oneOf("mode", "collect", "collect", "barge", "ignore")
	d.InterDigitTimeout = t.duration("inter_digit_timeout", 2*time.Second, 200*time.Millisecond, 30*time.Second)
	d.Terminator = t.oneOf("terminator", "", "", "#", "*")
	d.MaxDigits = t.integer("max_digits", 32, 1, 64)
	t.done("key", "", nil)
	return d
}

// narrowCodecs are the 8 kHz codecs a SIP table would accept (its list,
// or the default one: every codec).
func narrowCodecs(s SIP) []string {
	codecs := sipCodecs
	if s.codecsWritten {
		codecs = nil
		for _, c := range s.Codecs {
			codecs = append(codecs, c.V)
		}
	}
	var out []string
	for _, c := range codecs {
		if c == "PCMU" || c == "PCMA" {
			out = append(out, c)
		}
	}
	return out
}
