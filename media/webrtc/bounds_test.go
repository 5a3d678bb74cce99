package webrtc

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/brisvox/brisvox/media/webrtc/webrtctest"
	"github.com/coder/websocket"
	"github.com/pion/rtp"
)

// TestLineBudget: a burst of pion lines, then one per interval; the rest
// dropped and counted. Mutations caught: the budget never refilled (no
// line after the burst, ever), refilled beyond the burst, not enforced.
func TestLineBudget(t *testing.T) {
	t0 := time.Unix(1000, 0)
	cases := []struct {
		name    string
		at      []time.Duration // offsets of the lines asked for
		allowed int
	}{
		{"a burst passes", repeat(0, pionLineBurst), pionLineBurst},
		{"beyond the burst dropped", repeat(0, pionLineBurst+30), pionLineBurst},
		{"one per interval after", append(repeat(0, pionLineBurst+5), pionLineEvery, pionLineEvery, 2*pionLineEvery), pionLineBurst + 2},
		{"refill capped at the burst", append(repeat(0, pionLineBurst), repeat(time.Hour, 3*pionLineBurst)...), 2 * pionLineBurst},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dropped := 0
			b := newLineBudget(func() { dropped++ })
			ok := 0
			for _, d := range tc.at {
				if b.take(t0.Add(d)) {
					ok++
				}
			}
			if ok != tc.allowed || dropped != len(tc.at)-ok {
				t.Fatalf("%d allowed, %d dropped; want %d, %d", ok, dropped, tc.allowed, len(tc.at)-tc.allowed)
			}
		})
	}
}

func repeat(d time.Duration, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d
	}
	return out
}

// candidateLine is a host candidate on loopback (checks to it stay on the
// machine).
func candidateLine(i int) string {
	return fmt.Sprintf("candidate:%d 1 udp 2122260223 127.0.0.1 %d typ host", i, 20000+i)
}

// TestOfferCandidateBound: an offer with more candidates than a browser
// gives is refused before pion sees it. Mutation caught: the count not
// checked (the offer is accepted).
func TestOfferCandidateBound(t *testing.T) {
	for _, tc := range []struct {
		n  int
		ok bool
	}{{1, true}, {maxRemoteCandidates, true}, {maxRemoteCandidates + 1, false}, {500, false}} {
		t.Run(fmt.Sprint(tc.n), func(t *testing.T) {
			lines := append([]string{}, sdpHead...)
			lines = append(lines, "m=audio 9 UDP/TLS/RTP/SAVPF 111", "c=IN IP4 0.0.0.0", "a=mid:0", "a=rtpmap:111 opus/48000/2")
			for i := range tc.n {
				lines = append(lines, "a="+candidateLine(i))
			}
			_, err := ParseOffer([]byte(offerBody(sdpLines(lines...))), DefaultMaxOfferBytes)
			if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrBadSDP)) {
				t.Fatalf("ParseOffer: %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

// TestTrickleCandidateBound: trickled candidates beyond the bound are
// answered with an error (and count as bad messages); the call goes on.
// Mutation caught: the per-call count not checked (all are added).
func TestTrickleCandidateBound(t *testing.T) {
	if testing.Short() {
		t.Skip("real sockets")
	}
	cfg := testConfig()
	cfg.MaxBadWSMessages = 100
	ts := startServer(t, cfg)
	ctx := testCtx(t, 30*time.Second)
	_, c := dialCall(t, ctx, ts, webrtctest.Options{NoWebsocket: true})
	ws := openWS(t, ctx, ts, c)
	const extra = 5
	for i := range maxRemoteCandidates + extra {
		msg := fmt.Sprintf(`{"type":"candidate","candidate":{"candidate":%q,"sdpMid":"0","sdpMLineIndex":0}}`, candidateLine(i))
		if err := ws.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range extra {
		m := readUntil(t, ctx, ws, "error")
		if r, _ := m["error"].(string); !strings.Contains(r, "candidates") {
			t.Fatalf("error %d: %v, want the candidate bound", i, m)
		}
	}
	if st := c.Stats(); st["ws_candidates"] != maxRemoteCandidates || st["ws_bad_messages"] != extra {
		t.Fatalf("stats %v, want %d candidates and %d bad", st, maxRemoteCandidates, extra)
	}
	if c.Err() != nil {
		t.Fatalf("the call ended: %v", c.Err())
	}
}

// TestSpoofFloodLogBound: a flood of packets from a foreign address, each
// of which pion reports at warn, writes a bounded number of lines; the
// rest are counted. Mutation caught: pion's warnings not under the budget
// (one line per packet).
func TestSpoofFloodLogBound(t *testing.T) {
	if testing.Short() {
		t.Skip("real sockets")
	}
	ts := startServer(t, testConfig())
	ctx := testCtx(t, 30*time.Second)
	_, c := dialCall(t, ctx, ts, webrtctest.Options{NoWebsocket: true})
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
	start := time.Now()
	for ts.srv.Stats()["pion_lines_dropped"] == 0 {
		for range 50 {
			if _, err := spoofer.WriteTo(pkt, to); err != nil {
				t.Fatal(err)
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no pion line dropped: %v", ts.srv.Stats())
		case <-time.After(5 * time.Millisecond):
		}
	}
	lines := strings.Count(ts.logs.String(), "not a valid remote candidate")
	bound := pionLineBurst + int(time.Since(start)/pionLineEvery) + 1
	if lines > bound {
		t.Fatalf("%d lines for the flood, want at most %d", lines, bound)
	}
	t.Logf("%d lines written, %d dropped", lines, ts.srv.Stats()["pion_lines_dropped"])
}
