package serve

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brisvox/brisvox/cmd/internal/records"
	"github.com/brisvox/brisvox/internal/pipetest"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"
)

// memKeeper is the records routes' test double: records in memory,
// filtered and paged as records.Store says, recordings as byte slices.
type memKeeper struct {
	mu       sync.Mutex
	recs     map[string]*records.Record
	audio    map[string][]byte
	audit    []records.AuditEntry
	erasures []records.Erasure // as the keeper received them
	queries  []records.Query
	paused   map[string]bool
	live     map[string]bool
}

func newMemKeeper(rs ...*records.Record) *memKeeper {
	k := &memKeeper{recs: map[string]*records.Record{}, audio: map[string][]byte{}, paused: map[string]bool{}, live: map[string]bool{}}
	for _, r := range rs {
		k.recs[r.CallID] = r
	}
	return k
}

func (k *memKeeper) HashNumber(n string) string {
	m := hmac.New(sha256.New, []byte("test key"))
	m.Write([]byte(n))
	return hex.EncodeToString(m.Sum(nil))
}

func (k *memKeeper) List(_ context.Context, q records.Query) ([]records.Summary, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.queries = append(k.queries, q)
	var out []records.Summary
	for _, r := range k.recs {
		switch {
		case !q.From.IsZero() && r.Started.Before(q.From), !q.To.IsZero() && !r.Started.Before(q.To),
			q.Agent != "" && r.Agent != q.Agent, q.EndReason != "" && r.EndReason != q.EndReason,
			q.CallerHash != "" && r.Caller.Hash != q.CallerHash, q.Node != "" && r.Node != q.Node,
			q.Transport != "" && r.Transport != q.Transport:
			continue
		}
		if b := q.Before; b != nil && !(r.Started.Before(b.Started) || (r.Started.Equal(b.Started) && r.CallID < b.CallID)) {
			continue
		}
		out = append(out, records.Summary{CallID: r.CallID, Node: r.Node, Transport: r.Transport, Agent: r.Agent,
			Started: r.Started, Ended: r.Ended, EndReason: r.EndReason, Turns: len(r.Turns), Tools: len(r.Tools),
			CallerHash: r.Caller.Hash, Recording: r.Recording != nil && !r.Recording.Removed})
	}
	slices.SortFunc(out, func(a, b records.Summary) int {
		if c := b.Started.Compare(a.Started); c != 0 {
			return c
		}
		return strings.Compare(b.CallID, a.CallID)
	})
	if len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, nil
}

func (k *memKeeper) Get(_ context.Context, id string) (*records.Record, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	r, ok := k.recs[id]
	if !ok {
		return nil, fmt.Errorf("%w: %s", records.ErrNotFound, id)
	}
	return r, nil
}

func (k *memKeeper) Audit(context.Context) ([]records.AuditEntry, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.Clone(k.audit), nil
}

func (k *memKeeper) Erase(_ context.Context, e records.Erasure) (records.ErasureResult, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.erasures = append(k.erasures, e)
	var res records.ErasureResult
	for id, r := range k.recs {
		if (e.CallID != "" && id == e.CallID) || (e.CallerHash != "" && r.Caller.Hash == e.CallerHash) {
			delete(k.recs, id)
			res.Erased++
			if r.Recording != nil {
				res.Recordings = append(res.Recordings, *r.Recording)
			}
		}
	}
	k.audit = append(k.audit, records.AuditEntry{At: e.At, By: e.By, Reason: e.Reason, CallID: e.CallID, CallerHash: e.CallerHash, Erased: res.Erased})
	return res, nil
}

// nopCloser is a recording read from memory.
type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

func (k *memKeeper) OpenRecording(key string) (io.ReadSeekCloser, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	b, ok := k.audio[key]
	if !ok {
		// As recording.Recorder.Open says it.
		return nil, fmt.Errorf("%w: no recording %s", records.ErrNotFound, key)
	}
	return nopCloser{bytes.NewReader(b)}, nil
}

func (k *memKeeper) Pause(id string) error  { return k.setPaused(id, true) }
func (k *memKeeper) Resume(id string) error { return k.setPaused(id, false) }

func (k *memKeeper) setPaused(id string, p bool) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.live[id] {
		return errNoCall // as recording.Recorder says it
	}
	k.paused[id] = p
	return nil
}

var errNoCall = errors.New("recording: no live recording of that call")

var _ RecordKeeper = (*memKeeper)(nil)

// The test records: three calls of two agents, one caller twice.
const testCaller = "+447700900123"

var t0 = time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)

func testRecords(k *memKeeper) []*records.Record {
	h := k.HashNumber(testCaller)
	return []*records.Record{
		{Version: 1, CallID: "c1", Node: "n1", Transport: "pcm", Agent: "dentist", Started: t0, Ended: t0.Add(time.Minute),
			EndReason: "hangup", Caller: records.Party{Hash: h}, Turns: []records.Turn{{Epoch: 1}},
			Recording: &records.Recording{Format: "wav", Key: "2026/12/03/c1.wav", Bytes: 1000}},
		{Version: 1, CallID: "c2", Node: "n1", Transport: "sip", Agent: "dentist", Started: t0.Add(time.Hour), Ended: t0.Add(time.Hour + time.Minute),
			EndReason: "no_input", Caller: records.Party{Hash: h}},
		{Version: 1, CallID: "c3", Node: "n2", Transport: "webrtc", Agent: "pizza", Started: t0.Add(2 * time.Hour), Ended: t0.Add(2*time.Hour + time.Second),
			EndReason: "hangup", Recording: &records.Recording{Format: "wav", Key: "gone", Removed: true}},
	}
}

// recordsServer serves the operator API with k (nil: no records) on an
// in-memory listener; logs go to the returned buffer.
func recordsServer(t *testing.T, k RecordKeeper) (*pipetest.Listener, *syncBuffer, func()) {
	t.Helper()
	logs := &syncBuffer{}
	cfg := Config{MaxCalls: 1, Node: "n1", Log: zerolog.New(logs)}
	if k != nil {
		cfg.Records = k
	}
	s, ln, stop := serving(t, cfg, &simAgent{})
	if err := s.EnableOperator(testToken); err != nil {
		t.Fatal(err)
	}
	return ln, logs, func() {
		if err := stop(); err != nil {
			t.Errorf("serve: %v", err)
		}
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// send sends one request with body and headers and returns the answer.
func send(t *testing.T, ln *pipetest.Listener, method, path, body string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{DialContext: ln.DialContext}}
	defer c.CloseIdleConnections()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, "http://brisvox"+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func ids(t *testing.T, body []byte) []string {
	t.Helper()
	var out struct {
		Records []records.Summary `json:"records"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatalf("%v in %s", err, body)
	}
	var s []string
	for _, r := range out.Records {
		s = append(s, r.CallID)
	}
	return s
}

// TestRecordsList: each filter selects what it names, newest first; a
// caller's number reaches the store as its hash only; a bad filter is 400
// saying what was wrong; no token is 401. Mutations caught (each seen
// failing): the caller filter passed unhashed (caller number: no
// records), the limit's bound dropped (limit=0 accepted), the agent filter
// not read (c3 listed for dentist).
func TestRecordsList(t *testing.T) {
	defer goleak.VerifyNone(t)
	k := newMemKeeper()
	for _, r := range testRecords(k) {
		k.recs[r.CallID] = r
	}
	ln, logs, stop := recordsServer(t, k)
	defer stop()
	for _, tc := range []struct {
		name, query string
		want        []string
	}{
		{"all", "", []string{"c3", "c2", "c1"}},
		{"agent", "?agent=dentist", []string{"c2", "c1"}},
		{"end reason", "?end_reason=hangup", []string{"c3", "c1"}},
		{"from", "?from=2026-12-03T13:00:00Z", []string{"c3", "c2"}},
		{"from to", "?from=2026-12-03T12:30:00Z&to=2026-12-03T14:00:00Z", []string{"c2"}},
		{"caller number", "?caller=" + strings.ReplaceAll(testCaller, "+", "%2B"), []string{"c2", "c1"}},
		{"caller hash", "?caller_hash=" + k.HashNumber(testCaller), []string{"c2", "c1"}},
		{"node and transport", "?node=n1&transport=sip", []string{"c2"}},
		{"limit", "?limit=1", []string{"c3"}},
		{"none", "?agent=nobody", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := send(t, ln, "GET", "/operator/records"+tc.query, "")
			if resp.StatusCode != 200 {
				t.Fatalf("%d %s", resp.StatusCode, body)
			}
			if got := ids(t, body); !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
	for _, q := range k.queries {
		if strings.Contains(q.CallerHash, "7700900123") {
			t.Errorf("a number reached the store: %+v", q)
		}
	}

	for _, tc := range []struct{ name, query, want string }{
		{"unknown filter", "?agnet=x", `unknown filter \"agnet\"`},
		{"bad time", "?from=yesterday", "not an RFC 3339 time"},
		{"from after to", "?from=2026-12-03T13:00:00Z&to=2026-12-03T12:00:00Z", "from must be before to"},
		{"limit zero", "?limit=0", "from 1 to 10000"},
		{"limit big", "?limit=10001", "from 1 to 10000"},
		{"both callers", "?caller=1234&caller_hash=" + k.HashNumber("1"), "not both"},
		{"bad hash", "?caller_hash=xyz", "caller_hash"},
		{"bad cursor", "?before=nonsense", "cursor"},
		{"twice", "?agent=a&agent=b", "given 2 times"},
		{"control", "?agent=a%1bb", "no control character"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := send(t, ln, "GET", "/operator/records"+tc.query, "")
			if resp.StatusCode != 400 || !strings.Contains(string(body), tc.want) {
				t.Errorf("%d %s, want 400 with %q", resp.StatusCode, body, tc.want)
			}
		})
	}
	// A bad caller number is not echoed.
	resp, body := send(t, ln, "GET", "/operator/records?caller="+strings.Repeat("9", 70), "")
	if resp.StatusCode != 400 || strings.Contains(string(body), "999999") {
		t.Errorf("a long number: %d %s", resp.StatusCode, body)
	}

	req, _ := http.NewRequest("GET", "http://brisvox/operator/records", nil)
	c := &http.Client{Transport: &http.Transport{DialContext: ln.DialContext}}
	defer c.CloseIdleConnections()
	if r, err := c.Do(req); err != nil || r.StatusCode != 401 {
		t.Errorf("no token: %v %v", r, err)
	} else {
		r.Body.Close()
	}
	if strings.Contains(logs.String(), "7700900123") {
		t.Errorf("a number reached the log: %s", logs)
	}
}

// TestRecordsPaging: next pages through everything, each record once.
// Mutation caught: next from the first summary (a loop; seen failing).
func TestRecordsPaging(t *testing.T) {
	defer goleak.VerifyNone(t)
	k := newMemKeeper()
	var want []string
	for i := range 25 {
		id := fmt.Sprintf("p%02d", i)
		// Pairs share a start time: the cursor's id breaks the tie.
		k.recs[id] = &records.Record{CallID: id, Agent: "a", Started: t0.Add(time.Duration(i/2) * time.Minute)}
	}
	for i := 24; i >= 0; i-- {
		want = append(want, fmt.Sprintf("p%02d", i))
	}
	ln, _, stop := recordsServer(t, k)
	defer stop()
	var got []string
	path := "/operator/records?limit=4"
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatal("more than 10 pages")
		}
		resp, body := send(t, ln, "GET", path, "")
		if resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
		got = append(got, ids(t, body)...)
		var out struct {
			Next string `json:"next"`
		}
		_ = json.Unmarshal(body, &out)
		if out.Next == "" {
			break
		}
		path = "/operator/records?limit=4&before=" + out.Next
	}
	if !slices.Equal(got, want) {
		t.Errorf("paged %v, want %v", got, want)
	}
}

// TestRecordsGetAndRecording: a record by id, 404 for an unknown one; its
// recording with Range (206 and the bytes asked for), 404 when none was
// made, 410 when removed. Mutation caught: the recording served with
// io.Copy instead of ServeContent (Range ignored: 200; seen failing).
func TestRecordsGetAndRecording(t *testing.T) {
	defer goleak.VerifyNone(t)
	k := newMemKeeper()
	for _, r := range testRecords(k) {
		k.recs[r.CallID] = r
	}
	audio := make([]byte, 1000)
	for i := range audio {
		audio[i] = byte(i)
	}
	k.audio["2026/12/03/c1.wav"] = audio
	ln, _, stop := recordsServer(t, k)
	defer stop()

	resp, body := send(t, ln, "GET", "/operator/records/c1", "")
	var got struct {
		Record records.Record `json:"record"`
	}
	if err := json.Unmarshal(body, &got); resp.StatusCode != 200 || err != nil || got.Record.CallID != "c1" || got.Record.Agent != "dentist" {
		t.Errorf("get c1: %d %v %s", resp.StatusCode, err, body)
	}
	resp, body = send(t, ln, "GET", "/operator/records/nope", "")
	if resp.StatusCode != 404 || !strings.Contains(string(body), `no call record \"nope\"`) {
		t.Errorf("unknown: %d %s", resp.StatusCode, body)
	}

	for _, tc := range []struct {
		name, id, rng string
		code          int
		want          []byte
		text          string
	}{
		{"whole", "c1", "", 200, audio, ""},
		{"range", "c1", "bytes=100-199", 206, audio[100:200], ""},
		{"tail", "c1", "bytes=-10", 206, audio[990:], ""},
		{"none made", "c2", "", 404, nil, "it was not recorded"},
		{"removed", "c3", "", 410, nil, "removed"},
		{"no record", "nope", "", 404, nil, "no call record"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var hdr []string
			if tc.rng != "" {
				hdr = []string{"Range", tc.rng}
			}
			resp, body := send(t, ln, "GET", "/operator/records/"+tc.id+"/recording", "", hdr...)
			if resp.StatusCode != tc.code {
				t.Fatalf("%d (%d bytes), want %d", resp.StatusCode, len(body), tc.code)
			}
			if tc.want != nil && (!bytes.Equal(body, tc.want) || resp.Header.Get("Content-Type") != "audio/wav") {
				t.Errorf("%d bytes (%s), want %d", len(body), resp.Header.Get("Content-Type"), len(tc.want))
			}
			if tc.text != "" && !strings.Contains(string(body), tc.text) {
				t.Errorf("%s, want %q", body, tc.text)
			}
		})
	}
	// The file gone (the recorder's records.ErrNotFound): 410, not the
	// record's 404. Mutation caught: the recorder's error passed on as it
	// came (404 "no call record"; seen failing).
	delete(k.audio, "2026/12/03/c1.wav")
	if resp, body := send(t, ln, "GET", "/operator/records/c1/recording", ""); resp.StatusCode != 410 || !strings.Contains(string(body), "file is gone") {
		t.Errorf("file gone: %d %s", resp.StatusCode, body)
	}
}

// TestRecordingPause: pause and resume reach the recorder for a live
// call; an unknown one is 404.
func TestRecordingPause(t *testing.T) {
	defer goleak.VerifyNone(t)
	k := newMemKeeper()
	k.live["live1"] = true
	ln, _, stop := recordsServer(t, k)
	defer stop()
	if resp, body := send(t, ln, "POST", "/operator/records/live1/recording/pause", ""); resp.StatusCode != 200 || !k.paused["live1"] {
		t.Errorf("pause: %d %s", resp.StatusCode, body)
	}
	if resp, body := send(t, ln, "POST", "/operator/records/live1/recording/resume", ""); resp.StatusCode != 200 || k.paused["live1"] {
		t.Errorf("resume: %d %s", resp.StatusCode, body)
	}
	if resp, body := send(t, ln, "POST", "/operator/records/gone/recording/pause", ""); resp.StatusCode != 404 || !strings.Contains(string(body), "no live recording") {
		t.Errorf("unknown: %d %s", resp.StatusCode, body)
	}
}

// TestErasures: one call by DELETE, a caller's calls by number (hashed
// before the keeper sees it) or hash; each audited, the count answered;
// the number is in no log line, answer or erasure. Mutations caught (each
// seen failing): the number passed to Erase unhashed; an unknown call's
// erasure answered 200 with 0.
func TestErasures(t *testing.T) {
	defer goleak.VerifyNone(t)
	k := newMemKeeper()
	for _, r := range testRecords(k) {
		k.recs[r.CallID] = r
	}
	ln, logs, stop := recordsServer(t, k)
	defer stop()
	type answer struct {
		Erased     int    `json:"erased"`
		Recordings int    `json:"recordings"`
		CallerHash string `json:"caller_hash"`
	}
	for _, tc := range []struct {
		name, method, path, body string
		code, erased             int
		text                     string
	}{
		{"one call", "DELETE", "/operator/records/c3", `{"reason":"asked by the caller"}`, 200, 1, ""},
		{"again", "DELETE", "/operator/records/c3", "", 404, 0, "no call record"},
		{"caller in a DELETE", "DELETE", "/operator/records/c1", `{"caller":"` + testCaller + `"}`, 400, 0, "POST /operator/erasures"},
		{"nothing named", "POST", "/operator/erasures", `{"reason":"x"}`, 400, 0, "needs"},
		{"unknown field", "POST", "/operator/erasures", `{"number":"1"}`, 400, 0, "not {"},
		{"both", "POST", "/operator/erasures", `{"caller":"1","caller_hash":"` + k.HashNumber("1") + `"}`, 400, 0, "not both"},
		{"by number", "POST", "/operator/erasures", `{"caller":"` + testCaller + `","reason":"GDPR request 7"}`, 200, 2, ""},
		{"by hash, none left", "POST", "/operator/erasures", `{"caller_hash":"` + k.HashNumber(testCaller) + `"}`, 200, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := send(t, ln, tc.method, tc.path, tc.body, "Content-Type", "application/json")
			if resp.StatusCode != tc.code {
				t.Fatalf("%d %s, want %d", resp.StatusCode, body, tc.code)
			}
			if strings.Contains(string(body), "7700900123") {
				t.Errorf("the number is in the answer: %s", body)
			}
			if tc.code == 200 {
				var a answer
				if err := json.Unmarshal(body, &a); err != nil || a.Erased != tc.erased {
					t.Errorf("%s, want erased %d", body, tc.erased)
				}
			} else if !strings.Contains(string(body), tc.text) {
				t.Errorf("%s, want %q", body, tc.text)
			}
		})
	}
	if len(k.recs) != 0 {
		t.Errorf("left: %v", k.recs)
	}
	for _, e := range k.erasures {
		if strings.Contains(e.CallerHash, "7700900123") || e.By != "operator" || e.At.IsZero() {
			t.Errorf("erasure %+v", e)
		}
	}
	resp, body := send(t, ln, "GET", "/operator/erasures", "")
	var audit struct {
		Erasures []records.AuditEntry `json:"erasures"`
	}
	if err := json.Unmarshal(body, &audit); resp.StatusCode != 200 || err != nil || len(audit.Erasures) != 4 {
		t.Fatalf("audit: %d %v %s", resp.StatusCode, err, body)
	}
	if e := audit.Erasures[0]; e.CallID != "c3" || e.Erased != 1 || e.Reason != "asked by the caller" {
		t.Errorf("first audit entry %+v", e)
	}
	if e := audit.Erasures[2]; e.CallerHash != k.HashNumber(testCaller) || e.Erased != 2 {
		t.Errorf("caller's audit entry %+v", e)
	}
	if l := logs.String(); strings.Contains(l, "7700900123") || strings.Contains(l, "GDPR request") || !strings.Contains(l, `"erased":2`) {
		t.Errorf("the log: %s", l)
	}
}

// TestRecordsOff: without a keeper every records route says the node
// keeps none (501), and still needs the token.
func TestRecordsOff(t *testing.T) {
	defer goleak.VerifyNone(t)
	ln, _, stop := recordsServer(t, nil)
	defer stop()
	for _, p := range []string{"GET /operator/records", "GET /operator/records/x", "GET /operator/records/x/recording",
		"POST /operator/records/x/recording/pause", "DELETE /operator/records/x", "POST /operator/erasures", "GET /operator/erasures"} {
		method, path, _ := strings.Cut(p, " ")
		resp, body := send(t, ln, method, path, "")
		if resp.StatusCode != http.StatusNotImplemented || !strings.Contains(string(body), "keeps no call records") {
			t.Errorf("%s: %d %s", p, resp.StatusCode, body)
		}
	}
}

// droppingKeeper is a node whose numbers policy is drop: it has no key,
// and HashNumber gives "" (records.Service without a key).
type droppingKeeper struct{ *memKeeper }

func (droppingKeeper) HashNumber(string) string { return "" }

// TestCallerFilterWithoutNumbers: on a node that keeps no numbers, a
// list or an erasure by caller number is refused, never run with an
// empty hash. Mutation caught: the empty hash passed on, which as a list
// filter selects every call (the caller's filter silently dropped) and
// as an erasure reaches the store as neither a call nor a caller.
func TestCallerFilterWithoutNumbers(t *testing.T) {
	defer goleak.VerifyNone(t)
	k := droppingKeeper{newMemKeeper(&records.Record{CallID: "a", Started: time.Now()})}
	ln, _, stop := recordsServer(t, k)
	defer stop()
	resp, body := send(t, ln, "GET", "/operator/records?caller=%2B441632960123", "")
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "keeps no numbers") {
		t.Errorf("list by caller: %d %s", resp.StatusCode, body)
	}
	resp, body = send(t, ln, "POST", "/operator/erasures", `{"caller":"+441632960123","reason":"r"}`)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "keeps no numbers") {
		t.Errorf("erase by caller: %d %s", resp.StatusCode, body)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.queries) != 0 || len(k.erasures) != 0 {
		t.Errorf("the keeper was asked %d queries, %d erasures", len(k.queries), len(k.erasures))
	}
}

// TestWebhookFailuresRoute: GET /operator/webhooks lists the failed
// deliveries a node's webhooks report, and is 501 without webhooks.
// Mutation caught: the route not mounted (404), or the failures not
// asked of the keeper (an empty list).
func TestWebhookFailuresRoute(t *testing.T) {
	defer goleak.VerifyNone(t)
	parts := RecordParts{Store: nil, Service: nil}
	ln, _, stop := recordsServer(t, parts)
	resp, body := send(t, ln, "GET", "/operator/webhooks", "")
	if resp.StatusCode != http.StatusNotImplemented || !strings.Contains(string(body), "no end-of-call webhooks") {
		t.Errorf("without webhooks: %d %s", resp.StatusCode, body)
	}
	stop()
	parts.Webhooks = func() any {
		return []map[string]any{{"call_id": "c1", "host": "hooks.example.com", "attempts": 12, "status": 503, "reason": "gave_up"}}
	}
	ln, _, stop = recordsServer(t, parts)
	defer stop()
	resp, body = send(t, ln, "GET", "/operator/webhooks", "")
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"host":"hooks.example.com"`) || !strings.Contains(string(body), `"reason":"gave_up"`) {
		t.Errorf("with a failure: %d %s", resp.StatusCode, body)
	}
}
