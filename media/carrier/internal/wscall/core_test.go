package wscall

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/brisvox/brisvox/media/carrier/internal/carriertest"
	"github.com/brisvox/brisvox/media/conn"
	"github.com/coder/websocket"
	"github.com/rs/zerolog"
)

// TestHangupReasonFitsACloseFrame: a long reason is cut to what a close
// frame holds, on a rune boundary, and the first hang-up wins. Mutation
// caught (seen failing): cutting at the byte bound (an invalid UTF-8
// reason, which the peer may reject).
func TestHangupReasonFitsACloseFrame(t *testing.T) {
	c := NewCore(carriertest.IdleConn(t), Config{ID: "x", Rate: 8000, Limits: Limits{MaxMessageBytes: 1024, InQueue: 2, OutQueue: 2,
		MaxPendingMarks: 1, MaxBadMessages: 1}}, NewCounters(), zerolog.Nop())
	long := strings.Repeat("é", 100) // 200 bytes
	c.Hangup(websocket.StatusNormalClosure, long)
	c.Hangup(websocket.StatusGoingAway, "second")
	if len(c.hangReason) > maxCloseReason || !utf8.ValidString(c.hangReason) || !strings.HasPrefix(long, c.hangReason) {
		t.Fatalf("reason of %d bytes, valid %v", len(c.hangReason), utf8.ValidString(c.hangReason))
	}
	if c.hangCode != websocket.StatusNormalClosure {
		t.Fatalf("code %d: the second hang-up won", c.hangCode)
	}
}

// textCheckInput is a Twilio media message's size of JSON text.
var textCheckInput = []byte(`{"event":"media","sequenceNumber":"12","media":{"track":"inbound","chunk":"11","timestamp":"200","payload":"` +
	strings.Repeat("/////w==", 27) + `"},"streamSid":"MZ00000000000000000000000000000000"}`)

// TestCheckText: valid text and any binary pass, invalid UTF-8 text ends
// with 1007 and a protocol error, and the check allocates nothing.
// Mutation caught (seen failing in the transports' TestInvalidUTF8): no
// check at all.
func TestCheckText(t *testing.T) {
	if checkText(websocket.MessageText, textCheckInput) != nil || checkText(websocket.MessageBinary, []byte{0xff}) != nil {
		t.Fatal("a good message refused")
	}
	end := checkText(websocket.MessageText, []byte("{\"a\":\"\xed\xa0\x80\"}")) // a surrogate
	if end == nil || end.Code != websocket.StatusInvalidFramePayloadData || !errors.Is(end.Cause, conn.ErrProtocol) {
		t.Fatalf("end %+v", end)
	}
	if raceEnabled {
		return
	}
	if a := testing.AllocsPerRun(100, func() { _ = checkText(websocket.MessageText, textCheckInput) }); a != 0 {
		t.Fatalf("%v allocs per check", a)
	}
}

// BenchmarkCheckText is the UTF-8 check of one media message.
func BenchmarkCheckText(b *testing.B) {
	b.SetBytes(int64(len(textCheckInput)))
	b.ReportAllocs()
	for b.Loop() {
		_ = checkText(websocket.MessageText, textCheckInput)
	}
}

// TestReadMessageGrowsItsBuffer: the read buffer starts small and grows
// for a message that needs it; messages up to MaxMessageBytes come whole,
// one byte more is refused, and a small message after a big one is read
// as itself. Mutations caught (seen failing): no growth (the 3000-byte
// message refused as oversized), growth past the bound (the 4097-byte
// message accepted), the grown read dropping what was read before it
// (the 3000-byte message short).
func TestReadMessageGrowsItsBuffer(t *testing.T) {
	sizes := []int{100, 3000, 4096, 4097, 10}
	done := make(chan struct{})
	srv := carriertest.NewPipeServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(done)
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		for i, n := range sizes {
			b := make([]byte, n)
			for j := range b {
				b[j] = byte(i + j)
			}
			if err := ws.Write(context.Background(), websocket.MessageBinary, b); err != nil {
				return
			}
		}
		_, _, _ = ws.Read(context.Background()) // until the client closes
	}))
	defer srv.Close()
	ws, _, err := srv.Dial(context.Background(), "/")
	if err != nil {
		t.Fatal(err)
	}
	c := NewCore(ws, Config{ID: "x", Rate: 8000, Limits: Limits{MaxMessageBytes: 4096, InQueue: 2, OutQueue: 2,
		MaxPendingMarks: 1, MaxBadMessages: 1}}, NewCounters(), zerolog.Nop())
	if len(c.buf) >= 4096 {
		t.Errorf("the read buffer starts at %d bytes", len(c.buf))
	}
	for i, n := range sizes {
		_, b, err := c.ReadMessage()
		if n > 4096 {
			if !errors.Is(err, ErrOversized) {
				t.Errorf("message %d of %d bytes: %v, want ErrOversized", i, n, err)
			}
			continue
		}
		if err != nil || len(b) != n {
			t.Fatalf("message %d of %d bytes: %d bytes, %v", i, n, len(b), err)
		}
		for j := range b {
			if b[j] != byte(i+j) {
				t.Fatalf("message %d: byte %d is %d, want %d", i, j, b[j], byte(i+j))
			}
		}
	}
	_ = ws.CloseNow()
	<-done
}
