package sip_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/sip"
	sipmsg "github.com/emiago/sipgo/sip"
)

// pcmuOfferAt is a PCMU offer whose media is at port of 127.0.0.1.
func pcmuOfferAt(port int) string {
	return fmt.Sprintf("v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio %d RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n", port)
}

// TestCallerVanishes: a caller that answers, sends a second of RTP and
// then goes silent, with no BYE: the media timeout (1 s here) ends the
// call: ReadFrame fails with conn.ErrClosed wrapping
// conn.ErrVanished (the call's end reason is "vanished"), the
// server sends the BYE and counts the timeout. Real loopback sockets: it
// asserts what happened, and logs the detect time. Mutation caught (seen
// failing): sip/rtp's closedErr without ErrVanished (ReasonOf
// "hangup").
func TestCallerVanishes(t *testing.T) {
	h := newHostile(t, func(c *sip.Config) { c.MediaTimeout = time.Second })
	p := dial(t, "udp", h.udp.Addr(), h.udp)
	media, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer media.Close()
	res := h.answer(t, p, "call-vanish", pcmuOfferAt(media.LocalAddr().(*net.UDPAddr).Port), 200)
	h.inDialog(t, p, res, "ACK", 1)
	c := h.took(t)
	defer c.Close()
	ours := answerMedia(t, res)

	// A second of 20 ms PCMU packets, then nothing.
	pkt := make([]byte, 12+160)
	pkt[0] = 0x80
	binary.BigEndian.PutUint32(pkt[8:], 0x5eed)
	for i := range 160 {
		pkt[12+i] = 0xff
	}
	var last time.Time
	for i := range 50 {
		binary.BigEndian.PutUint16(pkt[2:], uint16(i))
		binary.BigEndian.PutUint32(pkt[4:], uint32(i*160))
		if _, err := media.WriteToUDP(pkt, ours); err != nil {
			t.Fatal(err)
		}
		last = time.Now()
		time.Sleep(20 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f := messages.NewPooledFrame(c.InputRate(), nil)
	for err = nil; err == nil; err = c.ReadFrame(ctx, f) {
	}
	detect := time.Since(last)
	if !errors.Is(err, conn.ErrClosed) || !errors.Is(err, conn.ErrVanished) {
		t.Fatalf("ReadFrame = %v, want ErrClosed and ErrVanished", err)
	}
	if got := conn.ReasonOf(err); got != conn.ReasonVanished {
		t.Errorf("end reason %q", got)
	}
	t.Logf("the vanished caller was detected %v after its last packet (media timeout 1 s)", detect.Round(time.Millisecond))
	bye := false
	for end := time.Now().Add(5 * time.Second); !bye && time.Now().Before(end); {
		m := p.next(time.Until(end))
		if req, ok := m.(*sipmsg.Request); ok && req.Method == sipmsg.BYE {
			bye = true
		}
	}
	if !bye {
		t.Error("no BYE to the vanished caller")
	}
	if n := h.stat("media_timeouts"); n != 1 {
		t.Errorf("media_timeouts = %d, want 1", n)
	}
}

// answerMedia is the RTP address of our SDP answer in res.
func answerMedia(t *testing.T, res *sipmsg.Response) *net.UDPAddr {
	t.Helper()
	var ip net.IP
	port := 0
	for _, line := range strings.Split(strings.ReplaceAll(string(res.Body()), "\r", ""), "\n") {
		if _, err := fmt.Sscanf(line, "m=audio %d", &port); err == nil {
			continue
		}
		var s string
		if _, err := fmt.Sscanf(line, "c=IN IP4 %s", &s); err == nil {
			ip = net.ParseIP(s)
		}
	}
	if ip == nil || port == 0 {
		t.Fatalf("no media address in the answer:\n%s", res.Body())
	}
	return &net.UDPAddr{IP: ip, Port: port}
}

// TestHeldCallNotCut: the caller puts the call on hold (a re-INVITE with
// a=sendonly, the usual hold) and sends nothing, RTP nor RTCP, for more
// than the media timeout (1 s here): the call lives on (a held phone owes
// no RTP); once it resumes (sendrecv) and still sends nothing, the media
// timeout ends it, "vanished". Mutation caught (seen failing): sip/rtp
// before this change, which timed a sendonly hold out on RTP alone (the
// call was cut 1 s into the hold).
func TestHeldCallNotCut(t *testing.T) {
	h := newHostile(t, func(c *sip.Config) { c.MediaTimeout = time.Second })
	p := dial(t, "udp", h.udp.Addr(), h.udp)
	res := h.answer(t, p, "call-hold", pcmuOfferAt(40100), 200)
	h.inDialog(t, p, res, "ACK", 1)
	c := h.took(t)
	defer c.Close()
	ended := make(chan error, 1)
	go func() {
		f := messages.NewPooledFrame(c.InputRate(), nil)
		var err error
		for err == nil {
			err = c.ReadFrame(context.Background(), f)
		}
		ended <- err
	}()
	reinvite := func(cseq int, dir string) {
		t.Helper()
		body := strings.Replace(pcmuOfferAt(40100), "o=- 1 1", fmt.Sprintf("o=- 1 %d", cseq), 1) + "a=" + dir + "\r\n"
		msg := request(p, "INVITE", "sip:bot@"+h.udp.String(), "call-hold", cseq,
			"From: "+res.From().Value(), "To: "+res.To().Value(), "Contact: <sip:caller@"+p.local().String()+">")
		msg = msg[:len(msg)-len("Content-Length: 0\r\n\r\n")] +
			fmt.Sprintf("Content-Type: application/sdp\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		if err := p.send([]byte(msg)); err != nil {
			t.Fatal(err)
		}
		if r := p.response("call-hold", 5*time.Second); r == nil || r.StatusCode != 200 {
			t.Fatalf("the re-INVITE (%s) was answered %v", dir, r)
		}
		h.inDialog(t, p, res, "ACK", cseq)
	}
	reinvite(2, "sendonly")
	select {
	case err := <-ended:
		t.Fatalf("the held call ended: %v", err)
	case <-time.After(2500 * time.Millisecond):
	}
	reinvite(3, "sendrecv")
	select {
	case err := <-ended:
		if got := conn.ReasonOf(err); got != conn.ReasonVanished {
			t.Errorf("the resumed silent call ended %q (%v), want vanished", got, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the resumed call that sends nothing was not ended")
	}
}
