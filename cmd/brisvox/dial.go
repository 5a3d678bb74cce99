package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"time"
)

// dialCommand places an outbound call through a running `brisvox serve`
// (its operator API, POST /operator/calls): `brisvox dial --server URL
// --token-env NAME --trunk T --to NUMBER [--from ID] [--var k=v]...
// [--ring-timeout 30s] [--wait-for-callee]`. The token is read from the
// named variable, never from the command line. It waits for the dial's
// end: 0 once the call is answered and its agent runs (the call id on
// stdout), 1 when it was not (the typed outcome on stderr), 2 for a bad
// command line.
func dialCommand(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return dialWith(ctx, args, stdout, stderr, os.LookupEnv, http.DefaultTransport)
}

// dialWith is dialCommand with its environment and HTTP transport given.
func dialWith(ctx context.Context, args []string, stdout, stderr io.Writer, lookupEnv func(string) (string, bool), rt http.RoundTripper) int {
	fs := flag.NewFlagSet("dial", flag.ContinueOnError)
	fs.SetOutput(stderr)
	server := fs.String("server", "http://127.0.0.1:8080", "the serving node's HTTP address (brisvox serve --addr)")
	tokenEnv := fs.String("token-env", "BRISVOX_OPERATOR_TOKEN", "the environment variable holding the operator token (serve's --operator-token-env)")
	trunk := fs.String("trunk", "", "the trunk to call through ([transports.sip.trunks.NAME])")
	to := fs.String("to", "", "the number (or user part) to call")
	from := fs.String("from", "", "the caller id: a number or sip: URI (default: the trunk's from)")
	ring := fs.Duration("ring-timeout", 0, "how long it may ring, 1s to 5m (default: the transport's, 30s)")
	wait := fs.Bool("wait-for-callee", false, "the agent waits for the callee's first words even when the agent file has it speak first")
	vars := map[string]string{}
	fs.Func("var", "a per-call variable k=v for the agent's {{k}} placeholders (repeat for more)", func(kv string) error {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return fmt.Errorf("%q is not k=v", kv)
		}
		if _, dup := vars[k]; dup {
			return fmt.Errorf("%q is given twice", k)
		}
		vars[k] = v
		return nil
	})
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: brisvox dial --trunk NAME --to NUMBER [--from ID] [--var k=v]... [--ring-timeout 30s] [--wait-for-callee] [--server http://127.0.0.1:8080] [--token-env BRISVOX_OPERATOR_TOKEN]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "brisvox dial: "+format+"\n", a...)
		return 2
	}
	u, err := url.Parse(*server)
	switch {
	case fs.NArg() > 0:
		return usage("unexpected argument %q", fs.Arg(0))
	case *trunk == "":
		return usage("--trunk is required (a trunk of the serving agent file)")
	case *to == "":
		return usage("--to is required")
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return usage("--server %q is not an http(s) URL", *server)
	case *ring != 0 && (*ring < time.Second || *ring > 5*time.Minute):
		return usage("--ring-timeout %v: want 1s to 5m", *ring)
	}
	token, ok := lookupEnv(*tokenEnv)
	if !ok || token == "" {
		fmt.Fprintf(stderr, "brisvox dial: the environment variable %s is not set (the operator token of the serving node)\n", *tokenEnv)
		return 1
	}
	body := map[string]any{"trunk": *trunk, "to": *to, "wait_for_callee": *wait}
	if *from != "" {
		body["from"] = *from
	}
	if len(vars) > 0 {
		body["variables"] = vars
	}
	if *ring != 0 {
		body["ring_timeout"] = ring.String()
	}
	data, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(u.String(), "/")+"/operator/calls", bytes.NewReader(data))
	if err != nil {
		return usage("%v", err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Transport: rt}).Do(req)
	if err != nil {
		fmt.Fprintf(stderr, "brisvox dial: the server did not answer: %v\n", err)
		return 1
	}
	defer resp.Body.Close()
	var out struct {
		Call    string `json:"call"`
		Outcome string `json:"outcome"`
		Code    int    `json:"code"`
		Error   string `json:"error"`
	}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err := json.Unmarshal(raw, &out); err != nil {
		fmt.Fprintf(stderr, "brisvox dial: the server answered %s, not the dial API's JSON\n", resp.Status)
		return 1
	}
	switch {
	case resp.StatusCode == http.StatusCreated:
		fmt.Fprintf(stdout, "%s answered\n", out.Call)
		return 0
	case resp.StatusCode == http.StatusUnauthorized:
		fmt.Fprintf(stderr, "brisvox dial: the operator token in %s was refused\n", *tokenEnv)
	case resp.StatusCode == http.StatusNotFound:
		fmt.Fprintln(stderr, "brisvox dial: the server has no dial API (it needs --operator-token-env and SIP trunks in its agent file)")
	case out.Outcome != "":
		msg := "brisvox dial: not answered: " + out.Outcome
		if out.Code != 0 {
			msg += fmt.Sprintf(" (SIP %d)", out.Code)
		}
		if ra := resp.Header.Get("Retry-After"); ra != "" {
			msg += ", retry after " + ra + " s"
		}
		fmt.Fprintln(stderr, msg)
	default:
		fmt.Fprintf(stderr, "brisvox dial: %s: %s\n", resp.Status, out.Error)
	}
	return 1
}
