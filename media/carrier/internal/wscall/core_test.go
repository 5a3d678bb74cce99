package wscall

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/brisvox/brisvox/media/carrier/internal/carriertest"
	"github.com/coder/websocket"
	"github.com/rs/zerolog"
)

// TestHangupReasonFitsACloseFrame: a long reason is cut to what a close
// frame holds, on a rune boundary, and the first hang-up wins. Mutation
// caught (seen failing): cutting at the byte bound (an invalid UTF-8
// reason, which the peer may reject).
func TestHangupReasonFitsACloseFrame(t *testing.T) {
	c := NewCore(carriertest.IdleConn(t), Config{ID: "x", Rate: 8000, MaxMessageBytes: 1024, InQueue: 2, OutQueue: 2,
		MaxPendingMarks: 1, MaxBadMessages: 1}, NewCounters(), zerolog.Nop())
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
