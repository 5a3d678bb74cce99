package signal

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/rs/zerolog"
)

// lockedBuffer is a log sink safe for the dialog loops' goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// answerFails refuses the ACK's answer with an error quoting it, as a
// careless SDP parser would.
type answerFails struct{ fakeMedia }

func (m *answerFails) Answer(a []byte) error { return errors.New("bad sdp: " + string(a)) }

// TestLogsHoldNoPeerText runs calls that end every way that logs (BYE,
// an Application error quoting a number, a panic, a refused answer)
// with the log at debug level, and checks that nothing the peer sent is
// in it: no URI, user, Call-ID, address or SDP. Mutation caught: logging
// the cause's whole chain (the quoted number and SDP appear).
func TestLogsHoldNoPeerText(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sink lockedBuffer
		n := 0
		app := funcApp(func(ctx context.Context, inv *Invite) (Media, []byte, error) {
			n++
			switch n {
			case 1:
				return &fakeMedia{}, []byte(testSDP), nil
			case 2:
				return nil, nil, errors.New("no route to sip:+4915551234@carrier")
			case 3:
				panic("sip:+4915551234")
			default:
				return &answerFails{}, []byte(testSDP), nil
			}
		})
		s, err := New(Config{Listen: []Listen{{Network: "udp", Addr: "127.0.0.1:0"}}, SessionExpires: -1,
			Log: zerolog.New(&sink).Level(zerolog.DebugLevel)}, app, WithSeed(1))
		if err != nil {
			t.Fatal(err)
		}
		s.env.wire = &fakeWire{}
		for i, body := range []string{testSDP, testSDP, testSDP, testSDP, ""} {
			lines := inviteLines()
			if i == 0 {
				lines = inviteLines("Require: x-private-4915551234")
			}
			lines[4] = "Call-ID: secret-call-" + string(rune('a'+i))
			tx := &fakeTx{}
			s.serveRequest(msg(t, body, lines...), tx, tx)
		}
		// The answered calls: the ACK's answer (refused by the last).
		for _, d := range s.Dialogs() {
			lines := inDialogLines(d, "ACK", 1)
			lines[4] = "Call-ID: " + d.callID
			ack := msg(t, "v=0 secret-sdp\r\n", lines...)
			tx := &fakeTx{}
			s.serveRequest(ack, tx, tx)
		}
		synctest.Wait()
		s.Close()
		log := sink.String()
		if !strings.Contains(log, "dialog ended") || !strings.Contains(log, "call not answered") {
			t.Fatalf("the flows did not log:\n%s", log)
		}
		for _, secret := range []string{"4915551234", "caller", "secret-call", "127.0.0.1", "secret-sdp", "v=0", "sip:"} {
			if strings.Contains(log, secret) {
				t.Errorf("the log holds %q:\n%s", secret, log)
			}
		}
	})
}
