package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brisvox/brisvox/internal/leaktest"
	"github.com/brisvox/brisvox/media/silero"
)

// TestBurstRuns builds brisvox, serves the keyless agent with
// --max-calls 5 as a child and opens 30 connections at once for a 1 s
// hold on each transport the agent serves: no more than 5 are held, every
// other one is refused or closed (no other failure), and the memory rows
// are read. Counts only, never timings. Real sockets and a child process:
// skipped with -short. Mutations: a 503 classified as admitted ->
// admitted 29 (seen); the settle samples not taken -> 2 memory rows.
func TestBurstRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("real sockets and a child process")
	}
	base := leaktest.Snapshot()
	dir := t.TempDir()
	bin := filepath.Join(dir, "brisvox")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/brisvox/brisvox/cmd/brisvox").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	agent := keylessAgent(t, dir)
	for _, transport := range []string{"pcm", "sip", "webrtc"} {
		t.Run(transport, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run([]string{"burst", "--brisvox", bin, "--agent", agent, "--transport", transport, "--conns", "30", "--max-calls", "5",
				"--hold", "1s", "--settle", "1s", "--json"}, &stdout, &stderr)
			if code != 0 {
				t.Fatalf("burst: exit %d\n%s", code, stderr.String())
			}
			var reps []burstReport
			if err := json.Unmarshal(stdout.Bytes(), &reps); err != nil || len(reps) != 1 {
				t.Fatalf("report: %v\n%s", err, stdout.String())
			}
			r := reps[0]
			if r.Admitted > 5 || r.Admitted == 0 || r.Admitted+r.Refused+r.Closed != 30 || r.Failed != 0 {
				t.Errorf("admitted %d, refused %d, closed %d, failed %d (%v): want at most 5 admitted and every other refused or closed",
					r.Admitted, r.Refused, r.Closed, r.Failed, r.Failures)
			}
			if r.Upgraded != r.Admitted+r.Closed {
				t.Errorf("upgraded %d, admitted %d + closed %d", r.Upgraded, r.Admitted, r.Closed)
			}
			if len(r.Memory) != 3 || r.Memory[0].At != "before" || r.Memory[1].At != "peak" || r.Memory[2].At != "+1s" {
				t.Fatalf("memory rows %+v", r.Memory)
			}
			for _, m := range r.Memory {
				if m.VmRSS <= 0 || m.VmHWM < m.VmRSS || m.HeapInuse <= 0 || m.GoSys <= 0 {
					t.Errorf("memory row %+v", m)
				}
			}
			if r.Memory[1].LiveCalls == 0 {
				t.Errorf("no live call seen at the peak")
			}
		})
	}
	waitGoroutines(t, base)
}

// keylessAgent is examples/agents/local.toml, with the energy VAD where
// the Silero files are not installed.
func keylessAgent(t *testing.T, dir string) string {
	t.Helper()
	path, err := filepath.Abs("../../examples/agents/local.toml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := silero.LocateFiles("", ""); err == nil {
		return path
	}
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The Silero settings go with the engine.
	var out []string
	for l := range strings.Lines(string(src)) {
		for _, k := range []string{"threshold", "stop_threshold", "min_speech", "hangover"} {
			if strings.HasPrefix(l, k+" ") {
				l = ""
			}
		}
		out = append(out, strings.Replace(l, `engine = "silero"`, `engine = "energy"`, 1))
	}
	path = filepath.Join(dir, "local-energy.toml")
	if err := os.WriteFile(path, []byte(strings.Join(out, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// waitGoroutines fails when goroutines started since base are still
// alive after a grace for the HTTP transports' readers to see their
// connections closed.
func waitGoroutines(t *testing.T, base leaktest.Set) {
	t.Helper()
	if n, stacks := leaktest.Settle(base, 5*time.Second); n != 0 {
		t.Errorf("%d goroutines left\n%s", n, stacks)
	}
}

func TestBurstFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"no binary", []string{"burst"}},
		{"unknown transport", []string{"burst", "--brisvox", "x", "--transport", "xmpp"}},
		{"no connections", []string{"burst", "--brisvox", "x", "--conns", "0"}},
		{"too many sources", []string{"burst", "--brisvox", "x", "--sources", "251"}},
		{"settle not increasing", []string{"burst", "--brisvox", "x", "--settle", "30s,5s"}},
		{"settle not a duration", []string{"burst", "--brisvox", "x", "--settle", "soon"}},
		{"an argument", []string{"burst", "--brisvox", "x", "extra"}},
		{"speech on sip", []string{"burst", "--brisvox", "x", "--transport", "sip", "--speech", "a.wav"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code := run(tt.args, io.Discard, io.Discard); code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
		})
	}
}

func TestParseSIP(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		ok      bool
		status  int
		request string
		reason  string
		tag     string
		retry   string
		body    string
	}{
		{name: "503 with Retry-After", in: "SIP/2.0 503 Service Unavailable\r\nTo: <sip:a@b>;tag=x1\r\nRetry-After: 5\r\nContent-Length: 0\r\n\r\n",
			ok: true, status: 503, reason: "Service Unavailable", tag: "x1", retry: "5"},
		{name: "200 with a body", in: "SIP/2.0 200 OK\r\nto: <sip:a@b>;tag=t;foo=1\r\n\r\nv=0\r\n", ok: true, status: 200, reason: "OK", tag: "t", body: "v=0\r\n"},
		{name: "a request", in: "BYE sip:x SIP/2.0\r\nCSeq: 2 BYE\r\n\r\n", ok: true, request: "BYE"},
		{name: "first To wins", in: "SIP/2.0 180 Ringing\r\nTo: <sip:a>;tag=1\r\nTo: <sip:a>;tag=2\r\n\r\n", ok: true, status: 180, reason: "Ringing", tag: "1"},
		{name: "a bad status", in: "SIP/2.0 abc OK\r\n\r\n"},
		{name: "one word", in: "garbage"},
		{name: "empty", in: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, ok := parseSIP([]byte(tt.in))
			if ok != tt.ok {
				t.Fatalf("ok %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			if m.status != tt.status || m.request != tt.request || m.reason != tt.reason || tagOf(m.headers["to"]) != tt.tag ||
				m.headers["retry-after"] != tt.retry || m.body != tt.body {
				t.Errorf("got %+v", m)
			}
		})
	}
}

func FuzzParseSIP(f *testing.F) {
	f.Add([]byte("SIP/2.0 200 OK\r\nTo: <sip:a@b>;tag=x\r\nContact: <sip:s@127.0.0.1:5060>\r\n\r\nc=IN IP4 127.0.0.1\r\nm=audio 4000 RTP/AVP 9\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, ok := parseSIP(b)
		if !ok {
			return
		}
		if m.request != "" && m.status != 0 {
			t.Fatalf("both a request and a response: %+v", m)
		}
		_ = tagOf(m.headers["to"])
		if a, err := answerMedia(m.body); err == nil && (a.Port <= 0 || a.Port > 65535 || a.IP == nil) {
			t.Fatalf("media address %v", a)
		}
	})
}

func TestAnswerMedia(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"an answer", "v=0\r\nc=IN IP4 127.0.0.1\r\nm=audio 20000 RTP/AVP 9\r\n", "127.0.0.1:20000"},
		{"the first audio", "c=IN IP4 10.0.0.1\nm=audio 4000 RTP/AVP 9\nm=audio 5000 RTP/AVP 0\n", "10.0.0.1:4000"},
		{"no port", "c=IN IP4 127.0.0.1\r\nm=audio x RTP/AVP 9\r\n", ""},
		{"port out of range", "c=IN IP4 127.0.0.1\r\nm=audio 70000 RTP/AVP 9\r\n", ""},
		{"no address", "m=audio 4000 RTP/AVP 9\r\n", ""},
		{"empty m line", "c=IN IP4 127.0.0.1\r\nm=audio \r\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := answerMedia(tt.body)
			got := ""
			if err == nil {
				got = a.String()
			}
			if got != tt.want {
				t.Errorf("got %q (%v), want %q", got, err, tt.want)
			}
		})
	}
}

func TestPromValues(t *testing.T) {
	in := "# HELP go_goroutines x\n# TYPE go_goroutines gauge\ngo_goroutines 14\n" +
		"go_memstats_heap_inuse_bytes 2.097152e+06\nbrisvox_calls_active{agent=\"local\"} 3\nbroken\nnot_a_number x\n\n"
	got := promValues(strings.NewReader(in))
	want := map[string]float64{"go_goroutines": 14, "go_memstats_heap_inuse_bytes": 2097152, "brisvox_calls_active": 3}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %v", got)
	}
}

func FuzzPromValues(f *testing.F) {
	f.Add([]byte("go_goroutines 14\nbrisvox_calls_active{agent=\"a b\"} 3\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for k := range promValues(bytes.NewReader(b)) {
			if strings.ContainsAny(k, " \t{") {
				t.Fatalf("name %q", k)
			}
		}
	})
}

func TestProcKB(t *testing.T) {
	status := []byte("Name:\tbrisvox\nVmHWM:\t  318052 kB\nVmRSS:\t  185000 kB\nAnonymous:  12 kB\n")
	tests := []struct {
		name string
		want float64
	}{{"VmRSS:", 185000}, {"VmHWM:", 318052}, {"Anonymous:", 12}, {"VmSwap:", 0}}
	for _, tt := range tests {
		if got := procKB(status, tt.name); got != tt.want {
			t.Errorf("%s = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestAllowOverCapacity(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"no table", "name = \"a\"\n", "name = \"a\"\n\n[serve]\nover_capacity = true\n"},
		{"a table", "[serve]\nrate_limit = 5\n[vad]\n", "[serve]\nover_capacity = true\nrate_limit = 5\n[vad]\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := allowOverCapacity(tt.in); got != tt.want {
				t.Errorf("got %q", got)
			}
		})
	}
}

func TestEnableTwilio(t *testing.T) {
	tests := []struct {
		name, in string
		ok       bool
		want     string
	}{
		{"off", "[transports.pcm]\nenabled = false\n[transports.twilio]\nenabled = false\n", true, "[transports.pcm]\nenabled = false\n[transports.twilio]\nenabled = true\n"},
		{"on", "[transports.twilio]\nenabled = true # yes\n", true, "[transports.twilio]\nenabled = true # yes\n"},
		{"absent", "[transports.pcm]\nenabled = false\n", false, ""},
		{"other key", "[transports.twilio]\nenabled_x = false\n", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := enableTwilio(tt.in)
			if ok != tt.ok || (ok && got != tt.want) {
				t.Errorf("got %q %v", got, ok)
			}
		})
	}
}

// TestRefusedOrFailed: a 503 is a refusal whatever its body (the JSON
// cause preferred), anything else a failure named without addresses.
// Mutation: Retry-After not read -> retry false on the first row (seen
// failing when the header name was misspelt).
func TestRefusedOrFailed(t *testing.T) {
	header := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i+1 < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	tests := []struct {
		name   string
		resp   *http.Response
		body   string
		err    error
		kind   outcomeKind
		detail string
		retry  bool
	}{
		{"503 with a cause", &http.Response{StatusCode: 503, Header: header("Retry-After", "5")}, `{"error":"full: 20 calls","cause":"full"}`, nil, outRefused, "cause full", true},
		{"503 with an error only", &http.Response{StatusCode: 503, Header: header()}, `{"error":"serve: at capacity"}`, nil, outRefused, "serve: at capacity", false},
		{"503 in text", &http.Response{StatusCode: 503, Header: header()}, "not admitted\n", nil, outRefused, "not admitted", false},
		{"403", &http.Response{StatusCode: 403, Header: header()}, "", nil, outFailed, "status 403", false},
		{"refused connection", nil, "", fmt.Errorf("dial: %w", syscall.ECONNREFUSED), outFailed, "connection refused", false},
		{"websocket status", nil, "", errors.New("failed to WebSocket dial: expected handshake response status code 101 but got 404"), outFailed, "websocket: status 404", false},
		{"digits hidden", nil, "", errors.New("dial tcp 127.0.0.1:4000: odd"), outFailed, "dial tcp NNN.N.N.N:NNNN: odd", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := refusedOrFailed(tt.resp, []byte(tt.body), tt.err)
			if o.kind != tt.kind || o.detail != tt.detail || o.retry != tt.retry {
				t.Errorf("got %+v", o)
			}
		})
	}
}
