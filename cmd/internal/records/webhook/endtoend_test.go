package webhook

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/brisvox/brisvox/cmd/internal/records"
	"github.com/brisvox/brisvox/cmd/internal/records/journal"
	"github.com/brisvox/brisvox/cmd/internal/records/redact"
	"github.com/brisvox/brisvox/cmd/internal/records/sqlstore"
	"github.com/brisvox/brisvox/messages"
)

// TestNoPlantedPIIReachesStoreWebhookOrLog runs a call through the
// records service with the real redactor, journals, SQLite store and
// this Sender to a loopback receiver. The caller says a phone number, an
// email, a card, an IBAN and a date of birth, the bot repeats the number
// and a tool is passed the card: no form of any of them is in the body
// the receiver got, in the database's files or in the log; the record
// the receiver got counts the redactions. Mutation seen caught: the
// service given no Redactor (the receiver's body held the number).
func TestNoPlantedPIIReachesStoreWebhookOrLog(t *testing.T) {
	leakCheck(t)
	rc := newReceiver(t, nil)
	dir := t.TempDir()
	var logs syncBuffer
	log := zerolog.New(&logs).Level(zerolog.DebugLevel)

	snd := newSender(t, Config{URLs: []string{rc.srv.URL}, Secret: testSecret, Dir: filepath.Join(dir, "webhooks"), Log: log})
	snd.Start()
	red, err := redact.New(redact.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	store, err := sqlstore.Open(ctx, "sqlite:"+filepath.Join(dir, "records.db"))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := journal.Open(journal.Config{Dir: filepath.Join(dir, "records"), Log: log})
	if err != nil {
		t.Fatal(err)
	}
	live, err := journal.Open(journal.Config{Dir: filepath.Join(dir, "live"), Log: log})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := records.New(records.Config{Node: "n1", NumberKey: []byte("records-key-for-tests-0123456789"),
		ToolData: records.Keep, Redactor: red, Log: log}, store, recs, live, snd)
	if err != nil {
		t.Fatal(err)
	}
	svc.Start()

	const (
		phone = "07700 900123"
		email = "jo.bloggs@example.org"
		card  = "4111 1111 1111 1111"
		iban  = "GB82 WEST 1234 5698 7654 32"
		dob   = "12/05/1980"
	)
	now := time.Now()
	c := svc.Begin(records.CallStart{CallID: "c1", Transport: "sip", Direction: "inbound", Agent: "demo", Caller: phone, Started: now})
	c.Event(&messages.CallEvent{Kind: messages.EventUserTurn, Epoch: 1, At: now,
		Text: "my number is " + phone + ", email " + email + ", card " + card + ", IBAN " + iban + ", date of birth " + dob})
	for _, w := range strings.Fields("I will call you on " + phone + " tomorrow") {
		c.Event(&messages.CallEvent{Kind: messages.EventBotWord, Epoch: 1, Text: w, At: now})
	}
	c.Event(&messages.CallEvent{Kind: messages.EventTool, Epoch: 1, Text: "pay", Call: "t1", At: now,
		Audit: &messages.ToolAudit{Outcome: "ok", Started: now, Args: []byte(`{"card":"` + card + `","number":4111111111111111}`), Result: "charged " + card}})
	c.End(messages.CallEnded{Reason: "hangup"})

	waitFor(t, "the webhook delivery", func() bool { return snd.Stats()["delivered"] == 1 })
	if err := svc.Close(ctx); err != nil {
		t.Fatal(err)
	}
	closeSender(t, snd)
	recs.Close()
	live.Close()
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}

	rc.mu.Lock()
	body := string(rc.bodies["c1/0"])
	rc.mu.Unlock()
	var db strings.Builder
	entries, _ := filepath.Glob(filepath.Join(dir, "records.db*"))
	for _, p := range entries {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		db.Write(b)
	}
	forms := []string{phone, "07700900123", "900123", email, "jo.bloggs", card, "4111111111111111", "1111 1111",
		iban, "GB82WEST", "5698 7654", dob}
	for where, text := range map[string]string{"the webhook body": body, "the database": db.String(), "the log": logs.String()} {
		for _, f := range forms {
			if strings.Contains(text, f) {
				t.Errorf("%s holds %q", where, f)
			}
		}
	}
	var got records.Record
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("the body %q: %v", body, err)
	}
	for _, kind := range []string{"phone", "email", "card", "iban", "dob"} {
		if got.Redactions[kind] == 0 {
			t.Errorf("the record counts no %s redaction: %v (the test checks too little)", kind, got.Redactions)
		}
	}
	if !strings.Contains(body, "[card]") || !strings.Contains(db.String(), "[phone]") {
		t.Errorf("the body or the database holds no replacement: the test checks too little")
	}
}
