package sip_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brisvox/brisvox/media"
	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/sip"
	"github.com/brisvox/brisvox/sip/dtmf"
)

// TestSippSendDTMF: Call.SendDTMF(ctx, "15#") on a call sipp placed, the
// way the offer allows (a call that came in is DTMFAuto). Without
// telephone-event, three INFO requests reach sipp, whose scenario checks
// each (application/dtmf-relay, Signal=1, 5, #, a Duration) and answers
// 200, then hangs up; sipp must exit 0. With telephone-event, the media
// address of the offer is a socket of the test: our packets there are
// read back by our own detector (sip/dtmf) as the same three presses,
// each closed by three end packets, and no INFO is sent (sipp would fail
// on it).
// Mutations caught (seen failing): the INFO path sending every digit in
// one INFO or the bodies in another order (sipp's checks fail); auto
// sending INFO although telephone-event was negotiated (sipp fails on
// the unexpected INFO, no event is read back).
func TestSippSendDTMF(t *testing.T) {
	tests := []struct {
		name     string
		scenario string
		events   bool // the offer has telephone-event and our socket
	}{
		{"info without telephone-event", "testdata/sipp/dtmf_info.xml", false},
		{"rfc4733 negotiated", "testdata/sipp/dtmf_rfc4733.xml", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
			defer cancel()
			var (
				far  *net.UDPConn
				got  []media.RTPPacket
				wg   sync.WaitGroup
				args []string
			)
			if tt.events {
				var err error
				far, err = net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.2:0")))
				if err != nil {
					t.Fatal(err)
				}
				args = []string{"-key", "rtpport", strconv.Itoa(far.LocalAddr().(*net.UDPAddr).Port)}
				wg.Go(func() { got = readRTP(far) })
			}
			run := r.startSipp(ctx, tt.scenario, args...)
			c := r.call()
			if err := c.SendDTMF(ctx, "15#"); err != nil {
				t.Errorf("SendDTMF: %v", err)
			}
			if tt.events {
				// Let the last end packets reach the socket, then hang up:
				// the scenario waits for our BYE.
				time.Sleep(200 * time.Millisecond)
				c.Hangup(conn.EndNormal, "test")
			}
			select {
			case <-run.done:
			case <-time.After(20 * time.Second):
				_ = c.Close()
				<-run.done
			}
			_ = c.Close()
			if far != nil {
				_ = far.Close()
			}
			wg.Wait()
			if run.err != nil {
				t.Fatalf("sipp: %v\n%s", run.err, run.out)
			}
			if !tt.events {
				return
			}
			digits, ends := decodeEvents(t, got, 101)
			if digits != "15#" || ends != 9 {
				t.Errorf("read back %q with %d end packets, want \"15#\" with 9 (3 a digit)", digits, ends)
			}
		})
	}
}

// readRTP reads c's packets until it is closed.
func readRTP(c *net.UDPConn) []media.RTPPacket {
	var out []media.RTPPacket
	buf := make([]byte, 1500)
	for {
		n, err := c.Read(buf)
		if err != nil {
			return out
		}
		var p media.RTPPacket
		if media.ParseRTP(buf[:n], &p) != nil {
			continue
		}
		p.Payload = append([]byte(nil), p.Payload...)
		out = append(out, p)
	}
}

// decodeEvents runs the telephone-events of pkts (payload type pt)
// through our detector: the digits pressed and the end packets seen.
func decodeEvents(t *testing.T, pkts []media.RTPPacket, pt uint8) (string, int) {
	t.Helper()
	d, err := dtmf.New(dtmf.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var digits strings.Builder
	ends := 0
	at := time.Unix(0, 0)
	for _, p := range pkts {
		if p.PayloadType != pt {
			continue
		}
		if len(p.Payload) >= 2 && p.Payload[1]&0x80 != 0 {
			ends++
		}
		presses, err := d.Packet(nil, p.SequenceNumber, p.Timestamp, p.Marker, p.Payload, at)
		if err != nil {
			t.Fatalf("a telephone-event our detector refuses: %v", err)
		}
		for _, k := range presses {
			digits.WriteByte(k.Digit)
		}
		at = at.Add(20 * time.Millisecond)
	}
	return digits.String(), ends
}

// TestSippSendDTMFTrunkModes: on calls we placed to a sipp callee, the
// trunk's dtmf mode decides. info: INFO although the answer has
// telephone-event (dtmf_uas_info.xml checks the three bodies of "15#").
// rfc4733: an answer without telephone-event makes SendDTMF fail at once
// with conn.ErrNotSupported and send no INFO (sipp would fail on one).
// Both end with our BYE, which sipp waits for. Mutations caught (seen
// failing): the trunk's mode ignored (auto: the info row sends events
// and sipp, waiting for an INFO, fails on our BYE; the rfc4733 row falls
// back to INFO, sipp fails on the unexpected message).
func TestSippSendDTMFTrunkModes(t *testing.T) {
	tests := []struct {
		name     string
		mode     string
		scenario string
		wantErr  error
	}{
		{"info with telephone-event", sip.DTMFInfo, "testdata/sipp/dtmf_uas_info.xml", nil},
		{"rfc4733 without telephone-event", sip.DTMFRFC4733, "testdata/sipp/dtmf_uas_no_events.xml", conn.ErrNotSupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			port := freePort(t, "127.0.0.2")
			r := newRig(t, func(c *sip.Config) {
				c.Trunks = map[string]sip.TrunkConfig{"far": {
					Address: "127.0.0.2:" + strconv.Itoa(port), From: "+15550000", DTMF: tt.mode,
				}}
			})
			ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
			defer cancel()
			far := startFarEnd(t, ctx, r.dir, tt.scenario, port)
			c, err := r.srv.Dial(ctx, sip.DialRequest{Trunk: "far", To: "+15551234", RingTimeout: 20 * time.Second})
			if err != nil {
				far.wait(t)
				t.Fatalf("dial: %v\n%s", err, far.out.String())
			}
			if err := c.SendDTMF(ctx, "15#"); !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Errorf("SendDTMF: %v, want %v", err, tt.wantErr)
			}
			_ = c.Close()
			far.wait(t)
			if far.err != nil {
				t.Fatalf("sipp: %v\n%s", far.err, far.out.String())
			}
		})
	}
}
