package wscall

import (
	"errors"
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
