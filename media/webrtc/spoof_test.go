package webrtc

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/brisvox/brisvox/media/webrtc/webrtctest"
	"github.com/pion/rtp"
)

// TestMediaOnlyFromTheValidatedAddress: an RTP packet sent to the call's
// port from another socket is dropped by pion's ICE layer (logged through
// our adapter with the call id) and never reaches the jitter buffer (a new
// SSRC there would resync it).
// Mutation caught: the pion LoggerFactory not installed (no line), or
// built without the call's logger (no call id in it).
func TestMediaOnlyFromTheValidatedAddress(t *testing.T) {
	if testing.Short() {
		t.Skip("real sockets")
	}
	ts := startServer(t, testConfig())
	sink := ts.logs
	ctx := testCtx(t, 15*time.Second)
	_, c := dialCall(t, ctx, ts, webrtctest.Options{})
	readFrames(t, ctx, c, 5)
	pair, err := c.pc.SCTP().Transport().ICETransport().GetSelectedCandidatePair()
	if err != nil || pair == nil {
		t.Fatalf("no selected pair: %v", err)
	}
	spoofer, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer spoofer.Close()
	pkt, _ := (&rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 111, SequenceNumber: 9, Timestamp: 99, SSRC: 0xbad}, Payload: []byte{0xfc, 1, 2, 3}}).Marshal()
	to := &net.UDPAddr{IP: net.ParseIP(pair.Local.Address), Port: int(pair.Local.Port)}
	for !strings.Contains(sink.String(), "not a valid remote candidate") {
		if _, err := spoofer.WriteTo(pkt, to); err != nil {
			t.Fatal(err)
		}
		select {
		case <-sink.wake:
		case <-ctx.Done():
			t.Fatalf("no drop logged; log: %s", sink.String())
		}
	}
	var line string
	for _, l := range strings.Split(sink.String(), "\n") {
		if strings.Contains(l, "not a valid remote candidate") {
			line = l
		}
	}
	if !strings.Contains(line, c.ID()) {
		t.Fatalf("pion's line lacks the call id: %s", line)
	}
	readFrames(t, ctx, c, 10)
	if st := c.Stats(); st["jitter_resyncs"] != 0 || st["rtp_errors"] != 0 {
		t.Fatalf("the spoofed packet reached the jitter buffer: %v", st)
	}
}
