package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/brisvox/brisvox/cmd/internal/opclient"
	"github.com/brisvox/brisvox/cmd/internal/records"
)

// recordsUsage is the command line of `brisvox records`.
const recordsUsage = `usage: brisvox records [--addr URL] [--token-env NAME | --token-file PATH] [--timeout 5s] COMMAND
  list [FILTERS] [--limit 50] [--json]      the calls' records, newest first
  show ID [--json]                          a record: its header, transcript, tools and turn waterfall
  export [FILTERS] --format jsonl|csv [--out FILE]
                                            every record selected (jsonl: whole records; csv: one row each)
  recording ID --out FILE                   download a call's recording
  pause ID | resume ID                      pause (silence is recorded) or resume a live call's recording
  erase ID [--reason TEXT]                  erase one call's record and recording (audited)
  erase --caller NUMBER | --caller-hash H [--reason TEXT]
                                            erase every record of one caller (audited)
  audit [--json]                            the erasures, oldest first
FILTERS: --from T --to T (RFC 3339, or a time ago: 24h, 90m, 7d), --agent NAME, --end-reason R,
  --caller NUMBER (hashed by the server) or --caller-hash H, --node N, --transport T.
--db PATH (list, show, export) reads a stopped node's SQLite file instead of the API.
The token is read from --token-file, or else the variable --token-env names (default
BRISVOX_OPERATOR_TOKEN); the address from --addr or BRISVOX_OPERATOR_ADDR (default http://localhost:8000).`

// recordsEnv is what `brisvox records` runs with: callsEnv's, the clock
// (filters given as a time ago) and the opener of --db (nil: no --db).
type recordsEnv struct {
	callsEnv
	now       func() time.Time
	openStore func(ctx context.Context, path string) (records.Store, error)
}

// recordsCommand is `brisvox records`: the call records of a running
// `brisvox serve` through its operator API (opclient), or of a stopped
// node's database (--db). Exit status as brisvox calls: 0, 1 when the
// API, its token or the database failed (one line saying what to do), 2
// for a bad command line.
func recordsCommand(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return recordsWith(ctx, args, recordsEnv{
		callsEnv: callsEnv{stdout: stdout, stderr: stderr, lookupEnv: os.LookupEnv},
		now:      time.Now, openStore: openRecordsDB,
	})
}

// recordsOptions are the flags every subcommand takes, and the ones of
// each.
type recordsOptions struct {
	callsOptions
	tokenFile string
	// The filters as given.
	from, to, agent, endReason, caller, callerHash, node, transport string
	limit                                                           int
	jsonOut                                                         bool
	db, format, out, reason                                         string
}

func (o *recordsOptions) register(fs *flag.FlagSet) {
	o.callsOptions.register(fs)
	fs.StringVar(&o.tokenFile, "token-file", o.tokenFile, "a file holding the operator token (go tool task run's .native/operator-token)")
}

func (o *recordsOptions) filters(fs *flag.FlagSet) {
	fs.StringVar(&o.from, "from", "", "records of calls started at or after T (RFC 3339, or a time ago: 24h, 7d)")
	fs.StringVar(&o.to, "to", "", "records of calls started before T (RFC 3339, or a time ago)")
	fs.StringVar(&o.agent, "agent", "", "records of this agent")
	fs.StringVar(&o.endReason, "end-reason", "", "records of calls that ended so (hangup, no_input, node_crashed, ...)")
	fs.StringVar(&o.caller, "caller", "", "records of this caller's number (the server hashes it)")
	fs.StringVar(&o.callerHash, "caller-hash", "", "records of the caller with this hash (a record's caller.hash)")
	fs.StringVar(&o.node, "node", "", "records of calls on this node")
	fs.StringVar(&o.transport, "transport", "", "records of calls of this transport")
}

// recordsRun is one run of the command: its options and source.
type recordsRun struct {
	env    recordsEnv
	opts   recordsOptions
	client *opclient.Client // nil with --db
	src    recordSource
	addr   string // what the source is, for errors
}

func recordsWith(ctx context.Context, args []string, env recordsEnv) int {
	opts := recordsOptions{callsOptions: callsOptions{addr: "http://localhost:8000", tokenEnv: "BRISVOX_OPERATOR_TOKEN", timeout: opclient.DefaultTimeout}}
	if a, ok := env.lookupEnv("BRISVOX_OPERATOR_ADDR"); ok && a != "" {
		opts.addr = a
	}
	usage := func(format string, a ...any) int {
		fmt.Fprintf(env.stderr, "brisvox records: "+format+"\n", a...)
		return 2
	}
	top := flag.NewFlagSet("records", flag.ContinueOnError)
	top.SetOutput(io.Discard)
	opts.register(top)
	if err := top.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(env.stderr, recordsUsage)
			return 2
		}
		return usage("%v (brisvox records -h for the commands)", err)
	}
	if top.NArg() == 0 {
		fmt.Fprintln(env.stderr, recordsUsage)
		return 2
	}
	sub, rest := top.Arg(0), top.Args()[1:]
	fs := flag.NewFlagSet(sub, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	opts.register(fs)
	want, maxPos := 0, 0
	db := func() {
		if env.openStore != nil {
			fs.StringVar(&opts.db, "db", "", "read this SQLite file (a stopped node's records database) instead of the API")
		}
	}
	switch sub {
	case "list":
		opts.filters(fs)
		fs.IntVar(&opts.limit, "limit", 50, "show at most this many records (1 to 10000)")
		fs.BoolVar(&opts.jsonOut, "json", false, "print the API's JSON")
		db()
	case "show":
		fs.BoolVar(&opts.jsonOut, "json", false, "print the record's JSON")
		want, maxPos = 1, 1
		db()
	case "export":
		opts.filters(fs)
		fs.StringVar(&opts.format, "format", "", "jsonl (whole records, one a line) or csv (one row a record)")
		fs.StringVar(&opts.out, "out", "", "write to this file (made 0600) instead of stdout")
		db()
	case "recording":
		fs.StringVar(&opts.out, "out", "", "write the recording to this file (made 0600)")
		want, maxPos = 1, 1
	case "pause", "resume":
		want, maxPos = 1, 1
	case "erase":
		fs.StringVar(&opts.caller, "caller", "", "erase every record of this caller's number (the server hashes it)")
		fs.StringVar(&opts.callerHash, "caller-hash", "", "erase every record of the caller with this hash")
		fs.StringVar(&opts.reason, "reason", "", "why, kept in the audit (a ticket, not personal data)")
		maxPos = 1
	case "audit":
		fs.BoolVar(&opts.jsonOut, "json", false, "print the API's JSON")
	default:
		return usage("unknown command %q (want list, show, export, recording, pause, resume, erase or audit)", sub)
	}
	pos, err := parseInterleaved(fs, rest)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(env.stderr, recordsUsage)
			return 2
		}
		return usage("%s: %v", sub, err)
	}
	switch {
	case len(pos) < want:
		return usage("%s needs a call ID", sub)
	case len(pos) > maxPos:
		return usage("%s: unexpected argument %q", sub, clean(pos[maxPos]))
	case slices.Contains(pos, ""):
		return usage("%s: an empty ID", sub)
	}
	filter, err := opts.filter(env.now())
	if err != nil {
		return usage("%s: %v", sub, err)
	}
	switch {
	case sub == "list" && (opts.limit < 1 || opts.limit > 10000):
		return usage("list: --limit %d: want 1 to 10000", opts.limit)
	case sub == "export" && opts.format != "jsonl" && opts.format != "csv":
		return usage("export: --format %q: want jsonl or csv", clean(opts.format))
	case sub == "recording" && opts.out == "":
		return usage("recording: --out FILE is needed (a recording is not for a terminal)")
	case sub == "erase" && len(pos) == 1 && (opts.caller != "" || opts.callerHash != ""):
		return usage("erase: give a call ID or --caller/--caller-hash, not both")
	case sub == "erase" && len(pos) == 0 && (opts.caller == "") == (opts.callerHash == ""):
		return usage("erase needs a call ID, or one of --caller NUMBER and --caller-hash H")
	case opts.db != "" && (opts.caller != "" || opts.tokenFile != ""):
		return usage("%s: --db reads the file without the server's key: --caller cannot be hashed (give --caller-hash) and no token is needed", sub)
	}
	if opts.timeout <= 0 || opts.timeout > 10*time.Minute {
		return usage("--timeout %v: want more than 0, at most 10m", opts.timeout)
	}
	r := &recordsRun{env: env, opts: opts}
	if opts.db != "" {
		st, err := env.openStore(ctx, opts.db)
		if err != nil {
			fmt.Fprintf(env.stderr, "brisvox records: cannot open the records database %s: %s\n", clean(opts.db), clean(err.Error()))
			return 1
		}
		defer st.Close()
		r.src, r.addr = storeSource{st: st}, "the database "+clean(opts.db)
	} else {
		if u, err := url.Parse(opts.addr); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return usage("--addr %q is not an http(s) URL like http://localhost:8000", clean(opts.addr))
		}
		token, what, code := readToken(env.callsEnv, opts)
		if code != 0 {
			return code
		}
		c, err := opclient.New(opclient.Config{Addr: opts.addr, Token: token, HTTPClient: env.httpClient, Timeout: opts.timeout})
		if err != nil {
			fmt.Fprintf(env.stderr, "brisvox records: %s: %s\n", what, strings.TrimPrefix(err.Error(), opclient.ErrInvalidConfig.Error()+": "))
			return 1
		}
		defer c.Close()
		r.client, r.src, r.addr = c, apiSource{c: c}, "the operator API at "+clean(c.Addr())
	}
	id := ""
	if len(pos) > 0 {
		id = pos[0]
	}
	switch sub {
	case "list":
		filter.Limit = opts.limit
		return r.list(ctx, filter)
	case "show":
		return r.show(ctx, id)
	case "export":
		return r.export(ctx, filter)
	case "recording":
		return r.recording(ctx, id)
	case "pause", "resume":
		return r.pause(ctx, sub, id)
	case "erase":
		return r.erase(ctx, id)
	default:
		return r.audit(ctx)
	}
}

// readToken is the operator token from --token-file, or the variable
// --token-env names; what names where it came from. code is not 0 when
// there is none (the line is printed).
func readToken(env callsEnv, o recordsOptions) (token, what string, code int) {
	if o.tokenFile != "" {
		what = "the token file " + clean(o.tokenFile)
		b, err := os.ReadFile(o.tokenFile)
		if err != nil {
			fmt.Fprintf(env.stderr, "brisvox records: cannot read %s: %s (go tool task run writes .native/operator-token)\n", what, clean(errors.Unwrap(err).Error()))
			return "", what, 1
		}
		token = strings.TrimSpace(string(b))
	} else {
		what = "the variable " + o.tokenEnv
		t, ok := env.lookupEnv(o.tokenEnv)
		if !ok || t == "" {
			fmt.Fprintf(env.stderr, "brisvox records: the environment variable %s is not set: it holds the operator token of the serving node (serve's --operator-token-env; or give --token-file .native/operator-token)\n", o.tokenEnv)
			return "", what, 1
		}
		token = t
	}
	if len(token) < opclient.MinToken {
		fmt.Fprintf(env.stderr, "brisvox records: %s holds %d characters, an operator token has at least %d (the serving node's)\n", what, len(token), opclient.MinToken)
		return "", what, 1
	}
	return token, what, 0
}

// filter reads the filter flags, times ago counted from now.
func (o *recordsOptions) filter(now time.Time) (opclient.RecordFilter, error) {
	f := opclient.RecordFilter{Agent: o.agent, EndReason: o.endReason, Caller: o.caller, CallerHash: o.callerHash, Node: o.node, Transport: o.transport}
	var err error
	if f.From, err = parseWhen(o.from, now); err != nil {
		return f, fmt.Errorf("--from: %w", err)
	}
	if f.To, err = parseWhen(o.to, now); err != nil {
		return f, fmt.Errorf("--to: %w", err)
	}
	switch {
	case !f.From.IsZero() && !f.To.IsZero() && !f.From.Before(f.To):
		return f, errors.New("--from must be before --to")
	case o.caller != "" && o.callerHash != "":
		return f, errors.New("give --caller or --caller-hash, not both")
	}
	return f, nil
}

// parseWhen reads a time: RFC 3339 (a date alone is its midnight UTC),
// or a time ago (a Go duration, or whole days: 7d).
func parseWhen(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	ago, err := time.ParseDuration(s)
	if d, ok := strings.CutSuffix(s, "d"); ok && err != nil {
		if n, nerr := strconv.Atoi(d); nerr == nil {
			ago, err = time.Duration(n)*24*time.Hour, nil
		}
	}
	if err != nil || ago < 0 {
		return time.Time{}, fmt.Errorf("%q is neither an RFC 3339 time (2026-12-03T17:00:00Z) nor a time ago (24h, 90m, 7d)", clean(s))
	}
	return now.Add(-ago), nil
}

// recordSource is where the records come from: the operator API, or a
// database file (--db).
type recordSource interface {
	Records(ctx context.Context, f opclient.RecordFilter) (*opclient.RecordList, error)
	Record(ctx context.Context, id string) (*opclient.RecordDetail, error)
}

type apiSource struct{ c *opclient.Client }

func (s apiSource) Records(ctx context.Context, f opclient.RecordFilter) (*opclient.RecordList, error) {
	return s.c.Records(ctx, f)
}

func (s apiSource) Record(ctx context.Context, id string) (*opclient.RecordDetail, error) {
	return s.c.Record(ctx, id)
}

// storeSource reads a records.Store directly; its answers are the API's
// (the same JSON).
type storeSource struct{ st records.Store }

func (s storeSource) Records(ctx context.Context, f opclient.RecordFilter) (*opclient.RecordList, error) {
	q := records.Query{From: f.From, To: f.To, Agent: f.Agent, EndReason: f.EndReason, CallerHash: strings.ToLower(f.CallerHash),
		Node: f.Node, Transport: f.Transport, Limit: f.Limit}
	if q.Limit == 0 {
		q.Limit = 100
	}
	if f.Before != "" {
		var c records.Cursor
		if err := json.Unmarshal([]byte(f.Before), &c); err != nil {
			return nil, fmt.Errorf("%w: a bad cursor", opclient.ErrInvalidQuery)
		}
		q.Before = &c
	}
	sums, err := s.st.List(ctx, q)
	if err != nil {
		return nil, storeError(err)
	}
	var out opclient.RecordList
	if err := convert(sums, &out.Records); err != nil {
		return nil, err
	}
	if len(sums) == q.Limit {
		last := sums[len(sums)-1]
		b, _ := json.Marshal(records.Cursor{Started: last.Started, CallID: last.CallID})
		out.Next = string(b)
	}
	return &out, nil
}

func (s storeSource) Record(ctx context.Context, id string) (*opclient.RecordDetail, error) {
	r, err := s.st.Get(ctx, id)
	if err != nil {
		return nil, storeError(err)
	}
	raw, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	d := &opclient.RecordDetail{Raw: raw}
	return d, json.Unmarshal(raw, &d.Record)
}

// storeError maps the store's errors to the client's, so one fail
// serves both sources.
func storeError(err error) error {
	switch {
	case errors.Is(err, records.ErrNotFound):
		return fmt.Errorf("%w: %v", opclient.ErrUnknownRecord, err)
	case errors.Is(err, records.ErrInvalidQuery):
		return fmt.Errorf("%w: %v", opclient.ErrInvalidQuery, err)
	}
	return err
}

// convert moves v into out through their common JSON.
func convert(v, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

func (r *recordsRun) list(ctx context.Context, f opclient.RecordFilter) int {
	l, err := r.src.Records(ctx, f)
	if err != nil {
		return r.fail(err, "")
	}
	if r.opts.jsonOut {
		if raw := l.JSON(); raw != nil {
			return (&callsRun{env: r.env.callsEnv}).printJSON(raw)
		}
		b, _ := json.Marshal(l)
		return (&callsRun{env: r.env.callsEnv}).printJSON(b)
	}
	renderRecordList(r.env.stdout, l.Records)
	if l.Next != "" {
		writeLines(r.env.stdout, []string{fmt.Sprintf("(the newest %d; --limit shows more, export writes all)", len(l.Records))})
	}
	return 0
}

func (r *recordsRun) show(ctx context.Context, id string) int {
	d, err := r.src.Record(ctx, id)
	if err != nil {
		return r.fail(err, id)
	}
	if r.opts.jsonOut {
		return (&callsRun{env: r.env.callsEnv}).printJSON(d.Raw)
	}
	renderRecord(r.env.stdout, &d.Record)
	return 0
}

// exportPage is the page size of export.
const exportPage = 500

// export writes every record the filter selects, page after page: jsonl
// the whole records (each as the source gave it), csv one row each.
func (r *recordsRun) export(ctx context.Context, f opclient.RecordFilter) int {
	w, finish, err := r.output()
	if err != nil {
		fmt.Fprintf(r.env.stderr, "brisvox records: %s\n", clean(err.Error()))
		return 1
	}
	n, err := r.exportTo(ctx, f, w)
	if code := finish(err == nil); code != nil && err == nil {
		err = code
	}
	if err != nil {
		if errors.Is(err, errWrite) {
			fmt.Fprintf(r.env.stderr, "brisvox records: export: %s\n", clean(err.Error()))
			return 1
		}
		return r.fail(err, "")
	}
	if r.opts.out != "" {
		fmt.Fprintf(r.env.stderr, "exported %s to %s\n", plural(n, "record"), clean(r.opts.out))
	}
	return 0
}

// errWrite marks an export's failure to write its output.
var errWrite = errors.New("cannot write")

func (r *recordsRun) exportTo(ctx context.Context, f opclient.RecordFilter, w io.Writer) (int, error) {
	var cw *csv.Writer
	if r.opts.format == "csv" {
		cw = csv.NewWriter(w)
		if err := cw.Write(csvHeader); err != nil {
			return 0, fmt.Errorf("%w: %v", errWrite, err)
		}
	}
	f.Limit = exportPage
	n := 0
	for {
		l, err := r.src.Records(ctx, f)
		if err != nil {
			return n, err
		}
		for _, s := range l.Records {
			if cw != nil {
				if err := cw.Write(csvRow(s)); err != nil {
					return n, fmt.Errorf("%w: %v", errWrite, err)
				}
			} else {
				d, err := r.src.Record(ctx, s.CallID)
				if errors.Is(err, opclient.ErrUnknownRecord) {
					continue // erased since the page was read
				}
				if err != nil {
					return n, err
				}
				if _, err := fmt.Fprintf(w, "%s\n", compactJSON(d.Raw)); err != nil {
					return n, fmt.Errorf("%w: %v", errWrite, err)
				}
			}
			n++
		}
		if cw != nil {
			cw.Flush()
			if err := cw.Error(); err != nil {
				return n, fmt.Errorf("%w: %v", errWrite, err)
			}
		}
		if l.Next == "" || len(l.Records) == 0 {
			return n, nil
		}
		f.Before = l.Next
	}
}

// compactJSON is raw on one line.
func compactJSON(raw json.RawMessage) []byte {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	var v json.RawMessage = raw
	if err := enc.Encode(v); err != nil {
		return raw
	}
	return []byte(strings.TrimSuffix(b.String(), "\n"))
}

// csvHeader and csvRow are export's CSV columns: the summary's fields,
// the duration in seconds.
var csvHeader = []string{"call_id", "node", "transport", "direction", "agent", "started", "ended", "duration_s", "end_reason", "turns", "tools", "caller_hash", "recording"}

func csvRow(s opclient.RecordSummary) []string {
	dur := ""
	if !s.Ended.IsZero() && !s.Started.IsZero() {
		dur = strconv.FormatFloat(s.Ended.Sub(s.Started).Seconds(), 'f', 3, 64)
	}
	return []string{s.CallID, s.Node, s.Transport, s.Direction, s.Agent, s.Started.UTC().Format(time.RFC3339Nano), s.Ended.UTC().Format(time.RFC3339Nano),
		dur, s.EndReason, strconv.Itoa(s.Turns), strconv.Itoa(s.Tools), s.CallerHash, strconv.FormatBool(s.Recording)}
}

// output is where export and recording write: stdout, or --out made 0600
// beside its place and renamed there when done (finish(true)); a failed
// run leaves no half file.
func (r *recordsRun) output() (io.Writer, func(ok bool) error, error) {
	if r.opts.out == "" || r.opts.out == "-" {
		return r.env.stdout, func(bool) error { return nil }, nil
	}
	dir := filepath.Dir(r.opts.out)
	f, err := os.CreateTemp(dir, "."+filepath.Base(r.opts.out)+".*")
	if err != nil {
		return nil, nil, fmt.Errorf("cannot write %s: %v", r.opts.out, errors.Unwrap(err))
	}
	return f, func(ok bool) error {
		cerr := f.Close()
		if ok && cerr == nil {
			if cerr = os.Rename(f.Name(), r.opts.out); cerr == nil {
				return nil
			}
		}
		_ = os.Remove(f.Name())
		if cerr != nil {
			return fmt.Errorf("%w %s: %v", errWrite, r.opts.out, cerr)
		}
		return nil
	}, nil
}

func (r *recordsRun) recording(ctx context.Context, id string) int {
	body, ctype, _, err := r.client.Recording(ctx, id)
	if err != nil {
		return r.fail(err, id)
	}
	defer body.Close()
	w, finish, err := r.output()
	if err != nil {
		fmt.Fprintf(r.env.stderr, "brisvox records: %s\n", clean(err.Error()))
		return 1
	}
	n, err := io.Copy(w, body)
	if ferr := finish(err == nil); err == nil {
		err = ferr
	}
	if err != nil {
		fmt.Fprintf(r.env.stderr, "brisvox records: recording of %s: %s\n", clean(id), clean(err.Error()))
		return 1
	}
	fmt.Fprintf(r.env.stderr, "wrote the recording of %s (%s, %d bytes) to %s\n", clean(id), clean(ctype), n, clean(r.opts.out))
	return 0
}

func (r *recordsRun) pause(ctx context.Context, sub, id string) int {
	var err error
	if sub == "pause" {
		err = r.client.PauseRecording(ctx, id)
	} else {
		err = r.client.ResumeRecording(ctx, id)
	}
	if err != nil {
		return r.fail(err, id)
	}
	if sub == "pause" {
		fmt.Fprintf(r.env.stdout, "paused the recording of call %s: silence is recorded until brisvox records resume %s\n", clean(id), clean(id))
	} else {
		fmt.Fprintf(r.env.stdout, "resumed the recording of call %s\n", clean(id))
	}
	return 0
}

func (r *recordsRun) erase(ctx context.Context, id string) int {
	var e *opclient.Erasure
	var err error
	if id != "" {
		e, err = r.client.EraseRecord(ctx, id, r.opts.reason)
	} else {
		e, err = r.client.EraseCaller(ctx, r.opts.caller, r.opts.callerHash, r.opts.reason)
	}
	if err != nil {
		return r.fail(err, id)
	}
	what := "call " + clean(id)
	if id == "" {
		what = "caller " + clean(e.CallerHash)
	}
	fmt.Fprintf(r.env.stdout, "erased %s and %s of %s (in the audit: brisvox records audit)\n", plural(e.Erased, "record"), plural(e.Recordings, "recording"), what)
	return 0
}

func (r *recordsRun) audit(ctx context.Context) int {
	es, err := r.client.Erasures(ctx)
	if err != nil {
		return r.fail(err, "")
	}
	if r.opts.jsonOut {
		b, _ := json.Marshal(map[string]any{"erasures": es})
		return (&callsRun{env: r.env.callsEnv}).printJSON(b)
	}
	renderAudit(r.env.stdout, es)
	return 0
}

// fail prints the one line err calls for and returns the exit status.
func (r *recordsRun) fail(err error, id string) int {
	var msg string
	switch {
	case errors.Is(err, opclient.ErrUnauthorized):
		src := "the variable " + r.opts.tokenEnv
		if r.opts.tokenFile != "" {
			src = "the token file " + clean(r.opts.tokenFile)
		}
		msg = fmt.Sprintf("%s refused the token: check %s", r.addr, src)
	case errors.Is(err, opclient.ErrUnknownRecord):
		msg = fmt.Sprintf("no record of call %s at %s (a call has a record once it has ended; brisvox records list shows them)", clean(id), r.addr)
	case errors.Is(err, opclient.ErrNoRecording):
		msg = fmt.Sprintf("call %s: %s", clean(id), detail(err, opclient.ErrNoRecording))
	case errors.Is(err, opclient.ErrInvalidQuery):
		msg = "the server refused the filter: " + detail(err, opclient.ErrInvalidQuery)
	case errors.Is(err, opclient.ErrRecordsOff):
		msg = fmt.Sprintf("%s keeps no call records: %s", r.addr, detail(err, opclient.ErrRecordsOff))
	case errors.Is(err, opclient.ErrNoAnswer):
		msg = fmt.Sprintf("%s could not answer now: %s (try again)", r.addr, detail(err, opclient.ErrNoAnswer))
	case errors.Is(err, opclient.ErrUnreachable):
		msg = fmt.Sprintf("cannot reach %s: %s; is brisvox serve running with --operator-token-env? (--db PATH reads a stopped node's database)", r.addr, detail(err, opclient.ErrUnreachable))
	case errors.Is(err, opclient.ErrProtocol):
		msg = fmt.Sprintf("the server did not answer as brisvox serve's operator API: %s", detail(err, opclient.ErrProtocol))
	case errors.Is(err, context.Canceled):
		msg = "interrupted"
	default:
		msg = clean(err.Error())
	}
	fmt.Fprintln(r.env.stderr, "brisvox records: "+msg)
	return 1
}
