package agentfile

import (
	neturl "net/url"
	"strconv"
	"strings"

	"github.com/brisvox/brisvox/providers"
)

// access reads who may use a websocket endpoint (webrtc, pcm); the
// variables are checked only when the transport is enabled.
func (w *walker) access(t *tbl, enabled bool) Access {
	a := Access{Public: t.boolean("public", false)}
	_, name, _ := strings.Cut(t.path, ".")
	prefix := "BRISVOX_" + strings.ToUpper(name)
	a.TokenEnv = w.envVar(t, "token_env", prefix+"_TOKEN", enabled)
	a.SigningSecretEnv = w.envVar(t, "signing_secret_env", prefix+"_SIGNING_SECRET", enabled)
	a.AllowedOrigins = t.list("allowed_origins", func(s string) (string, string) { return w.origin(s) })
	for i := range a.AllowedOrigins {
		a.AllowedOrigins[i].V = strings.ToLower(a.AllowedOrigins[i].V)
	}
	if a.Public.V {
		for _, v := range []Value[string]{a.TokenEnv, a.SigningSecretEnv} {
			if v.Set && v.V != "" {
				w.at(a.Public.Pos, join(t.path, "public"), "public and a token or signing secret together: one of them would be ignored",
					"remove "+w.format.Setting("public", true)+" to ask for the token, or the variable to let anyone in")
				break
			}
		}
	}
	return a
}

// twilioAccess reads the twilio transport's signature settings.
func (w *walker) twilioAccess(t *tbl, tw *Twilio) {
	tw.Public = t.boolean("public", false)
	tw.AuthTokenEnv = w.envVar(t, "auth_token_env", "TWILIO_AUTH_TOKEN", tw.Enabled.V)
	tw.PublicURL = t.str("public_url", "")
	if u := tw.PublicURL; u.Set {
		if msg := checkPublicURL(u.V); msg != "" {
			w.at(u.Pos, join(t.path, "public_url"), msg, "the URL Twilio connects to, e.g. "+w.format.Setting("public_url", "wss://voice.example.com/twilio"))
			tw.PublicURL.V, tw.PublicURL.Set = "", false
		}
	}
	switch {
	case tw.Public.V && tw.AuthTokenEnv.Set && tw.AuthTokenEnv.V != "":
		w.at(tw.Public.Pos, join(t.path, "public"), "public and auth_token_env together: one of them would be ignored",
			"remove "+w.format.Setting("public", true)+" to check Twilio's signature, or auth_token_env to let anyone in")
	case tw.Public.V:
		tw.AuthTokenEnv.V = ""
	case !tw.AuthTokenEnv.Set && tw.Enabled.V && t.n.get("auth_token_env") == nil:
		// Implied: a stream not public is checked with the account's
		// token. Whether it must be set is serve's decision (a keyless
		// agent on loopback stays open), so it is not looked up here.
		tw.AuthTokenEnv.V = "TWILIO_AUTH_TOKEN"
		tw.AuthTokenEnv.Pos = tw.Enabled.Pos
		if !tw.Enabled.Set {
			tw.AuthTokenEnv.Pos = tw.Pos
		}
	}
}

// envVar reads the NAME of a variable holding a secret; a value that is
// not a name is refused without being shown. When check is true, a named
// variable must be set.
func (w *walker) envVar(t *tbl, key, example string, check bool) Value[string] {
	v := t.str(key, "")
	if !v.Set || v.V == "" {
		return v
	}
	path := join(t.path, key)
	if !providers.IsEnvName(v.V) {
		msg := "is not an environment variable name (want UPPER_SNAKE_CASE; the value is not shown)"
		hint := "name the variable in capitals, digits and '_', e.g. " + w.format.Setting(key, example)
		if looksSecret(v.V) {
			msg = "holds what looks like a secret itself, not the name of an environment variable (the value is not shown)"
			hint = "put the secret in an environment variable and name it here, e.g. " + w.format.Setting(key, example)
		}
		w.at(v.Pos, path, msg, hint)
		v.V, v.Set = "", false
		return v
	}
	if check {
		w.envSet(v, path, "", "export "+v.V+"=... (the secret is never written in the file)")
	}
	return v
}

// envSet reports a variable that is unset or empty.
func (w *walker) envSet(v Value[string], path, why, hint string) {
	val, set := w.opts.LookupEnv(v.V)
	switch {
	case !set:
		w.at(v.Pos, path, v.V+" is not set"+why, hint)
	case val == "":
		w.at(v.Pos, path, v.V+" is set but empty"+why, hint)
	}
}

// origin checks one of allowed_origins: "scheme://host[:port]".
func (w *walker) origin(s string) (msg, hint string) {
	example := "e.g. " + w.format.Setting("allowed_origins", []string{"https://app.example.com"})
	if s == "*" {
		return `"*" would let any web page use the endpoint`, "say so with " + w.format.Setting("public", true) + " instead"
	}
	u, err := neturl.Parse(s)
	switch {
	case err != nil || u.Opaque != "" || u.Host == "":
		return showValue(s) + " is not an origin (scheme://host[:port])", example
	case u.Scheme != "http" && u.Scheme != "https":
		return showValue(s) + " is not an http or https origin", example
	case u.User != nil:
		return "the origin carries credentials (the value is not shown)", example
	case u.Path != "" || u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(s, "?") || strings.HasSuffix(s, "#"):
		return showValue(s) + " has a path, query or fragment: an origin is scheme://host[:port]", "e.g. " + w.format.Setting("allowed_origins", []string{u.Scheme + "://" + u.Host})
	case u.Hostname() == "" || strings.ContainsAny(u.Hostname(), " \t*"):
		return showValue(s) + " has no valid host", example
	}
	if p := u.Port(); p != "" || strings.HasSuffix(u.Host, ":") {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return showValue(s) + " has a bad port", "a port is 1..65535, " + example
		}
	}
	return "", ""
}

// checkPublicURL checks twilio.public_url: wss or https, a host, no
// credentials, query or fragment. It returns a message, or "".
func checkPublicURL(s string) string {
	u, err := neturl.Parse(s)
	switch {
	case err != nil || u.Opaque != "":
		return "is not a URL"
	case u.Scheme != "wss" && u.Scheme != "https":
		return "want a wss:// or https:// URL"
	case u.Hostname() == "":
		return "the URL has no host"
	case u.User != nil:
		return "the URL carries credentials (the value is not shown)"
	case u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(s, "?#"):
		return "the URL must carry no query or fragment"
	}
	return ""
}
