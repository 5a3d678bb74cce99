package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/brisvox/brisvox/cmd/internal/opclient"
)

// callsUsage is the command line of `brisvox calls`.
const callsUsage = `usage: brisvox calls [--addr URL] [--token-env NAME] [--timeout 5s] COMMAND
  list [--json] [--watch]   the live calls of every node (--watch follows them)
  show ID [--json]          a call: its actor tree and its turns' timelines
  restart ID STAGE          restart one stage of a call; the call goes on
  hangup ID                 end a call
  nodes [--json]            the nodes: live calls, admission, load, uptime
  drain NODE                stop a node admitting calls; its calls go on
  undrain NODE              let a drained node admit calls again
The token is read from the variable --token-env names (default BRISVOX_OPERATOR_TOKEN),
the address from --addr or BRISVOX_OPERATOR_ADDR (default http://localhost:8000).`

// callsEnv is what `brisvox calls` runs with: its outputs, its
// environment, whether stdout is a terminal, and (tests) the HTTP client.
type callsEnv struct {
	stdout, stderr io.Writer
	lookupEnv      func(string) (string, bool)
	tty            bool
	httpClient     *http.Client
}

// callsCommand is `brisvox calls`, the operator's command line over the
// operator API of a running `brisvox serve` (opclient). Exit status 0 on
// success, 1 when the API or its token refused or could not be reached
// (one line on stderr saying what to do), 2 for a bad command line.
func callsCommand(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return callsWith(ctx, args, callsEnv{stdout: stdout, stderr: stderr, lookupEnv: os.LookupEnv, tty: stdout == os.Stdout && isTerminal(os.Stdout)})
}

// isTerminal says whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// callsOptions are the flags every subcommand takes.
type callsOptions struct {
	addr, tokenEnv string
	timeout        time.Duration
}

func (o *callsOptions) register(fs *flag.FlagSet) {
	fs.StringVar(&o.addr, "addr", o.addr, "the serving node's URL (serve's --addr; default $BRISVOX_OPERATOR_ADDR or http://localhost:8000)")
	fs.StringVar(&o.tokenEnv, "token-env", o.tokenEnv, "the environment variable holding the operator token (serve's --operator-token-env)")
	fs.DurationVar(&o.timeout, "timeout", o.timeout, "how long a request may wait for its answer")
}

// callsRun is one run of the command: its options and client.
type callsRun struct {
	env    callsEnv
	opts   callsOptions
	client *opclient.Client
}

func callsWith(ctx context.Context, args []string, env callsEnv) int {
	opts := callsOptions{addr: "http://localhost:8000", tokenEnv: "BRISVOX_OPERATOR_TOKEN", timeout: opclient.DefaultTimeout}
	if a, ok := env.lookupEnv("BRISVOX_OPERATOR_ADDR"); ok && a != "" {
		opts.addr = a
	}
	usage := func(format string, a ...any) int {
		fmt.Fprintf(env.stderr, "brisvox calls: "+format+"\n", a...)
		return 2
	}
	top := flag.NewFlagSet("calls", flag.ContinueOnError)
	top.SetOutput(io.Discard)
	opts.register(top)
	if err := top.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(env.stderr, callsUsage)
			return 2
		}
		return usage("%v (brisvox calls -h for the commands)", err)
	}
	if top.NArg() == 0 {
		fmt.Fprintln(env.stderr, callsUsage)
		return 2
	}
	sub, rest := top.Arg(0), top.Args()[1:]
	fs := flag.NewFlagSet(sub, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	opts.register(fs)
	var jsonOut, watch bool
	want := 0
	switch sub {
	case "list":
		fs.BoolVar(&jsonOut, "json", false, "print the API's JSON")
		fs.BoolVar(&watch, "watch", false, "follow the calls as they change")
	case "show":
		fs.BoolVar(&jsonOut, "json", false, "print the API's JSON")
		want = 1
	case "nodes":
		fs.BoolVar(&jsonOut, "json", false, "print the API's JSON")
	case "hangup", "drain", "undrain":
		want = 1
	case "restart":
		want = 2
	default:
		return usage("unknown command %q (want list, show, restart, hangup, nodes, drain or undrain)", sub)
	}
	pos, err := parseInterleaved(fs, rest)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(env.stderr, callsUsage)
			return 2
		}
		return usage("%s: %v", sub, err)
	}
	names := map[string]string{"show": "ID", "hangup": "ID", "drain": "NODE", "undrain": "NODE", "restart": "ID STAGE"}
	switch {
	case len(pos) < want:
		return usage("%s needs %s", sub, names[sub])
	case len(pos) > want:
		return usage("%s: unexpected argument %q", sub, clean(pos[want]))
	case slices.Contains(pos, ""):
		return usage("%s: an empty %s", sub, names[sub])
	}
	if u, err := url.Parse(opts.addr); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usage("--addr %q is not an http(s) URL like http://localhost:8000", clean(opts.addr))
	}
	if opts.timeout <= 0 || opts.timeout > 10*time.Minute {
		return usage("--timeout %v: want more than 0, at most 10m", opts.timeout)
	}
	token, ok := env.lookupEnv(opts.tokenEnv)
	switch {
	case !ok || token == "":
		fmt.Fprintf(env.stderr, "brisvox calls: the environment variable %s is not set: it holds the operator token of the serving node (serve's --operator-token-env; go tool task run writes it to .native/operator-token)\n", opts.tokenEnv)
		return 1
	case len(token) < opclient.MinToken:
		fmt.Fprintf(env.stderr, "brisvox calls: the variable %s holds %d characters, an operator token has at least %d (the serving node's)\n", opts.tokenEnv, len(token), opclient.MinToken)
		return 1
	}
	c, err := opclient.New(opclient.Config{Addr: opts.addr, Token: token, HTTPClient: env.httpClient, Timeout: opts.timeout})
	if err != nil {
		// The checks above leave only a token with a space or control.
		fmt.Fprintf(env.stderr, "brisvox calls: the variable %s: %s\n", opts.tokenEnv, strings.TrimPrefix(err.Error(), opclient.ErrInvalidConfig.Error()+": "))
		return 1
	}
	defer c.Close()
	r := &callsRun{env: env, opts: opts, client: c}
	switch sub {
	case "list":
		if watch {
			return r.watch(ctx, jsonOut)
		}
		return r.list(ctx, jsonOut)
	case "show":
		return r.show(ctx, pos[0], jsonOut)
	case "restart":
		return r.restart(ctx, pos[0], pos[1])
	case "hangup":
		return r.hangup(ctx, pos[0])
	case "nodes":
		return r.nodes(ctx, jsonOut)
	default:
		return r.drain(ctx, sub, pos[0])
	}
}

// parseInterleaved parses fs's flags wherever they are among the
// arguments (show ID --json as well as show --json ID) and returns the
// others; "--" ends the flags.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if n := len(args); n > 0 && args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func (r *callsRun) list(ctx context.Context, jsonOut bool) int {
	l, err := r.client.List(ctx)
	if err != nil {
		return r.fail(err, "", "")
	}
	if jsonOut {
		return r.printJSON(l.JSON())
	}
	renderList(r.env.stdout, l.Calls)
	return 0
}

func (r *callsRun) show(ctx context.Context, id string, jsonOut bool) int {
	d, err := r.client.Show(ctx, id)
	if err != nil {
		return r.fail(err, id, "")
	}
	if jsonOut {
		return r.printJSON(d.JSON())
	}
	renderShow(r.env.stdout, d)
	return 0
}

func (r *callsRun) restart(ctx context.Context, id, stage string) int {
	if err := r.client.Restart(ctx, id, stage); err != nil {
		return r.fail(err, id, "")
	}
	fmt.Fprintf(r.env.stdout, "restarted the %s stage of call %s: the call goes on\n", clean(stage), clean(id))
	return 0
}

func (r *callsRun) hangup(ctx context.Context, id string) int {
	if err := r.client.Hangup(ctx, id); err != nil {
		return r.fail(err, id, "")
	}
	fmt.Fprintf(r.env.stdout, "hung up call %s: it leaves the list when its session has ended\n", clean(id))
	return 0
}

func (r *callsRun) nodes(ctx context.Context, jsonOut bool) int {
	l, err := r.client.Nodes(ctx)
	if err != nil {
		return r.fail(err, "", "")
	}
	if jsonOut {
		return r.printJSON(l.JSON())
	}
	renderNodes(r.env.stdout, l.Nodes)
	return 0
}

func (r *callsRun) drain(ctx context.Context, sub, node string) int {
	var n *opclient.NodeInfo
	var err error
	if sub == "drain" {
		n, err = r.client.Drain(ctx, node)
	} else {
		n, err = r.client.Undrain(ctx, node)
	}
	if err != nil {
		return r.fail(err, "", node)
	}
	name := clean(n.Node)
	switch {
	case sub == "drain":
		live := "it has no live call"
		switch n.LiveCalls {
		case 0:
		case 1:
			live = "its live call goes on to its end"
		default:
			live = fmt.Sprintf("its %d live calls go on to their end", n.LiveCalls)
		}
		fmt.Fprintf(r.env.stdout, "node %s is %s: it admits no new call; %s (brisvox calls undrain %s admits again)\n", name, nodeState(*n), live, name)
	case n.Draining:
		fmt.Fprintf(r.env.stdout, "node %s is still %s\n", name, nodeState(*n))
	default:
		fmt.Fprintf(r.env.stdout, "node %s admits calls again\n", name)
	}
	return 0
}

// printJSON prints an answer's JSON indented.
func (r *callsRun) printJSON(raw json.RawMessage) int {
	var b strings.Builder
	var out json.RawMessage
	if err := json.Unmarshal(raw, &out); err == nil {
		if data, err := json.MarshalIndent(out, "", "  "); err == nil {
			b.Write(data)
		}
	}
	if b.Len() == 0 {
		b.Write(raw)
	}
	fmt.Fprintln(r.env.stdout, b.String())
	return 0
}

// fail prints the one line err calls for and returns the exit status: id
// and node are what the command named.
func (r *callsRun) fail(err error, id, node string) int {
	addr := clean(r.client.Addr())
	var se *opclient.StageError
	var msg string
	switch {
	case errors.Is(err, opclient.ErrUnauthorized):
		msg = fmt.Sprintf("the operator API at %s refused the token: check the variable %s", addr, r.opts.tokenEnv)
	case errors.As(err, &se):
		msg = fmt.Sprintf("%q is not a stage a restart can name: want one of %s", clean(se.Stage), clean(strings.Join(se.Stages, ", ")))
	case errors.Is(err, opclient.ErrUnknownCall):
		msg = fmt.Sprintf("no live call %s at the operator API at %s (brisvox calls list shows the live calls)", clean(id), addr)
	case errors.Is(err, opclient.ErrUnknownNode):
		msg = fmt.Sprintf("no node %s at the operator API at %s (brisvox calls nodes lists them)", clean(node), addr)
	case errors.Is(err, opclient.ErrRefused):
		msg = "the node refused: " + detail(err, opclient.ErrRefused)
	case errors.Is(err, opclient.ErrNoAnswer):
		msg = fmt.Sprintf("the operator API at %s got no answer in time: %s (try again; brisvox calls show ID names a stage that does not answer)", addr, detail(err, opclient.ErrNoAnswer))
	case errors.Is(err, opclient.ErrUnreachable):
		msg = fmt.Sprintf("cannot reach the operator API at %s: %s; is brisvox serve running with --operator-token-env?", addr, detail(err, opclient.ErrUnreachable))
	case errors.Is(err, opclient.ErrProtocol):
		msg = fmt.Sprintf("the server at %s did not answer as brisvox serve's operator API: %s", addr, detail(err, opclient.ErrProtocol))
	case errors.Is(err, context.Canceled):
		msg = "interrupted"
	default:
		msg = clean(err.Error())
	}
	fmt.Fprintln(r.env.stderr, "brisvox calls: "+msg)
	return 1
}

// detail is err's text after its sentinel's, cleaned to one line.
func detail(err, sentinel error) string {
	return clean(strings.TrimPrefix(err.Error(), sentinel.Error()+": "))
}

// watchRedraw is the shortest time between two tables of list --watch.
const watchRedraw = 500 * time.Millisecond

// watchView is what list --watch shows: the live calls as last told,
// each with the time it was told (its age goes on from there).
type watchView struct {
	calls map[string]watchCall
	node  string
	note  string
}

type watchCall struct {
	sum opclient.CallSummary
	at  time.Time
}

func (v *watchView) apply(ev opclient.Event, now time.Time) {
	switch {
	case ev.Snapshot != nil:
		v.node = ev.Snapshot.Node
		v.calls = make(map[string]watchCall, len(ev.Snapshot.Calls))
		for _, c := range ev.Snapshot.Calls {
			v.calls[c.ID] = watchCall{sum: c, at: now}
		}
	case ev.Call != nil:
		v.calls[ev.Call.ID] = watchCall{sum: *ev.Call, at: now}
	case ev.Ended != nil:
		delete(v.calls, ev.Ended.ID)
		v.note = "ended: " + clean(ev.Ended.ID)
		if ev.Ended.Reason != "" {
			v.note += " (" + clean(ev.Ended.Reason) + ")"
		}
	case ev.NodeLeft != "":
		for id, c := range v.calls {
			if c.sum.Node == ev.NodeLeft {
				delete(v.calls, id)
			}
		}
		v.note = "node left: " + clean(ev.NodeLeft)
	}
}

// render writes the view's table, ages as of now, sorted by node and id.
func (v *watchView) render(w io.Writer, now time.Time) {
	calls := make([]opclient.CallSummary, 0, len(v.calls))
	for _, c := range v.calls {
		s := c.sum
		s.AgeMS += now.Sub(c.at).Milliseconds()
		calls = append(calls, s)
	}
	slices.SortFunc(calls, func(a, b opclient.CallSummary) int {
		if a.Node != b.Node {
			return strings.Compare(a.Node, b.Node)
		}
		return strings.Compare(a.ID, b.ID)
	})
	head := fmt.Sprintf("%s live at %s, following its events (Ctrl-C ends)", plural(len(calls), "call"), clean(v.node))
	writeLines(w, []string{head})
	renderList(w, calls)
	if v.note != "" {
		writeLines(w, []string{v.note})
	}
}

// watch follows the event stream: a table when something changed, at
// most every watchRedraw, redrawn in place on a terminal (its ages
// moving), one after the other otherwise; with --json each event as a
// line. It ends with ctx (Ctrl-C) or the stream, its reader goroutine
// gone.
func (r *callsRun) watch(ctx context.Context, jsonOut bool) int {
	st, err := r.client.Events(ctx)
	if err != nil {
		return r.fail(err, "", "")
	}
	events := make(chan opclient.Event)
	ended := make(chan error, 1)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			ev, err := st.Next()
			if err != nil {
				ended <- err
				return
			}
			select {
			case events <- ev:
			case <-done:
				return
			}
		}
	})
	defer func() {
		close(done)
		_ = st.Close()
		wg.Wait()
	}()
	tick := time.NewTicker(watchRedraw)
	defer tick.Stop()
	var view watchView
	dirty, drawn, seen := false, time.Time{}, false
	draw := func(now time.Time) {
		if r.env.tty {
			fmt.Fprint(r.env.stdout, "\x1b[H\x1b[2J")
		} else if !drawn.IsZero() {
			fmt.Fprintln(r.env.stdout)
		}
		view.render(r.env.stdout, now)
		dirty, drawn = false, now
	}
	for {
		select {
		case <-ctx.Done():
			return 0
		case err := <-ended:
			if errors.Is(err, io.EOF) {
				if dirty && !jsonOut {
					draw(time.Now())
				}
				fmt.Fprintf(r.env.stderr, "brisvox calls: the operator API at %s ended the event stream (its server is shutting down)\n", clean(r.client.Addr()))
				return 0
			}
			if ctx.Err() != nil {
				return 0
			}
			return r.fail(err, "", "")
		case ev := <-events:
			if jsonOut {
				line, _ := json.Marshal(map[string]any{"event": ev.Kind, "data": ev.Data})
				fmt.Fprintln(r.env.stdout, string(line))
				continue
			}
			now := time.Now()
			view.apply(ev, now)
			dirty = true
			if !seen || now.Sub(drawn) >= watchRedraw {
				seen = true
				draw(now)
			}
		case now := <-tick.C:
			// On a terminal the ages move: redraw with live calls.
			if !jsonOut && seen && (dirty || (r.env.tty && len(view.calls) > 0)) && now.Sub(drawn) >= watchRedraw {
				draw(now)
			}
		}
	}
}
