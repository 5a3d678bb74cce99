package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/cmd/internal/opclient"
	"github.com/brisvox/brisvox/cmd/internal/serve"
	"go.uber.org/goleak"
)

var updateCalls = flag.Bool("update", false, "rewrite the golden files of testdata/calls")

func ms(v float64) *float64 { return &v }

var t0 = time.Date(2026, 12, 3, 14, 0, 0, 123e6, time.UTC)

// goldenCalls are the fixed inputs of the renderers' golden files: short
// and long ids and agents, a wide-rune agent, an id with an escape
// sequence (a caller may choose its id), every state and transport.
var goldenCalls = []opclient.CallSummary{
	{ID: "wr-6f1c2a", Node: "n1", Transport: "webrtc", Agent: "demo", State: "speaking", Started: t0, AgeMS: 4200, Turns: 3, LastTurnMS: ms(412.5), Restarts: 1},
	{ID: "pcm-1", Node: "n1", Transport: "pcm", Agent: "receptionist", State: "listening", Started: t0, AgeMS: 192_000, Turns: 12, LastTurnMS: ms(12_345), Restarts: 0},
	{ID: "sip-out-2b9f0c1d-4e5f-4a6b-9c8d-7e6f5a4b3c2d-very-long-call-id", Node: "node-eu-west-1a-07", Transport: "sip-out", Agent: "an-agent-name-much-too-long-for-the-table", State: "starting", Started: t0, AgeMS: 3_725_000, Turns: 0, Restarts: 0},
	{ID: "tw-\x1b[31mred", Node: "n2", Transport: "twilio", Agent: "受付エージェント", State: "thinking", Started: t0, AgeMS: 999, Turns: 1, LastTurnMS: ms(98.4), Restarts: 12},
}

var goldenNodes = []opclient.NodeInfo{
	{Node: "n1", Self: true, LiveCalls: 3, MaxCalls: 20, UptimeMS: 3_725_000, Admission: &opclient.Admission{Load: 0.41, Ceiling: 0.8}},
	{Node: "n2", LiveCalls: 5, MaxCalls: 20, Draining: true, Drain: &opclient.Drain{By: "operator", Started: t0, LiveAtStart: 5}, UptimeMS: 62_000},
	{Node: "node-eu-west-1a-07-with-a-long-name", LiveCalls: 0, MaxCalls: 4, Draining: true, Drain: &opclient.Drain{By: "shutdown", Started: t0}, UptimeMS: 4000},
}

func goldenDetail() *opclient.CallDetail {
	counters := map[string]uint64{}
	for _, k := range []string{"frames_in", "frames_out", "bytes_in", "bytes_out", "late_frames", "dropped_frames", "marks_sent", "marks_echoed", "clears", "ws_pings", "ws_pongs", "text_in"} {
		counters[k] = uint64(len(k)) * 1234
	}
	return &opclient.CallDetail{
		Call: goldenCalls[0],
		Tree: &opclient.Description{Name: "session", State: "running", Counters: map[string]uint64{"restarts_by_operator": 1}, Children: []*opclient.Description{
			{Name: "transport", State: "running", Counters: counters, Info: map[string]string{"codec": "PCMU", "latched": strings.Repeat("x", 120)}},
			{Name: "vad", State: "running", Counters: map[string]uint64{"frames": 1000, "speech_frames": 240}},
			{Name: "stt", State: "running", Mailbox: 2, Restarts: 1, Counters: map[string]uint64{"finals": 3, "reconnects": 1}},
			{Name: "turn", State: "listening"},
			{Name: "llm", State: "running", Children: []*opclient.Description{{Name: "round", State: "streaming", Counters: map[string]uint64{"tokens": 42}}}},
			{Name: "tools", State: "unresponsive"},
			{Name: "tts", State: "running", Mailbox: 17},
			{Name: "pacer", State: "running", Counters: map[string]uint64{"frames_out": 5000}},
		}},
		Turns: []opclient.TurnTimeline{
			{Epoch: 1, At: t0.Add(5 * time.Second), MarksMS: map[string]float64{"vad_stop": 0, "vad_detected": 12.1, "stt_final": 212.3, "turn_end": 250, "llm_request": 250.4, "llm_first_token": 480.2, "tts_first_audio": 600.1, "first_audio_out": 640.2}},
			{Epoch: 2, At: t0.Add(20 * time.Second), MarksMS: map[string]float64{"vad_stop": 0, "stt_final": 150, "turn_end": 180, "llm_first_token": 900, "tools_done": 1400, "tts_first_audio": 1500, "first_audio_out": 1550.5}},
			{Epoch: 3, At: t0.Add(40 * time.Second), MarksMS: map[string]float64{"vad_stop": 0, "stt_final": 120, "turn_end": 160, "interrupt": 300}},
		},
	}
}

// TestCallsRender: the list, nodes and show renderers against their
// golden files (go test ./cmd/brisvox -run TestCallsRender -update
// rewrites them), and every line of every one fits 100 columns and holds
// no control character. Mutations caught (each seen failing): the
// shrinking of wide columns removed (the list is 130 columns wide); the
// counters not wrapped; clean not applied to ids (the escape sequence
// reaches the terminal); the waterfall scaled to each turn instead of
// the widest.
func TestCallsRender(t *testing.T) {
	cases := []struct {
		name   string
		render func(io.Writer)
	}{
		{"list", func(w io.Writer) { renderList(w, goldenCalls) }},
		{"list-empty", func(w io.Writer) { renderList(w, nil) }},
		{"nodes", func(w io.Writer) { renderNodes(w, goldenNodes) }},
		{"show", func(w io.Writer) { renderShow(w, goldenDetail()) }},
		{"show-no-turns", func(w io.Writer) {
			d := goldenDetail()
			d.Turns, d.Call = nil, goldenCalls[2]
			renderShow(w, d)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			tc.render(&b)
			checkColumns(t, b.String())
			path := filepath.Join("testdata", "calls", tc.name+".txt")
			if *updateCalls {
				if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test -run TestCallsRender -update writes it)", err)
			}
			if b.String() != string(want) {
				t.Errorf("%s differs from %s:\n%s", tc.name, path, b.String())
			}
		})
	}
}

// checkColumns fails the test for a line wider than 100 columns or one
// with a control character.
func checkColumns(t *testing.T, out string) {
	t.Helper()
	for i, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if w := textWidth(l); w > columns {
			t.Errorf("line %d is %d columns wide: %q", i+1, w, l)
		}
		if clean(l) != l {
			t.Errorf("line %d holds a control character: %q", i+1, l)
		}
	}
}

func TestFormats(t *testing.T) {
	for _, tc := range []struct {
		ms   int64
		want string
	}{{0, "0s"}, {4200, "4s"}, {59_999, "59s"}, {60_000, "1m00s"}, {192_000, "3m12s"}, {3_725_000, "1h02m"}, {-5, "0s"}, {100 * 3600_000, "100h00m"}} {
		if got := fmtAge(tc.ms); got != tc.want {
			t.Errorf("fmtAge(%d) = %q, want %q", tc.ms, got, tc.want)
		}
	}
	if got := truncate("receptionist", 8); got != "recepti…" || textWidth(got) != 8 {
		t.Errorf("truncate: %q", got)
	}
	if got := truncate("受付エージェント", 7); textWidth(got) > 7 {
		t.Errorf("truncate of wide runes: %q is %d columns", got, textWidth(got))
	}
	if opclient.MinToken != serve.MinOperatorToken {
		t.Errorf("opclient.MinToken %d, serve.MinOperatorToken %d", opclient.MinToken, serve.MinOperatorToken)
	}
}

// runCalls runs `brisvox calls args` with env as its environment.
func runCalls(ctx context.Context, env map[string]string, args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = callsWith(ctx, args, callsEnv{stdout: &out, stderr: &errb, lookupEnv: func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}})
	return code, out.String(), errb.String()
}

// TestCallsCommandLine: usage errors exit 2, a token variable unset or
// too short exits 1 naming the variable (never printing its value), the
// address comes from BRISVOX_OPERATOR_ADDR unless --addr is given, flags
// go before or after the arguments, and each API error is its one line.
// Mutation caught: a --token flag added (a token in a flag value is in
// the shell history and the process list).
func TestCallsCommandLine(t *testing.T) {
	defer goleak.VerifyNone(t)
	const tok = "op-token-0123456789abcdef"
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.Method+" "+r.URL.Path+" "+r.URL.RawQuery)
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Header.Get("Authorization") != "Bearer "+tok:
			w.WriteHeader(401)
			io.WriteString(w, `{"error":"a valid operator token is required"}`)
		case strings.HasSuffix(r.URL.Path, "/restart"):
			w.WriteHeader(400)
			io.WriteString(w, `{"error":"serve: unknown stage","stages":["transport","vad","stt"]}`)
		case strings.HasPrefix(r.URL.Path, "/operator/nodes/"):
			w.WriteHeader(404)
			io.WriteString(w, `{"error":"serve: unknown node"}`)
		case r.URL.Path == "/operator/calls":
			io.WriteString(w, `{"node":"n1","calls":[]}`)
		default:
			w.WriteHeader(404)
			io.WriteString(w, `{"error":"serve: unknown call"}`)
		}
	}))
	defer srv.Close()
	env := map[string]string{"BRISVOX_OPERATOR_TOKEN": tok, "BRISVOX_OPERATOR_ADDR": srv.URL}
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		code int
		out  string // in stdout, or stderr when the code is not 0
	}{
		{"no command", env, nil, 2, "usage: brisvox calls"},
		{"unknown command", env, []string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{"show without an id", env, []string{"show"}, 2, "show needs ID"},
		{"restart without a stage", env, []string{"restart", "c1"}, 2, "restart needs ID STAGE"},
		{"extra argument", env, []string{"hangup", "c1", "c2"}, 2, `unexpected argument "c2"`},
		{"bad addr", env, []string{"--addr", "localhost:8000", "list"}, 2, "not an http(s) URL"},
		{"bad timeout", env, []string{"list", "--timeout", "0s"}, 2, "--timeout 0s"},
		{"token flag", env, []string{"list", "--token", tok}, 2, "flag provided but not defined: -token"},
		{"token unset", map[string]string{"BRISVOX_OPERATOR_ADDR": srv.URL}, []string{"list"}, 1, "the environment variable BRISVOX_OPERATOR_TOKEN is not set"},
		{"token short", map[string]string{"OPS": "short-token", "BRISVOX_OPERATOR_ADDR": srv.URL}, []string{"--token-env", "OPS", "list"}, 1, "the variable OPS holds 11 characters, an operator token has at least 16"},
		{"wrong token", map[string]string{"BRISVOX_OPERATOR_TOKEN": "op-token-wrong-0123456789", "BRISVOX_OPERATOR_ADDR": srv.URL}, []string{"list"}, 1,
			"the operator API at " + srv.URL + " refused the token: check the variable BRISVOX_OPERATOR_TOKEN"},
		{"list", env, []string{"list"}, 0, "no live calls"},
		{"list json", env, []string{"list", "--json"}, 0, `"calls": []`},
		{"unknown call", env, []string{"show", "c9", "--json"}, 1, "no live call c9 at the operator API at " + srv.URL},
		{"unknown stage", env, []string{"restart", "c1", "mixer"}, 1, `"mixer" is not a stage a restart can name: want one of transport, vad, stt`},
		{"unknown node", env, []string{"drain", "n9"}, 1, "no node n9 at the operator API"},
		{"addr flag after", map[string]string{"BRISVOX_OPERATOR_TOKEN": tok}, []string{"list", "--addr", srv.URL}, 0, "no live calls"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCalls(ctx, tc.env, tc.args...)
			got := out
			if tc.code != 0 {
				got = errs
			}
			if code != tc.code || !strings.Contains(got, tc.out) {
				t.Fatalf("exit %d (want %d)\nstdout %q\nstderr %q\nwant %q", code, tc.code, out, errs, tc.out)
			}
			if tc.code != 0 && tc.code != 2 && strings.Count(strings.TrimSpace(errs), "\n") != 0 {
				t.Errorf("more than one line on stderr: %q", errs)
			}
			for _, v := range tc.env {
				if len(v) >= 8 && strings.Contains(out+errs, v) && v != srv.URL {
					t.Errorf("a token is in the output: %q %q", out, errs)
				}
			}
		})
	}
	srv.Close()
	if code, _, errs := runCalls(ctx, env, "list"); code != 1 || !strings.Contains(errs, "cannot reach the operator API at "+srv.URL+": ") || !strings.Contains(errs, "is brisvox serve running with --operator-token-env?") {
		t.Errorf("a stopped server: %d %q", code, errs)
	}
}

// pipeTransport answers the event stream from a pipe the test writes.
type pipeTransport struct{ body *io.PipeReader }

func (p pipeTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	h := http.Header{}
	h.Set("Content-Type", "text/event-stream")
	return &http.Response{StatusCode: 200, Status: "200 OK", Header: h, Body: p.body, Request: r}, nil
}

// TestWatchRedraws: on a terminal, list --watch redraws in place (cursor
// home, clear) at most every 500 ms however fast the events come, keeps
// redrawing while calls are live (their ages move), and its last table
// has the last state; it ends with its context, its reader gone. In a
// synctest bubble: the time is virtual. Mutation caught (seen failing):
// the throttle removed (a table per event: 21 draws).
func TestWatchRedraws(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pr, pw := io.Pipe()
		var out, errs bytes.Buffer
		ctx, cancel := context.WithCancel(context.Background())
		code := make(chan int, 1)
		env := callsEnv{stdout: &out, stderr: &errs, tty: true, httpClient: &http.Client{Transport: pipeTransport{pr}},
			lookupEnv: func(k string) (string, bool) { return "op-token-0123456789abcdef", k == "BRISVOX_OPERATOR_TOKEN" }}
		go func() { code <- callsWith(ctx, []string{"list", "--watch"}, env) }()
		fmt.Fprint(pw, "event: snapshot\ndata: {\"node\":\"n1\",\"calls\":[],\"nodes\":[]}\n\n")
		synctest.Wait()
		for i := range 20 {
			fmt.Fprintf(pw, "event: call\ndata: {\"id\":\"c1\",\"node\":\"n1\",\"state\":\"speaking\",\"age_ms\":1000,\"turns\":%d}\n\n", i)
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		draws := strings.Count(out.String(), "\x1b[H\x1b[2J")
		// The snapshot, then in 1.2 s at most one a 500 ms.
		if draws < 2 || draws > 4 {
			t.Errorf("%d draws in 1.2 s of 20 events, want 2 to 4", draws)
		}
		frames := strings.Split(out.String(), "\x1b[H\x1b[2J")
		if last := frames[len(frames)-1]; !strings.Contains(last, "c1") || !strings.Contains(last, " 19 ") {
			t.Errorf("the last table: %q", last)
		}
		cancel()
		if c := <-code; c != 0 {
			t.Errorf("exit %d: %s", c, errs.String())
		}
		pw.Close()
	})
}

// TestWatchJSON: list --watch --json prints each event as one JSON line
// {"event", "data"} as it comes, and ends with the stream (exit 0, the
// end said on stderr). Mutation caught: the event's data re-encoded from
// the typed struct (a field the server added is lost).
func TestWatchJSON(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pr, pw := io.Pipe()
		var out, errs bytes.Buffer
		code := make(chan int, 1)
		env := callsEnv{stdout: &out, stderr: &errs, httpClient: &http.Client{Transport: pipeTransport{pr}},
			lookupEnv: func(k string) (string, bool) { return "op-token-0123456789abcdef", k == "BRISVOX_OPERATOR_TOKEN" }}
		go func() { code <- callsWith(context.Background(), []string{"list", "--watch", "--json"}, env) }()
		fmt.Fprint(pw, "event: snapshot\ndata: {\"node\":\"n1\",\"calls\":[],\"nodes\":[]}\n\n")
		fmt.Fprint(pw, "event: call\ndata: {\"id\":\"c1\",\"node\":\"n1\",\"state\":\"listening\",\"newer\":7}\n\n")
		pw.Close()
		if c := <-code; c != 0 || !strings.Contains(errs.String(), "ended the event stream") {
			t.Errorf("exit %d: %q", c, errs.String())
		}
		want := `{"data":{"node":"n1","calls":[],"nodes":[]},"event":"snapshot"}` + "\n" +
			`{"data":{"id":"c1","node":"n1","state":"listening","newer":7},"event":"call"}` + "\n"
		if out.String() != want {
			t.Errorf("got\n%s\nwant\n%s", out.String(), want)
		}
	})
}
