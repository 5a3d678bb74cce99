package opclient

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestRecordsErrors: each answer of the records routes maps to its
// error with the server's words, never the token. Mutations caught (each
// seen failing): a 404 with "recording" mapped as an unknown record; 400
// left to answerError (ErrProtocol, not ErrInvalidQuery).
func TestRecordsErrors(t *testing.T) {
	defer goleak.VerifyNone(t)
	jsonCT := "application/json"
	getRec := func(c *Client) error { _, err := c.Record(context.Background(), "c9"); return err }
	list := func(c *Client) error { _, err := c.Records(context.Background(), RecordFilter{Agent: "x"}); return err }
	play := func(c *Client) error {
		b, _, _, err := c.Recording(context.Background(), "c9")
		if b != nil {
			b.Close()
		}
		return err
	}
	erase := func(c *Client) error { _, err := c.EraseCaller(context.Background(), "+15550100", "", "r"); return err }
	pause := func(c *Client) error { return c.PauseRecording(context.Background(), "c9") }
	for _, tc := range []struct {
		name string
		h    http.HandlerFunc
		do   func(*Client) error
		want error
		has  string
	}{
		{"401", answer(401, jsonCT, `{"error":"a valid operator token is required"}`), list, ErrUnauthorized, "token"},
		{"404 record", answer(404, jsonCT, `{"error":"no call record \"c9\""}`), getRec, ErrUnknownRecord, "c9"},
		{"404 recording", answer(404, jsonCT, `{"error":"call \"c9\": serve: no recording: it was not recorded","recording":"none"}`), play, ErrNoRecording, "not recorded"},
		{"410 recording", answer(410, jsonCT, `{"error":"removed","recording":"removed"}`), play, ErrNoRecording, "removed"},
		{"404 pause", answer(404, jsonCT, `{"error":"no live recording","recording":"none"}`), pause, ErrNoRecording, "no live recording"},
		{"400 filter", answer(400, jsonCT, `{"error":"limit=\"0\": want a whole number from 1 to 10000"}`), list, ErrInvalidQuery, "from 1 to 10000"},
		{"400 erasure", answer(400, jsonCT, `{"error":"give caller or caller_hash, not both"}`), erase, ErrInvalidQuery, "not both"},
		{"501", answer(501, jsonCT, `{"error":"this node keeps no call records"}`), list, ErrRecordsOff, "keeps no"},
		{"503", answer(503, jsonCT, `{"error":"the records database is unavailable now"}`), getRec, ErrNoAnswer, "unavailable"},
		{"404 without the API", answer(404, "text/plain", "404 page not found\n"), getRec, ErrProtocol, "--operator-token-env"},
		{"echoed token", answer(400, jsonCT, `{"error":"bad `+testToken+`"}`), list, ErrInvalidQuery, "[token]"},
		{"missing key", answer(200, jsonCT, `{"node":"n1"}`), list, ErrProtocol, `"records"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, stop := serveAPI(t, tc.h)
			defer stop()
			err := tc.do(c)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.has) {
				t.Errorf("err %q lacks %q", err, tc.has)
			}
			if strings.Contains(err.Error(), testToken) {
				t.Errorf("the token is in the error: %v", err)
			}
		})
	}
	t.Run("recording timeout", func(t *testing.T) {
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}))
		defer srv.Close()
		defer close(release)
		c, err := New(Config{Addr: srv.URL, Token: testToken, Timeout: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := play(c); !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "within 50ms") {
			t.Errorf("err %v, want ErrUnreachable (no answer within 50ms)", err)
		}
	})
}

// TestRecordsRequests: each method sends its method, path (the id
// escaped), query and body, and decodes the answer; the recording
// streams past the client's timeout. Mutations caught (each seen
// failing): the filter's time not in UTC; the client's timeout bounding
// the whole download (the recording cut after 60 ms).
func TestRecordsRequests(t *testing.T) {
	defer goleak.VerifyNone(t)
	var got []string
	audio := strings.Repeat("RIFF", 1000)
	release := make(chan struct{})
	c, stop := serveAPI(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+testToken {
			w.WriteHeader(401)
			return
		}
		b, _ := io.ReadAll(r.Body)
		got = append(got, r.Method+" "+r.URL.EscapedPath()+"?"+r.URL.RawQuery+" "+string(b))
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/operator/records":
			_, _ = io.WriteString(w, `{"node":"n1","records":[{"call_id":"a/b","agent":"dentist","started":"2026-12-03T12:00:00Z","ended":"2026-12-03T12:01:00Z","end_reason":"hangup","turns":3,"tools":1}],"next":"CUR"}`)
		case strings.HasSuffix(r.URL.Path, "/recording"):
			w.Header().Set("Content-Type", "audio/wav")
			// The first half, then the rest once the client's timeout has
			// passed: the download goes on past it.
			_, _ = io.WriteString(w, audio[:2000])
			w.(http.Flusher).Flush()
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
			_, _ = io.WriteString(w, audio[2000:])
		case strings.HasSuffix(r.URL.Path, "/pause"), strings.HasSuffix(r.URL.Path, "/resume"):
			_, _ = io.WriteString(w, `{"call":"a/b","recording":"paused"}`)
		case r.URL.Path == "/operator/erasures" && r.Method == "GET":
			_, _ = io.WriteString(w, `{"erasures":[{"at":"2026-12-03T13:00:00Z","by":"operator","call_id":"a/b","erased":1}]}`)
		case r.URL.Path == "/operator/erasures":
			_, _ = io.WriteString(w, `{"erased":2,"recordings":1,"caller_hash":"abcd"}`)
		case r.Method == "DELETE":
			_, _ = io.WriteString(w, `{"erased":1,"recordings":0,"call_id":"a/b"}`)
		default:
			_, _ = io.WriteString(w, `{"record":{"version":1,"call_id":"a/b","agent":"dentist","turns":[{"epoch":1,"marks":{"vad_stop":"2026-12-03T12:00:01Z","first_audio_out":"2026-12-03T12:00:01.5Z"}}],"transcript":[{"epoch":1,"speaker":"bot","text":"Hello","at":"2026-12-03T12:00:01Z","cut":true}],"future":7}}`)
		}
	})
	defer stop()
	ctx := context.Background()
	from := time.Date(2026, 12, 3, 13, 0, 0, 0, time.FixedZone("CET", 3600))
	l, err := c.Records(ctx, RecordFilter{From: from, Agent: "dentist", Caller: "+44 7700", Limit: 5, Before: "X"})
	if err != nil || len(l.Records) != 1 || l.Records[0].Turns != 3 || l.Next != "CUR" {
		t.Fatalf("Records: %+v %v", l, err)
	}
	d, err := c.Record(ctx, "a/b")
	if err != nil || d.Record.Agent != "dentist" || !d.Record.Transcript[0].Cut || !strings.Contains(string(d.Raw), `"future"`) {
		t.Fatalf("Record: %+v %v", d, err)
	}
	if m := d.Record.Turns[0].Marks; m[MarkFirstAudioOut].Sub(m[MarkVADStop]) != 500*time.Millisecond {
		t.Errorf("marks %v", m)
	}
	slow, err := New(Config{Addr: c.Addr(), Token: testToken, Timeout: 60 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	body, ctype, _, err := slow.Recording(ctx, "a/b")
	if err != nil {
		t.Fatal(err)
	}
	first := make([]byte, 2000)
	if _, err := io.ReadFull(body, first); err != nil {
		t.Fatal(err)
	}
	// What is under test is time passing: wait out the client's timeout
	// (three times over), then let the server send the rest.
	<-time.After(3 * 60 * time.Millisecond)
	close(release)
	rest, err := io.ReadAll(body)
	body.Close()
	b := append(first, rest...)
	if err != nil || string(b) != audio || ctype != "audio/wav" {
		t.Errorf("recording: %d bytes, %q, %v", len(b), ctype, err)
	}
	if err := c.PauseRecording(ctx, "a/b"); err != nil {
		t.Fatal(err)
	}
	if err := c.ResumeRecording(ctx, "a/b"); err != nil {
		t.Fatal(err)
	}
	if e, err := c.EraseRecord(ctx, "a/b", "asked"); err != nil || e.Erased != 1 {
		t.Fatalf("EraseRecord: %+v %v", e, err)
	}
	if e, err := c.EraseCaller(ctx, "+447700900123", "", "gdpr"); err != nil || e.Erased != 2 || e.CallerHash != "abcd" {
		t.Fatalf("EraseCaller: %+v %v", e, err)
	}
	if a, err := c.Erasures(ctx); err != nil || len(a) != 1 || a[0].CallID != "a/b" {
		t.Fatalf("Erasures: %+v %v", a, err)
	}
	want := []string{
		"GET /operator/records?agent=dentist&before=X&caller=%2B44+7700&from=2026-12-03T12%3A00%3A00Z&limit=5 ",
		"GET /operator/records/a%2Fb? ",
		"GET /operator/records/a%2Fb/recording? ",
		"POST /operator/records/a%2Fb/recording/pause? ",
		"POST /operator/records/a%2Fb/recording/resume? ",
		`DELETE /operator/records/a%2Fb? {"reason":"asked"}`,
		`POST /operator/erasures? {"caller":"+447700900123","reason":"gdpr"}`,
		"GET /operator/erasures? ",
	}
	if !slices.Equal(got, want) {
		t.Errorf("requests:\n%q\nwant\n%q", got, want)
	}
}
