package main

import (
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/brisvox/brisvox/cmd/internal/gate"
)

// signCommand prints a signed path and query for a client that cannot
// send a bearer token (a browser's websocket): `brisvox sign
// --secret-env NAME --path /pcm [--ttl 5m] [--query k=v]...`. The secret
// is read from the named environment variable, never from the command
// line (it would show in ps and the shell's history).
func signCommand(args []string, stdout, stderr io.Writer) int {
	return signWith(args, stdout, stderr, os.LookupEnv, time.Now)
}

// signWith is signCommand with its environment and clock given.
func signWith(args []string, stdout, stderr io.Writer, lookupEnv func(string) (string, bool), now func() time.Time) int {
	fs := flag.NewFlagSet("sign", flag.ContinueOnError)
	fs.SetOutput(stderr)
	secretEnv := fs.String("secret-env", "", "the environment variable holding the URL signing secret (at least 32 bytes)")
	path := fs.String("path", "", "the endpoint's path, such as /pcm")
	method := fs.String("method", "GET", "the request's method (a websocket's is GET)")
	ttl := fs.Duration("ttl", 5*time.Minute, "how long the URL is valid (the server refuses more than its max TTL, 1h by default)")
	query := url.Values{}
	fs.Func("query", "a query parameter k=v the URL carries, signed with it (repeat for more)", func(kv string) error {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return fmt.Errorf("%q is not k=v", kv)
		}
		if k == gate.ParamExp || k == gate.ParamSig {
			return fmt.Errorf("%q is the signature's own parameter", k)
		}
		query.Add(k, v)
		return nil
	})
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: brisvox sign --secret-env NAME --path /pcm [--ttl 5m] [--query k=v]... [--method GET]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "brisvox sign: "+format+"\n", a...)
		return 2
	}
	switch {
	case fs.NArg() > 0:
		return usage("unexpected argument %q", fs.Arg(0))
	case *secretEnv == "":
		return usage("--secret-env NAME is required (the variable holding the secret)")
	case *path == "":
		return usage("--path is required (such as /pcm)")
	case !strings.HasPrefix(*path, "/") || strings.ContainsAny(*path, "?#"):
		return usage("--path %q must start with / and hold no ? or #", *path)
	case *ttl <= 0:
		return usage("--ttl %v must be positive", *ttl)
	case !validMethod(*method):
		return usage("--method %q is not an HTTP method", *method)
	}
	secret, ok := lookupEnv(*secretEnv)
	if !ok || secret == "" {
		fmt.Fprintf(stderr, "brisvox sign: the environment variable %s is not set\n", *secretEnv)
		return 1
	}
	if len(secret) < gate.MinSecretLen {
		fmt.Fprintf(stderr, "brisvox sign: %s holds %d bytes; the server wants a secret of at least %d\n", *secretEnv, len(secret), gate.MinSecretLen)
		return 1
	}
	if *ttl > gate.DefaultMaxTTL {
		fmt.Fprintf(stderr, "brisvox sign: warning: --ttl %v is beyond the default max TTL %v; a server with the default refuses this URL\n", *ttl, gate.DefaultMaxTTL)
	}
	q := gate.Sign([]byte(secret), *method, *path, query, now().Add(*ttl))
	fmt.Fprintf(stdout, "%s?%s\n", (&url.URL{Path: *path}).EscapedPath(), q)
	return 0
}

// validMethod reports whether m is an HTTP method token in upper case.
func validMethod(m string) bool {
	if m == "" {
		return false
	}
	for _, c := range m {
		if c < 'A' || c > 'Z' {
			return false
		}
	}
	return true
}
