package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"github.com/brisvox/brisvox/cmd/internal/records"
)

var testSecret = []byte("s3cr3t-webhook-key-for-tests-0123456789")

// plantedText is in every test record's transcript: it may reach the
// receiver (the record is the body) but never a log line or a Failure.
const plantedText = "PLANTED-TRANSCRIPT-LINE"

func testRecord(id string) *records.Record {
	return &records.Record{
		Version: records.SchemaVersion, CallID: id, Node: "n1", Transport: "sip", Direction: "inbound",
		Agent: "demo", EndReason: "hangup",
		Started:    time.Unix(1_800_000_000, 0).UTC(),
		Ended:      time.Unix(1_800_000_060, 0).UTC(),
		Transcript: []records.Line{{Epoch: 1, Speaker: records.SpeakerCaller, Text: plantedText}},
	}
}

// leakCheck registers the goroutine check first, so it runs after every
// cleanup registered later (the receivers' servers).
func leakCheck(t *testing.T) {
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) })
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond) // polling a condition, not a timing
	}
}

// receiver is an httptest server on loopback that verifies every
// request's signature at its own clock (now + skew), answers the
// scripted statuses per idempotency key (then 200), and counts what it
// accepted.
type receiver struct {
	srv    *httptest.Server
	skew   atomic.Int64 // nanoseconds added to the receiver's clock
	mu     sync.Mutex
	script func(key string, n int) int // status of the nth request (1-based) of key
	seen   map[string]int              // requests by key
	ok     map[string]int              // 2xx answers by key
	bodies map[string][]byte
	last   *http.Request
	lastB  []byte
	errs   []error // verification refusals
}

func newReceiver(t *testing.T, script func(key string, n int) int) *receiver {
	rc := &receiver{script: script, seen: map[string]int{}, ok: map[string]int{}, bodies: map[string][]byte{}}
	rc.srv = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	now := time.Now().Add(time.Duration(rc.skew.Load()))
	err := Verify(testSecret, r.Header.Get(SignatureHeader), body, now, 5*time.Minute)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if err != nil {
		rc.errs = append(rc.errs, err)
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	key := r.Header.Get(IdempotencyHeader)
	rc.seen[key]++
	rc.last, rc.lastB = r.Clone(context.Background()), body
	status := http.StatusOK
	if rc.script != nil {
		status = rc.script(key, rc.seen[key])
	}
	if status/100 == 2 {
		rc.ok[key]++
		rc.bodies[key] = body
	}
	w.WriteHeader(status)
	fmt.Fprint(w, "ANSWER-BODY-NEVER-KEPT")
}

func (rc *receiver) count(m map[string]int) int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(m)
}

func newSender(t *testing.T, cfg Config, opts ...Option) *Sender {
	t.Helper()
	s, err := New(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func closeSender(t *testing.T, s *Sender) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// syncBuffer is a log sink safe for the sender goroutines.
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

// checkPrivate fails when the secret, a signature or a record's text is
// in text (the log, an error, the failures).
func checkPrivate(t *testing.T, where, text string) {
	t.Helper()
	for _, bad := range []string{string(testSecret), plantedText, "ANSWER-BODY", "v1="} {
		if strings.Contains(text, bad) {
			t.Errorf("%s holds %q: %s", where, bad, text)
		}
	}
}

// TestDeliveryRetriedUntilTaken: every record reaches the receiver,
// signed (the receiver verifies with Verify), after its first 3 attempts
// failed with 503; each is accepted once, with its idempotency key, and
// the log holds no secret, signature or record text.
func TestDeliveryRetriedUntilTaken(t *testing.T) {
	leakCheck(t)
	rc := newReceiver(t, func(_ string, n int) int {
		if n <= 3 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	var logs syncBuffer
	s := newSender(t, Config{URLs: []string{rc.srv.URL + "/hook?token=abc"}, Secret: testSecret, Dir: t.TempDir(),
		Log: zerolog.New(&logs).Level(zerolog.DebugLevel)}, WithBackoff(time.Millisecond, 4*time.Millisecond), WithSeed(1))
	s.Start()
	const calls = 5
	for i := range calls {
		if err := s.Deliver(testRecord(fmt.Sprintf("call-%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "5 deliveries", func() bool { return s.Stats()["delivered"] == calls })
	closeSender(t, s)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for i := range calls {
		key := fmt.Sprintf("call-%d/0", i)
		if rc.seen[key] != 4 || rc.ok[key] != 1 {
			t.Errorf("%s: %d requests, %d accepted; want 4 and 1", key, rc.seen[key], rc.ok[key])
		}
		var got records.Record
		if err := json.Unmarshal(rc.bodies[key], &got); err != nil || got.CallID != fmt.Sprintf("call-%d", i) {
			t.Errorf("%s: body %s (%v)", key, rc.bodies[key], err)
		}
	}
	if len(rc.errs) > 0 {
		t.Errorf("signatures refused: %v", rc.errs)
	}
	st := s.Stats()
	if st["attempts"] != 4*calls || st["retries"] != 3*calls || st["pending"] != 0 || len(s.Failures()) != 0 {
		t.Errorf("stats %v, failures %v", st, s.Failures())
	}
	checkPrivate(t, "the log", logs.String())
	if strings.Contains(logs.String(), "token=abc") {
		t.Errorf("the log holds the URL's query: %s", logs.String())
	}
}

// TestPendingSentAfterRestart: deliveries not yet taken when the Sender
// closes are in its queue directory; a Sender opened on it sends them
// (at least once: none lost), and once taken they are not sent again by
// a third Sender. Mutation seen caught: no ack when a delivery is taken
// (the third Sender found all 6 again).
func TestPendingSentAfterRestart(t *testing.T) {
	leakCheck(t)
	var open atomic.Bool
	rc := newReceiver(t, func(string, int) int {
		if open.Load() {
			return http.StatusNoContent
		}
		return http.StatusBadGateway
	})
	dir := t.TempDir()
	cfg := Config{URLs: []string{rc.srv.URL, rc.srv.URL + "/second"}, Secret: testSecret, Dir: dir}
	s := newSender(t, cfg, WithBackoff(time.Millisecond, 2*time.Millisecond))
	s.Start()
	for i := range 3 {
		if err := s.Deliver(testRecord(fmt.Sprintf("call-%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "every delivery tried", func() bool { return rc.count(rc.seen) == 6 })
	closeSender(t, s)
	if err := s.Deliver(testRecord("late")); !errors.Is(err, ErrClosed) {
		t.Errorf("Deliver after Close: %v, want ErrClosed", err)
	}

	s = newSender(t, cfg, WithBackoff(time.Millisecond, 2*time.Millisecond))
	if got := s.Stats()["replayed"]; got != 6 {
		t.Errorf("replayed %d, want 6 (3 records to 2 URLs)", got)
	}
	open.Store(true)
	s.Start()
	waitFor(t, "the pending deliveries", func() bool { return s.Stats()["delivered"] == 6 })
	closeSender(t, s)
	// At least once: every key accepted. A POST in flight when the first
	// Sender closed may still have reached the handler after the receiver
	// opened (it answered 2xx to a client gone): that one, at most one
	// per URL, is sent again, and the idempotency key tells the repeat.
	rc.mu.Lock()
	total := 0
	for i := range 3 {
		for u := range 2 {
			key := fmt.Sprintf("call-%d/%d", i, u)
			if rc.ok[key] < 1 {
				t.Errorf("%s never accepted", key)
			}
			total += rc.ok[key]
		}
	}
	rc.mu.Unlock()
	if total > 6+2 {
		t.Errorf("%d acceptances of 6 deliveries: more repeats than POSTs in flight at the close", total)
	}

	s = newSender(t, cfg)
	if st := s.Stats(); st["replayed"] != 0 || st["pending"] != 0 {
		t.Errorf("after all were taken, a new Sender found %v", st)
	}
	closeSender(t, s)
}

// TestAnswers: which answers are retried, which refused for good, and
// what a refusal keeps (the host and the status, never the body).
// Mutation seen caught: every 4xx retried (400 took 2 attempts).
func TestAnswers(t *testing.T) {
	leakCheck(t)
	cases := []struct {
		name     string
		statuses []int // then 200
		attempts int
		reason   string // "" delivered
	}{
		{"2xx at once", nil, 1, ""},
		{"400 refused", []int{400}, 1, "rejected"},
		{"404 refused", []int{404}, 1, "rejected"},
		{"410 refused", []int{410}, 1, "rejected"},
		{"301 refused", []int{301}, 1, "rejected"},
		{"408 retried", []int{408}, 2, ""},
		{"429 retried", []int{429, 429}, 3, ""},
		{"500s retried", []int{500, 502, 503, 504, 500}, 6, ""},
		{"gave up", []int{503, 503, 503, 503, 503, 503, 503}, 6, "gave_up"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rc := newReceiver(t, func(_ string, n int) int {
				if n <= len(c.statuses) {
					return c.statuses[n-1]
				}
				return http.StatusOK
			})
			var logs syncBuffer
			s := newSender(t, Config{URLs: []string{rc.srv.URL}, Secret: testSecret, Dir: t.TempDir(), MaxAttempts: 6,
				Log: zerolog.New(&logs)}, WithBackoff(time.Millisecond, time.Millisecond))
			s.Start()
			if err := s.Deliver(testRecord("c1")); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the delivery settled", func() bool { return s.Stats()["pending"] == 0 })
			closeSender(t, s)
			st := s.Stats()
			if int(st["attempts"]) != c.attempts {
				t.Errorf("attempts %d, want %d", st["attempts"], c.attempts)
			}
			f := s.Failures()
			if c.reason == "" {
				if st["delivered"] != 1 || len(f) != 0 {
					t.Errorf("stats %v, failures %v: want delivered", st, f)
				}
				return
			}
			host := strings.TrimPrefix(rc.srv.URL, "http://")
			want := Failure{CallID: "c1", Host: host, Attempts: c.attempts, Status: c.statuses[c.attempts-1], Reason: c.reason}
			if len(f) != 1 {
				t.Fatalf("failures %v, want one", f)
			}
			f[0].At = time.Time{}
			if f[0] != want {
				t.Errorf("failure %+v, want %+v", f[0], want)
			}
			js, _ := json.Marshal(f)
			checkPrivate(t, "the failures", string(js))
			checkPrivate(t, "the log", logs.String())
		})
	}
}

// TestConnectionRefused: no answer at all (nothing listens) is retried
// and given up as a connection failure with status 0.
func TestConnectionRefused(t *testing.T) {
	leakCheck(t)
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.URL
	srv.Close() // the port is now refused
	s := newSender(t, Config{URLs: []string{addr}, Secret: testSecret, Dir: t.TempDir(), MaxAttempts: 2},
		WithBackoff(time.Millisecond, time.Millisecond))
	s.Start()
	if err := s.Deliver(testRecord("c1")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "give up", func() bool { return s.Stats()["gave_up"] == 1 })
	closeSender(t, s)
	f := s.Failures()
	if len(f) != 1 || f[0].Status != 0 || f[0].Error != "connection" || f[0].Attempts != 2 {
		t.Errorf("failures %+v", f)
	}
}

// TestReplayRefused: a delivery captured and sent again later than the
// tolerance is refused (ErrExpired) though its signature is right; the
// same request with its body changed is refused as a bad signature.
// Mutation seen caught: Verify without the tolerance check (the replay
// was accepted a second time).
func TestReplayRefused(t *testing.T) {
	leakCheck(t)
	rc := newReceiver(t, nil)
	s := newSender(t, Config{URLs: []string{rc.srv.URL}, Secret: testSecret, Dir: t.TempDir()})
	s.Start()
	if err := s.Deliver(testRecord("c1")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the delivery", func() bool { return s.Stats()["delivered"] == 1 })
	closeSender(t, s)

	rc.mu.Lock()
	header, body := rc.last.Header.Clone(), rc.lastB
	rc.mu.Unlock()
	resend := func(b []byte) int {
		req, _ := http.NewRequest(http.MethodPost, rc.srv.URL, bytes.NewReader(b))
		req.Header = header.Clone()
		resp, err := rc.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	rc.skew.Store(int64(6 * time.Minute)) // the replay comes 6 minutes later
	if code := resend(body); code != http.StatusUnauthorized {
		t.Errorf("replay answered %d, want 401", code)
	}
	rc.skew.Store(0)
	if code := resend(bytes.Replace(body, []byte(`"hangup"`), []byte(`"transfer"`), 1)); code != http.StatusUnauthorized {
		t.Errorf("changed body answered %d, want 401", code)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.errs) != 2 || !errors.Is(rc.errs[0], ErrExpired) || !errors.Is(rc.errs[1], ErrBadSignature) {
		t.Errorf("refusals %v, want ErrExpired then ErrBadSignature", rc.errs)
	}
	if rc.ok["c1/0"] != 1 {
		t.Errorf("accepted %d times, want 1", rc.ok["c1/0"])
	}
	rc.srv.Client().CloseIdleConnections()
}

// TestVerify: the signature's refusals, each its own error. Mutation seen
// caught: the HMAC without the timestamp (a changed t still verified).
func TestVerify(t *testing.T) {
	body := []byte(`{"call_id":"c1"}`)
	at := time.Unix(1_800_000_000, 0)
	good := Sign(testSecret, body, at)
	sig := good[strings.Index(good, "v1=")+3:]
	cases := []struct {
		name   string
		secret []byte
		header string
		body   []byte
		now    time.Time
		want   error
	}{
		{"good", testSecret, good, body, at, nil},
		{"good 4 minutes later", testSecret, good, body, at.Add(4 * time.Minute), nil},
		{"spaces and an unknown key", testSecret, "t=1800000000, v1=" + sig + ", v0=zz", body, at, nil},
		{"rotation: a second v1", testSecret, "t=1800000000,v1=" + strings.Repeat("0", 64) + ",v1=" + sig, body, at, nil},
		{"replay 6 minutes later", testSecret, good, body, at.Add(6 * time.Minute), ErrExpired},
		{"from the future", testSecret, good, body, at.Add(-6 * time.Minute), ErrExpired},
		{"other secret", []byte("another-secret-of-16+"), good, body, at, ErrBadSignature},
		{"body changed", testSecret, good, []byte(`{"call_id":"c2"}`), at, ErrBadSignature},
		{"timestamp changed", testSecret, "t=1800000001,v1=" + sig, body, at, ErrBadSignature},
		{"old and forged", testSecret, "t=1700000000,v1=" + strings.Repeat("ab", 32), body, at, ErrBadSignature},
		{"empty", testSecret, "", body, at, ErrMalformedSignature},
		{"no t", testSecret, "v1=" + sig, body, at, ErrMalformedSignature},
		{"no v1", testSecret, "t=1800000000", body, at, ErrMalformedSignature},
		{"t twice", testSecret, "t=1,t=1800000000,v1=" + sig, body, at, ErrMalformedSignature},
		{"t not a number", testSecret, "t=soon,v1=" + sig, body, at, ErrMalformedSignature},
		{"v1 short", testSecret, "t=1800000000,v1=abcd", body, at, ErrMalformedSignature},
		{"v1 not hex", testSecret, "t=1800000000,v1=" + strings.Repeat("zz", 32), body, at, ErrMalformedSignature},
		{"no equals", testSecret, "t=1800000000,garbage", body, at, ErrMalformedSignature},
	}
	// The known answer, computed outside Go (openssl dgst -sha256 -hmac,
	// as docs/RECORDS.md's receiver does it): the format is the contract.
	const known = "t=1800000000,v1=cb886ab8d89241a7083f97ced1b1bbd592b3dd3282af944b37172e6e87bd4a45"
	if good != known {
		t.Errorf("Sign = %q, want %q", good, known)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Verify(c.secret, c.header, c.body, c.now, 0)
			if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
				t.Fatalf("Verify: %v, want %v", err, c.want)
			}
			if err != nil {
				checkPrivate(t, "the error", err.Error())
			}
		})
	}
}

func TestConfigErrors(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no URLs", Config{Secret: testSecret, Dir: dir}, "no URLs"},
		{"bad scheme", Config{URLs: []string{"ftp://x.example/h"}, Secret: testSecret, Dir: dir}, `URL 1 (host "x.example"): the scheme`},
		{"no host", Config{URLs: []string{"https:///h"}, Secret: testSecret, Dir: dir}, "URL 1 has no host"},
		{"user in URL", Config{URLs: []string{"https://u:pw@x.example/h"}, Secret: testSecret, Dir: dir}, "holds a user or password"},
		{"repeated", Config{URLs: []string{"https://x.example/h?token=1", "https://x.example/h?token=1"}, Secret: testSecret, Dir: dir}, "URL 2 repeats URL 1"},
		{"short secret", Config{URLs: []string{"https://x.example/h"}, Secret: []byte("short-secret"), Dir: dir}, "the secret is 12 bytes"},
		{"no dir", Config{URLs: []string{"https://x.example/h"}, Secret: testSecret}, "Dir is empty"},
		{"attempts", Config{URLs: []string{"https://x.example/h"}, Secret: testSecret, Dir: dir, MaxAttempts: -1}, "MaxAttempts is -1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := New(c.cfg)
			if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("New: %v, want ErrInvalidConfig saying %q", err, c.want)
			}
			for _, bad := range []string{string(c.cfg.Secret), "token=1", "pw"} {
				if strings.Contains(err.Error(), bad) {
					t.Errorf("the error holds %q: %v", bad, err)
				}
			}
		})
	}
}

// TestURLsChangedAcrossRestart: a queued delivery for a URL since removed
// is dropped (counted); one for a URL that moved in the list goes to it
// with its original idempotency key.
func TestURLsChangedAcrossRestart(t *testing.T) {
	leakCheck(t)
	rc := newReceiver(t, nil)
	dir := t.TempDir()
	gone, _ := url.JoinPath(rc.srv.URL, "gone")
	kept, _ := url.JoinPath(rc.srv.URL, "kept")
	s := newSender(t, Config{URLs: []string{gone, kept}, Secret: testSecret, Dir: dir})
	if err := s.Deliver(testRecord("c1")); err != nil { // never started: stays queued
		t.Fatal(err)
	}
	closeSender(t, s)
	s = newSender(t, Config{URLs: []string{kept}, Secret: testSecret, Dir: dir})
	if st := s.Stats(); st["replayed"] != 1 || st["dropped_unknown_url"] != 1 {
		t.Errorf("stats %v, want 1 replayed and 1 dropped", st)
	}
	s.Start()
	waitFor(t, "the delivery", func() bool { return s.Stats()["delivered"] == 1 })
	closeSender(t, s)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.ok["c1/1"] != 1 || len(rc.ok) != 1 {
		t.Errorf("accepted %v, want c1/1 once", rc.ok)
	}
}
