package agentbuild

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"

	"github.com/brisvox/brisvox/cmd/internal/agentfile"
	"github.com/brisvox/brisvox/providers"
)

// MinSecretLen is the shortest token or signing secret a transport's
// variable may hold: 32 characters (Twilio's auth token is 32 hex
// digits).
const MinSecretLen = 32

// secretVar is a transport's setting that names a variable holding a
// token or secret.
type secretVar struct {
	key string // "token_env"
	v   agentfile.Value[string]
}

// endpoint is an enabled transport as Exposure judges it.
type endpoint struct {
	table string // "transports.pcm"
	what  string // "the PCM websocket /pcm"
	pos   agentfile.Pos
	// addrs are the listen addresses (host:port).
	addrs []string
	// public: the file says public = true.
	public bool
	// vars are the secret variables (an empty name: none); authed tells
	// whether the endpoint has authentication of another kind (a SIP
	// allowlist or digest).
	vars   []secretVar
	authed bool
	// auth are the settings that would authenticate the endpoint, in the
	// file's syntax, for the hint.
	auth []string
}

// Exposure is the rule serve applies before it opens an endpoint to
// callers: an agent that spends keys (any of its providers has a key
// variable in use) must not expose a transport without authentication
// unless the transport's table says public = true; a keyless agent may,
// but only on loopback. A configured token or secret variable that is
// unset or shorter than MinSecretLen is reported too. httpAddr is the
// HTTP listen address (WebRTC, Twilio, PCM); sipAddrs the SIP ones.
// lookupEnv reads a variable (os.LookupEnv); only its presence and
// length are used, never its value in a message.
func Exposure(f *agentfile.File, httpAddr string, sipAddrs []string, lookupEnv func(string) (string, bool)) []agentfile.Diagnostic {
	spends := keysInUse(f)
	var ds []agentfile.Diagnostic
	for _, e := range endpoints(f, httpAddr, sipAddrs) {
		guarded, unset := e.authed, ""
		for _, sv := range e.vars {
			if sv.v.V == "" {
				continue
			}
			val, ok := lookupEnv(sv.v.V)
			switch {
			case (!ok || val == "") && sv.v.Set:
				// agentfile reports a written variable that is unset, at
				// this place; the endpoint would refuse everyone.
				guarded = true
			case !ok || val == "":
				unset = sv.v.V // implied (Twilio's): open unless set
			case len(val) < MinSecretLen:
				guarded = true
				ds = append(ds, f.Diag(sv.v.Pos, e.table+"."+sv.key,
					fmt.Sprintf("%s holds %d characters: too short to guard %s", sv.v.V, len(val), e.what),
					fmt.Sprintf("put at least %d characters in %s (e.g. the output of openssl rand -hex 32)", MinSecretLen, sv.v.V)))
			default:
				guarded = true
			}
		}
		if guarded || e.public {
			continue
		}
		var reason string
		switch {
		case len(spends) > 0:
			reason = "the agent spends the keys of " + strings.Join(spends, ", ")
		case !allLoopback(e.addrs):
			reason = fmt.Sprintf("it listens beyond loopback (%s)", strings.Join(e.addrs, ", "))
		default:
			continue // a keyless agent on loopback stays open
		}
		msg := "any client may use " + e.what + ": " + reason
		hint := e.hint(f)
		if unset != "" {
			msg = fmt.Sprintf("%s is not set, so %s", unset, msg)
			hint = "export " + unset + "=... (never written in the file), or " + strings.TrimPrefix(hint, "set ")
		}
		ds = append(ds, f.Diag(e.pos, e.table, msg, hint))
	}
	return ds
}

// hint is what to write in the endpoint's table, in the file's syntax.
func (e endpoint) hint(f *agentfile.File) string {
	alts := append(slices.Clip(e.auth), f.Format.Setting("public", true))
	return "set " + strings.Join(alts, ", or ") + " " + tableIn(f.Format, e.table)
}

// keysInUse names the providers with a key variable in use ("llm openai
// (OPENAI_API_KEY)"): a TypeEnv option, implied or written, that is not
// empty.
func keysInUse(f *agentfile.File) []string {
	var out []string
	for _, st := range []struct {
		stage string
		p     agentfile.Provider
	}{{"stt", f.STT}, {"llm", f.LLM}, {"tts", f.TTS}} {
		var vars []string
		for _, o := range st.p.Options {
			if o.Kind == providers.TypeEnv && o.String != "" {
				vars = append(vars, o.String)
			}
		}
		if len(vars) > 0 {
			slices.Sort(vars)
			out = append(out, fmt.Sprintf("%s %s (%s)", st.stage, st.p.Name, strings.Join(slices.Compact(vars), ", ")))
		}
	}
	return out
}

// allLoopback tells whether every address listens on loopback only: an
// IP of 127.0.0.0/8 or ::1, or the name localhost. An empty host (":8080")
// is every interface.
func allLoopback(addrs []string) bool {
	for _, a := range addrs {
		host, _, err := net.SplitHostPort(a)
		if err != nil {
			host = a
		}
		if strings.EqualFold(host, "localhost") {
			continue
		}
		ip, err := netip.ParseAddr(host)
		if err != nil || !ip.IsLoopback() {
			return false
		}
	}
	return true
}

// anyone is a SIP allow entry that lets every source in.
func anyone(prefix string) bool {
	p, err := netip.ParsePrefix(prefix)
	return err == nil && p.Bits() == 0
}

// endpoints are the file's enabled transports.
func endpoints(f *agentfile.File, httpAddr string, sipAddrs []string) []endpoint {
	var out []endpoint
	t := f.Transports
	set := f.Format.Setting
	http := []string{httpAddr}
	access := func(table, what string, pos agentfile.Pos, ac agentfile.Access) endpoint {
		name := strings.ToUpper(strings.TrimPrefix(table, "transports."))
		return endpoint{table: table, what: what, pos: pos, addrs: http, public: ac.Public.V,
			vars: []secretVar{{"token_env", ac.TokenEnv}, {"signing_secret_env", ac.SigningSecretEnv}},
			auth: []string{set("token_env", "BRISVOX_"+name+"_TOKEN"), set("signing_secret_env", "BRISVOX_"+name+"_SIGNING_SECRET")}}
	}
	if t.WebRTC.Enabled.V {
		out = append(out, access("transports.webrtc", "the WebRTC page and /offer", t.WebRTC.Pos, t.WebRTC.Access))
	}
	if t.PCM.Enabled.V {
		out = append(out, access("transports.pcm", "the PCM websocket "+t.PCM.Path.V, t.PCM.Pos, t.PCM.Access))
	}
	if tw := t.Twilio; tw.Enabled.V {
		out = append(out, endpoint{table: "transports.twilio", what: "the Twilio stream " + tw.Path.V, pos: tw.Pos, addrs: http,
			public: tw.Public.V, vars: []secretVar{{"auth_token_env", tw.AuthTokenEnv}}}) // only public opens it
	}
	if s := t.SIP; s.Enabled.V {
		allow := len(s.Allow) > 0
		for _, a := range s.Allow {
			if anyone(a.V) {
				allow = false
			}
		}
		// A digest password's variable is checked by agentfile.
		digest := s.AuthUser.V != "" && s.AuthPasswordEnv.V != ""
		out = append(out, endpoint{table: "transports.sip", what: "the SIP trunk", pos: s.Pos, addrs: sipAddrs,
			public: s.Public.V, authed: allow || digest, auth: []string{
				set("allow", []string{"203.0.113.0/24"}) + " (your carrier's addresses)",
				set("auth_user", "trunk") + " with " + set("auth_password_env", "BRISVOX_SIP_PASSWORD"),
			}})
	}
	return out
}
