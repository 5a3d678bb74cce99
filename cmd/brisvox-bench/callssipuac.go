package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/brisvox/brisvox/media"
	"golang.org/x/sys/unix"
)

// The callers' SIP user agent client for `calls-callers --transport sip`:
// one leg a caller, on the caller's own loopback address, with a UDP
// socket for its signalling and one for its RTP (RTCP muxed on it by
// a=rtcp, RFC 3605; the callers ignore RTCP). A minimal RFC 3261 UAC:
// INVITE with an SDP offer (PCMU, 20 ms), retransmitted on timer A until
// a response, 1xx, a 2xx answered by ACK (again for a retransmitted
// 2xx), a non-2xx by ACK and an error; a BYE at the end, retransmitted
// on timer E until its final response; a BYE or OPTIONS from the server
// answered 200, other requests 501.

// sipLeg is one caller's SIP call.
type sipLeg struct {
	idx    int
	addr   netip.Addr
	sig    *net.UDPConn
	rtp    *net.UDPConn
	server netip.AddrPort
	// remoteRTP is where the server's answer says to send RTP.
	remoteRTP netip.AddrPort

	callID, fromTag string
	// toTag and target are the dialog's remote tag and the 2xx's
	// Contact URI (the Request-URI of the ACK and BYE).
	toTag, target string

	// The RTP sender's state (the shard's goroutine).
	seq      uint16
	ts       uint32
	ssrc     uint32
	pkt      []byte
	firstPkt bool

	mu sync.Mutex
	// waits are the client transactions waiting for a response, by
	// branch.
	waits map[string]chan uacMsg
	ack   []byte // the ACK of the 2xx, sent again for a retransmitted 2xx
	// byServer: the server sent a BYE (the call ended on its side).
	byServer bool
	// received counts RTP packets in, loud the non-silent ones.
	received, loud int

	onLoud func(at time.Time)
	wg     sync.WaitGroup
}

// uacMsg is a parsed SIP message: a request (method, uri) or a response
// (code); headers by lowercase full name, in order.
type uacMsg struct {
	method, uri string
	code        int
	headers     map[string][]string
	body        []byte
}

func (m uacMsg) header(name string) string {
	if v := m.headers[name]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// uacCompact maps the compact header forms (RFC 3261 7.3.3).
var uacCompact = map[string]string{"v": "via", "f": "from", "t": "to", "i": "call-id", "m": "contact", "l": "content-length", "c": "content-type", "k": "supported"}

// parseUACMsg reads one datagram's message.
func parseUACMsg(b []byte) (uacMsg, error) {
	head, body, ok := bytes.Cut(b, []byte("\r\n\r\n"))
	if !ok {
		return uacMsg{}, errors.New("sip: no end of headers")
	}
	lines := strings.Split(string(head), "\r\n")
	m := uacMsg{headers: map[string][]string{}}
	f := strings.SplitN(lines[0], " ", 3)
	if len(f) < 3 {
		return m, fmt.Errorf("sip: start line %q", lines[0])
	}
	if f[0] == "SIP/2.0" {
		code, err := strconv.Atoi(f[1])
		if err != nil {
			return m, fmt.Errorf("sip: status %q", f[1])
		}
		m.code = code
	} else {
		m.method, m.uri = f[0], f[1]
	}
	var last string
	for _, l := range lines[1:] {
		if (strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t")) && last != "" {
			v := m.headers[last]
			v[len(v)-1] += " " + strings.TrimSpace(l) // folded
			continue
		}
		name, val, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		name = strings.ToLower(strings.TrimSpace(name))
		if full, ok := uacCompact[name]; ok {
			name = full
		}
		m.headers[name] = append(m.headers[name], strings.TrimSpace(val))
		last = name
	}
	if n, err := strconv.Atoi(m.header("content-length")); err == nil && n >= 0 && n <= len(body) {
		body = body[:n]
	}
	m.body = body
	return m, nil
}

// uacParam is parameter name of a header value (";name=value").
func uacParam(v, name string) string {
	for _, p := range strings.Split(v, ";")[1:] {
		k, val, _ := strings.Cut(strings.TrimSpace(p), "=")
		if strings.EqualFold(k, name) {
			return val
		}
	}
	return ""
}

// uacURIOf is the URI of a name-addr ("<sip:...>") or of a bare addr-spec.
func uacURIOf(v string) string {
	if i := strings.IndexByte(v, '<'); i >= 0 {
		if j := strings.IndexByte(v[i:], '>'); j > 0 {
			return v[i+1 : i+j]
		}
	}
	u, _, _ := strings.Cut(v, ";")
	return strings.TrimSpace(u)
}

// dialSIPLeg places caller idx's call to server: binds its sockets on
// sipCallerAddr(idx), sends the INVITE and ACKs the 2xx. onLoud gets the
// kernel receive time of every non-silent RTP packet from the server.
func dialSIPLeg(ctx context.Context, idx int, server netip.AddrPort, seed uint64, onLoud func(time.Time)) (*sipLeg, error) {
	addr := sipCallerAddr(idx)
	sig, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(addr, 0)))
	if err != nil {
		return nil, err
	}
	rtpc, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(addr, 0)))
	if err != nil {
		_ = sig.Close()
		return nil, err
	}
	raw, err := rtpc.SyscallConn()
	if err == nil {
		var serr error
		err = raw.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1) })
		if err == nil {
			err = serr
		}
	}
	if err != nil {
		_ = sig.Close()
		_ = rtpc.Close()
		return nil, fmt.Errorf("rtp: SO_TIMESTAMPNS: %w", err)
	}
	l := &sipLeg{idx: idx, addr: addr, sig: sig, rtp: rtpc, server: server,
		callID:  fmt.Sprintf("calls-%d-%d-%d@%s", os.Getpid(), seed, idx, addr),
		fromTag: fmt.Sprintf("c%d-%d", seed, idx), ssrc: uint32(seed)*7919 + uint32(idx) + 1,
		seq: uint16(idx * 97), ts: uint32(idx) * 1601, pkt: make([]byte, 12+160), firstPkt: true,
		waits: map[string]chan uacMsg{}, onLoud: onLoud}
	l.wg.Go(l.readSignalling)
	l.wg.Go(l.readRTP)
	if err := l.invite(ctx); err != nil {
		l.close()
		return nil, err
	}
	return l, nil
}

func (l *sipLeg) local() netip.AddrPort { return l.sig.LocalAddr().(*net.UDPAddr).AddrPort() }

func (l *sipLeg) rtpPort() uint16 { return l.rtp.LocalAddr().(*net.UDPAddr).AddrPort().Port() }

// request builds a request of the dialog (toTag "" before the 2xx).
func (l *sipLeg) request(method, uri, branch string, cseq int, body []byte) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s SIP/2.0\r\n", method, uri)
	fmt.Fprintf(&b, "Via: SIP/2.0/UDP %s;branch=%s;rport\r\n", l.local(), branch)
	b.WriteString("Max-Forwards: 70\r\n")
	fmt.Fprintf(&b, "From: <sip:caller%d@%s>;tag=%s\r\n", l.idx, l.addr, l.fromTag)
	to := fmt.Sprintf("To: <sip:bench@%s>", l.server)
	if l.toTag != "" {
		to += ";tag=" + l.toTag
	}
	b.WriteString(to + "\r\n")
	fmt.Fprintf(&b, "Call-ID: %s\r\n", l.callID)
	fmt.Fprintf(&b, "CSeq: %d %s\r\n", cseq, method)
	fmt.Fprintf(&b, "Contact: <sip:caller%d@%s>\r\n", l.idx, l.local())
	b.WriteString("User-Agent: brisvox-bench-calls\r\n")
	if len(body) > 0 {
		b.WriteString("Content-Type: application/sdp\r\n")
	}
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n", len(body))
	b.Write(body)
	return []byte(b.String())
}

// offer is the leg's SDP offer: PCMU at 20 ms on its RTP socket, RTCP
// on the same port.
func (l *sipLeg) offer() []byte {
	p := l.rtpPort()
	return fmt.Appendf(nil, "v=0\r\no=brisvox-bench %d 1 IN IP4 %s\r\ns=-\r\nc=IN IP4 %s\r\nt=0 0\r\nm=audio %d RTP/AVP 0\r\n"+
		"a=rtpmap:0 PCMU/8000\r\na=ptime:20\r\na=rtcp:%d\r\na=sendrecv\r\n", l.idx+1, l.addr, l.addr, p, p)
}

// parseAnswer reads the RTP address of an SDP answer: its c= (session
// or the audio's) and the audio m= line's port.
func parseAnswer(body []byte) (netip.AddrPort, error) {
	var ip netip.Addr
	port := -1
	for _, line := range strings.Split(string(body), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "c=IN IP4 "):
			a, err := netip.ParseAddr(strings.Fields(line[len("c=IN IP4 "):])[0])
			if err != nil {
				return netip.AddrPort{}, fmt.Errorf("sdp answer: %q", line)
			}
			ip = a
		case strings.HasPrefix(line, "m=audio "):
			f := strings.Fields(line)
			if len(f) < 4 || f[3] != "0" {
				return netip.AddrPort{}, fmt.Errorf("sdp answer: %q (want PCMU)", line)
			}
			p, err := strconv.Atoi(f[1])
			if err != nil || p <= 0 || p > 65535 {
				return netip.AddrPort{}, fmt.Errorf("sdp answer: %q", line)
			}
			port = p
		}
	}
	if !ip.IsValid() || port < 0 {
		return netip.AddrPort{}, errors.New("sdp answer: no c= or m=audio")
	}
	return netip.AddrPortFrom(ip, uint16(port)), nil
}

// transaction sends req (its branch) and retransmits it on T1 doubling
// (capped at T2 = 4 s for non-INVITE) until a response comes; it gives
// every response to got until got says final. It fails after 64 T1.
func (l *sipLeg) transaction(ctx context.Context, branch string, req []byte, invite bool, got func(uacMsg) (final bool)) error {
	ch := make(chan uacMsg, 16)
	l.mu.Lock()
	l.waits[branch] = ch
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		delete(l.waits, branch)
		l.mu.Unlock()
	}()
	if _, err := l.sig.WriteToUDPAddrPort(req, l.server); err != nil {
		return err
	}
	interval := 500 * time.Millisecond
	retrans := time.NewTimer(interval)
	defer retrans.Stop()
	deadline := time.NewTimer(sipCallersTimeout)
	defer deadline.Stop()
	provisional := false
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("sip: no final response in %v", sipCallersTimeout)
		case <-retrans.C:
			if invite && provisional {
				continue // a 1xx stops the INVITE's retransmissions
			}
			if _, err := l.sig.WriteToUDPAddrPort(req, l.server); err != nil {
				return err
			}
			interval *= 2
			if !invite || provisional {
				interval = min(interval, 4*time.Second)
			}
			retrans.Reset(interval)
		case m := <-ch:
			if m.code < 200 {
				provisional = true
				if !invite {
					interval = 4 * time.Second
				}
				continue
			}
			if got(m) {
				return nil
			}
		}
	}
}

// invite places the call: INVITE, the 2xx's tag, Contact and SDP, ACK.
func (l *sipLeg) invite(ctx context.Context) error {
	branch := fmt.Sprintf("z9hG4bK-%s-1", l.fromTag)
	uri := fmt.Sprintf("sip:bench@%s", l.server)
	req := l.request("INVITE", uri, branch, 1, l.offer())
	var failed error
	err := l.transaction(ctx, branch, req, true, func(m uacMsg) bool {
		if m.code >= 300 {
			// A non-2xx's ACK is the transaction's: the INVITE's branch and To.
			to := m.header("to")
			l.toTag = uacParam(to, "tag")
			ack := l.request("ACK", uri, branch, 1, nil)
			_, _ = l.sig.WriteToUDPAddrPort(ack, l.server)
			failed = fmt.Errorf("sip: INVITE answered %d", m.code)
			return true
		}
		l.toTag = uacParam(m.header("to"), "tag")
		l.target = uacURIOf(m.header("contact"))
		if l.target == "" {
			l.target = uri
		}
		ap, err := parseAnswer(m.body)
		if err != nil {
			failed = err
		}
		l.remoteRTP = ap
		ack := l.request("ACK", l.target, fmt.Sprintf("z9hG4bK-%s-ack", l.fromTag), 1, nil)
		l.mu.Lock()
		l.ack = ack
		l.mu.Unlock()
		_, _ = l.sig.WriteToUDPAddrPort(ack, l.server)
		return true
	})
	if err != nil {
		return err
	}
	return failed
}

// bye ends the call from the caller's side (nothing when the server
// ended it).
func (l *sipLeg) bye(ctx context.Context) error {
	l.mu.Lock()
	done := l.byServer
	l.mu.Unlock()
	if done {
		return nil
	}
	branch := fmt.Sprintf("z9hG4bK-%s-bye", l.fromTag)
	req := l.request("BYE", l.target, branch, 2, nil)
	var code int
	err := l.transaction(ctx, branch, req, false, func(m uacMsg) bool { code = m.code; return true })
	if err == nil && code >= 300 && code != 481 { // 481: the server ended it as the BYE crossed
		err = fmt.Errorf("sip: BYE answered %d", code)
	}
	return err
}

// readSignalling hands responses to their transactions and answers the
// server's requests, until the socket closes.
func (l *sipLeg) readSignalling() {
	buf := make([]byte, 65536)
	for {
		n, from, err := l.sig.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		m, err := parseUACMsg(buf[:n])
		if err != nil {
			continue
		}
		if m.code != 0 {
			branch := uacParam(m.header("via"), "branch")
			cseq := m.header("cseq")
			l.mu.Lock()
			ch := l.waits[branch]
			ack := l.ack
			l.mu.Unlock()
			switch {
			case ch != nil:
				select {
				case ch <- m:
				default:
				}
			case m.code >= 200 && m.code < 300 && strings.HasSuffix(cseq, "INVITE") && ack != nil:
				_, _ = l.sig.WriteToUDPAddrPort(ack, l.server) // a retransmitted 2xx: the ACK was lost
			}
			continue
		}
		switch m.method {
		case "ACK":
			continue
		case "BYE":
			l.mu.Lock()
			l.byServer = true
			l.mu.Unlock()
			_, _ = l.sig.WriteToUDPAddrPort(uacResponse(m, 200, "OK"), from)
		case "OPTIONS":
			_, _ = l.sig.WriteToUDPAddrPort(uacResponse(m, 200, "OK"), from)
		default:
			_, _ = l.sig.WriteToUDPAddrPort(uacResponse(m, 501, "Not Implemented"), from)
		}
	}
}

// uacResponse answers request m (its Via, From, To, Call-ID, CSeq).
func uacResponse(m uacMsg, code int, reason string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "SIP/2.0 %d %s\r\n", code, reason)
	for _, v := range m.headers["via"] {
		fmt.Fprintf(&b, "Via: %s\r\n", v)
	}
	fmt.Fprintf(&b, "From: %s\r\nTo: %s\r\nCall-ID: %s\r\nCSeq: %s\r\nContent-Length: 0\r\n\r\n",
		m.header("from"), m.header("to"), m.header("call-id"), m.header("cseq"))
	return []byte(b.String())
}

// sipLoudLevel: a packet with a sample above it is the bot speaking
// (the encoded silence decodes to 0; the mock TTS's tone is far above).
const sipLoudLevel = 256

// readRTP reads the server's RTP with kernel receive times until the
// socket closes; RTCP (muxed) and other payload types are skipped.
func (l *sipLeg) readRTP() {
	buf := make([]byte, 2048)
	oob := make([]byte, 128)
	for {
		n, oobn, _, _, err := l.rtp.ReadMsgUDPAddrPort(buf, oob)
		if err != nil {
			return
		}
		if n < 12 || buf[0]&0xC0 != 0x80 || buf[1]&0x7f != 0 {
			continue // not RTP, RTCP (200-204 with the marker bit set), not PCMU
		}
		at, ok := kernelStampOf(oob[:oobn])
		if !ok {
			at = time.Now()
		}
		hdr := 12 + 4*int(buf[0]&0x0f)
		if buf[0]&0x10 != 0 && n >= hdr+4 {
			hdr += 4 + 4*int(binary.BigEndian.Uint16(buf[hdr+2:]))
		}
		loud := false
		for _, c := range buf[min(hdr, n):n] {
			if v := media.MulawDecodeSample(c); v > sipLoudLevel || v < -sipLoudLevel {
				loud = true
				break
			}
		}
		l.mu.Lock()
		l.received++
		if loud {
			l.loud++
		}
		l.mu.Unlock()
		if loud {
			l.onLoud(at)
		}
	}
}

// send sends one 20 ms frame (s16le at 8 kHz) as a PCMU packet.
func (l *sipLeg) send(frame []byte) error {
	p := l.pkt
	p[0], p[1] = 0x80, 0
	if l.firstPkt {
		p[1] |= 0x80 // the marker: the talkspurt's start
		l.firstPkt = false
	}
	binary.BigEndian.PutUint16(p[2:], l.seq)
	binary.BigEndian.PutUint32(p[4:], l.ts)
	binary.BigEndian.PutUint32(p[8:], l.ssrc)
	for i := 0; i < 160 && 2*i+1 < len(frame); i++ {
		p[12+i] = media.MulawEncodeSample(int16(binary.LittleEndian.Uint16(frame[2*i:])))
	}
	l.seq++
	l.ts += 160
	_, err := l.rtp.WriteToUDPAddrPort(p, l.remoteRTP)
	return err
}

// close closes the sockets and waits for the readers.
func (l *sipLeg) close() {
	_ = l.sig.Close()
	_ = l.rtp.Close()
	l.wg.Wait()
}
