package sip_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/brisvox/brisvox/media/conn"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brisvox/brisvox/internal/logtest"
	"github.com/brisvox/brisvox/sip"
	"github.com/brisvox/brisvox/sip/rtp"
	"github.com/brisvox/brisvox/sip/signal"
	"github.com/brisvox/brisvox/sip/trunk"
	sipmsg "github.com/emiago/sipgo/sip"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"
)

// This file holds the server against a hostile network: RFC 4475's
// torture messages and our malformed corpus over UDP and TCP, digest
// authentication with sipp, the allowlist, svmap and a sipsak flood. All
// of it runs over real loopback sockets, so it is skipped under -short;
// a test that needs an outside peer is skipped when it is not installed.

// hostile is a sip.Server on 127.0.0.1 (UDP and TCP) that records what
// reached the application (Admit is the first thing Application.Invite
// does) and counts sipgo's parse failures in its log (the server's
// Stats do not count them: see the report of this test).
type hostile struct {
	t        *testing.T
	srv      *sip.Server
	udp, tcp netip.AddrPort
	admitted atomic.Int64
	probes   atomic.Int64 // names the probes' Call-IDs
	calls    chan *sip.Call
	log      *logSink
}

// logSink is the server's log: it counts sipgo's "failed to parse"
// lines and keeps everything for the privacy check.
type logSink struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	parse atomic.Int64
}

func (l *logSink) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(`"message":"failed to parse"`)) {
		l.parse.Add(1)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logSink) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func newHostile(t *testing.T, edit func(*sip.Config)) *hostile {
	t.Helper()
	if testing.Short() {
		t.Skip("real loopback sockets")
	}
	before := goleak.IgnoreCurrent()
	fds := countFDs(t)
	h := &hostile{t: t, calls: make(chan *sip.Call, 64), log: &logSink{}}
	cfg := sip.Config{
		Signal: signal.Config{Listen: []signal.Listen{
			{Network: "udp", Addr: "127.0.0.1:0"}, {Network: "tcp", Addr: "127.0.0.1:0"},
		}},
		Trunk:  trunk.Config{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}},
		Ports:  rtp.PortsConfig{Addr: netip.MustParseAddr("127.0.0.1"), Min: 32000, Max: 32200},
		Admit:  func() (conn.Admission, error) { h.admitted.Add(1); return noSlot{}, nil },
		OnCall: func(c *sip.Call) { h.calls <- c },
		Log:    zerolog.New(h.log).Level(zerolog.DebugLevel),
	}
	if edit != nil {
		edit(&cfg)
	}
	srv, err := sip.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	h.srv = srv
	for _, a := range srv.Addrs() {
		switch a.Network {
		case "udp":
			h.udp = a.Addr
		case "tcp":
			h.tcp = a.Addr
		}
	}
	t.Cleanup(func() {
		settleSipgo(t)
		srv.Close()
		h.closeCalls()
		goleak.VerifyNone(t, before)
		if n := countFDs(t); n > fds {
			t.Errorf("%d file descriptors open after the test, %d before", n, fds)
		}
		// Nothing of a message is logged: the corpora's numbers, hosts and
		// users never appear in the log.
		if s := h.log.String(); strings.Contains(s, "example.net") {
			for _, l := range strings.Split(s, "\n") {
				if strings.Contains(l, "example.net") {
					t.Log(l)
				}
			}
		}
		// Every line is one JSON object with no key twice (strict log
		// pipelines reject duplicates; encoding/json would not see them).
		// Mutation caught (seen failing): "dialog ended" given its "call"
		// twice (TestAdmissionReleasedOnEveryPath/no_ack).
		if err := logtest.Check([]byte(h.log.String()), nil); err != nil {
			t.Errorf("the server's log: %v", err)
		}
		for _, secret := range []string{"5551234567", "example.com", "example.net", "sipp@", "brisvox-secret"} {
			if strings.Contains(h.log.String(), secret) {
				t.Errorf("the log holds %q", secret)
			}
		}
	})
	return h
}

// closeCalls closes the calls handed to OnCall.
func (h *hostile) closeCalls() {
	for {
		select {
		case c := <-h.calls:
			_ = c.Close()
		default:
			return
		}
	}
}

// addr is the server's address on network.
func (h *hostile) addr(network string) netip.AddrPort {
	if network == "tcp" {
		return h.tcp
	}
	return h.udp
}

// stat is one figure of Stats.
func (h *hostile) stat(key string) uint64 { return h.srv.Stats()[key] }

// peer is a raw SIP client on one socket: it sends bytes as they are
// and reads the responses (a UDP socket or one TCP connection).
type peer struct {
	network string
	conn    net.Conn
	stream  *sipmsg.ParserStream
	queue   []sipmsg.Message
	eof     bool
}

// dial opens a peer from local (port 0) to the server.
func dial(t *testing.T, network string, local netip.Addr, to netip.AddrPort) *peer {
	t.Helper()
	var (
		conn net.Conn
		err  error
	)
	switch network {
	case "udp":
		conn, err = net.DialUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(local, 0)), net.UDPAddrFromAddrPort(to))
	case "tcp":
		conn, err = net.DialTCP("tcp", net.TCPAddrFromAddrPort(netip.AddrPortFrom(local, 0)), net.TCPAddrFromAddrPort(to))
	}
	if err != nil {
		t.Fatal(err)
	}
	p := &peer{network: network, conn: conn}
	if network == "tcp" {
		p.stream = sipmsg.NewParser().NewSIPStream()
	}
	t.Cleanup(p.close)
	return p
}

func (p *peer) close() {
	_ = p.conn.Close()
	if p.stream != nil {
		p.stream.Close()
		p.stream = nil
	}
}

// local is the peer's own address.
func (p *peer) local() netip.AddrPort {
	ap, _ := netip.ParseAddrPort(p.conn.LocalAddr().String())
	return ap
}

func (p *peer) send(b []byte) error {
	_, err := p.conn.Write(b)
	return err
}

// next reads one message within d; nil when none came (or the server
// closed the connection: eof).
func (p *peer) next(d time.Duration) sipmsg.Message {
	deadline := time.Now().Add(d)
	buf := make([]byte, 65536)
	for len(p.queue) == 0 && !p.eof {
		_ = p.conn.SetReadDeadline(deadline)
		n, err := p.conn.Read(buf)
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || errors.Is(err, io.ErrUnexpectedEOF) {
				p.eof = true
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return nil
			}
			p.eof = true
			break
		}
		if p.stream == nil {
			if m, err := sipmsg.ParseMessage(buf[:n]); err == nil {
				p.queue = append(p.queue, m)
			}
			continue
		}
		_ = p.stream.ParseSIPStream(buf[:n], func(m sipmsg.Message) { p.queue = append(p.queue, m) })
	}
	if len(p.queue) == 0 {
		return nil
	}
	m := p.queue[0]
	p.queue = p.queue[1:]
	return m
}

// response reads responses until a final one to a request of callID
// (provisional ones skipped); nil when none came within d.
func (p *peer) response(callID string, d time.Duration) *sipmsg.Response {
	end := time.Now().Add(d)
	for {
		left := time.Until(end)
		if left <= 0 {
			return nil
		}
		m := p.next(left)
		if m == nil {
			return nil
		}
		res, ok := m.(*sipmsg.Response)
		if !ok || res.StatusCode < 200 {
			continue
		}
		if id := res.CallID(); callID == "" || (id != nil && id.Value() == callID) {
			return res
		}
	}
}

// rewriteVia points the top Via's sent-by at from (and its transport at
// the one used), keeping every other byte of msg. A message without a
// Via, or whose top Via is not "SIP/x/T sent-by", is returned as it is.
//
// A request that follows the first one's empty line (RFC 4475 dblreq
// holds two) gets its top Via rewritten too: over TCP sipgo answers it
// on a new connection to its sent-by when the first one is gone.
func rewriteVia(msg []byte, transport string, from netip.AddrPort) []byte {
	end := bytes.Index(msg, []byte("\r\n\r\n"))
	if end >= 0 {
		rest := msg[end+4:]
		if line, _, ok := bytes.Cut(bytes.TrimLeft(rest, "\r\n"), []byte("\r\n")); ok && bytes.HasSuffix(line, []byte(" SIP/2.0")) && bytes.Contains(line, []byte(" sip:")) {
			head := rewriteOne(msg[:end+4], transport, from)
			return append(head, rewriteVia(rest, transport, from)...)
		}
	}
	return rewriteOne(msg, transport, from)
}

// rewriteOne rewrites the top Via of the message msg starts with.
func rewriteOne(msg []byte, transport string, from netip.AddrPort) []byte {
	end := bytes.Index(msg, []byte("\r\n\r\n"))
	if end < 0 {
		end = len(msg)
	}
	// Header lines start after a CRLF not followed by whitespace.
	for i := bytes.Index(msg, []byte("\r\n")); i >= 0 && i < end; {
		start := i + 2
		next := bytes.Index(msg[start:], []byte("\r\n"))
		if next < 0 {
			next = len(msg) - start
		}
		colon := bytes.IndexByte(msg[start:start+next], ':')
		if colon > 0 {
			name := strings.TrimRight(string(msg[start:start+colon]), " \t")
			if strings.EqualFold(name, "via") || strings.EqualFold(name, "v") {
				return rewriteSentBy(msg, start+colon+1, transport, from)
			}
		}
		i = start + next
	}
	return msg
}

// rewriteSentBy rewrites the sent-protocol's transport and the sent-by
// of the Via value starting at at.
func rewriteSentBy(msg []byte, at int, transport string, from netip.AddrPort) []byte {
	i := at
	lws := func() {
		for i < len(msg) {
			switch {
			case msg[i] == ' ' || msg[i] == '\t':
				i++
			case bytes.HasPrefix(msg[i:], []byte("\r\n ")) || bytes.HasPrefix(msg[i:], []byte("\r\n\t")):
				i += 3
			default:
				return
			}
		}
	}
	token := func() (int, int) {
		s := i
		for i < len(msg) && !bytes.ContainsRune([]byte(" \t\r\n/;,"), rune(msg[i])) {
			i++
		}
		return s, i
	}
	slash := func() bool {
		lws()
		if i < len(msg) && msg[i] == '/' {
			i++
			lws()
			return true
		}
		return false
	}
	lws()
	if _, e := token(); e == i && !slash() {
		return msg
	}
	if _, _ = token(); !slash() {
		return msg
	}
	ts, te := token()
	lws()
	hs, he := token()
	if te == ts || he == hs {
		return msg
	}
	out := make([]byte, 0, len(msg)+32)
	out = append(out, msg[:ts]...)
	out = append(out, strings.ToUpper(transport)...)
	out = append(out, msg[te:hs]...)
	out = append(out, from.String()...)
	return append(out, msg[he:]...)
}

func TestRewriteVia(t *testing.T) {
	from := netip.MustParseAddrPort("127.0.0.1:4000")
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "INVITE x SIP/2.0\r\nTo: a\r\nVia: SIP/2.0/UDP host:5060;branch=z9\r\nVia: SIP/2.0/UDP b\r\n\r\nbody",
			"INVITE x SIP/2.0\r\nTo: a\r\nVia: SIP/2.0/TCP 127.0.0.1:4000;branch=z9\r\nVia: SIP/2.0/UDP b\r\n\r\nbody"},
		{"compact", "OPTIONS x SIP/2.0\r\nv: SIP/2.0/UDP h\r\n\r\n", "OPTIONS x SIP/2.0\r\nv: SIP/2.0/TCP 127.0.0.1:4000\r\n\r\n"},
		{"wsinv", "INVITE x SIP/2.0\r\nVia  : SIP  /   2.0\r\n /UDP\r\n    192.0.2.2;branch=390skdjuw\r\n\r\n",
			"INVITE x SIP/2.0\r\nVia  : SIP  /   2.0\r\n /TCP\r\n    127.0.0.1:4000;branch=390skdjuw\r\n\r\n"},
		{"two requests", "REGISTER x SIP/2.0\r\nVia: SIP/2.0/UDP a\r\n\r\n\r\nINVITE sip:b SIP/2.0\r\nVia: SIP/2.0/UDP b\r\n\r\n",
			"REGISTER x SIP/2.0\r\nVia: SIP/2.0/TCP 127.0.0.1:4000\r\n\r\n\r\nINVITE sip:b SIP/2.0\r\nVia: SIP/2.0/TCP 127.0.0.1:4000\r\n\r\n"},
		{"none", "INVITE x SIP/2.0\r\nTo: a\r\n\r\nVia: SIP/2.0/UDP h\r\n", "INVITE x SIP/2.0\r\nTo: a\r\n\r\nVia: SIP/2.0/UDP h\r\n"},
		{"folded value kept", "INVITE x SIP/2.0\r\nSubject: a\r\n Via: SIP/2.0/UDP h\r\n\r\n", "INVITE x SIP/2.0\r\nSubject: a\r\n Via: SIP/2.0/UDP h\r\n\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(rewriteVia([]byte(tc.in), "tcp", from)); got != tc.want {
				t.Errorf("got\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

// readCorpus reads sip/testdata/<name>.dat.
func readCorpus(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".dat"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fate is what becomes of one corpus file sent to the running server on
// one transport. Exactly one of the kinds holds: answered with code,
// answered by sipgo's transaction layer before our handler (stateless,
// always 400), dropped with a Stats counter grown, dropped by sipgo's
// parser (parse; on TCP the connection is then closed), left waiting for
// more bytes (partial, TCP), or answered but never sent (unsent).
type fate struct {
	code      int    // our final response; 0 for none
	calls     int64  // INVITEs that reached Application.Invite (Admit)
	stateless bool   // sipgo's own 400: no handler, no counter of ours
	counter   string // a Stats key that grows (a counted drop)
	parse     bool   // sipgo's parser refused it ("failed to parse")
	partial   bool   // TCP: the parser waits for the rest
	unsent    bool   // counted as answered, nothing arrived
	closes    bool   // TCP: the server closes the connection (implied by parse)
	why       string
}

var (
	parseDrop = fate{parse: true}
	partial   = fate{partial: true, why: "the stream parser waits for more; nothing counts it"}
	stray     = fate{counter: "drops_stray-response", why: "a response without a transaction"}
	call      = fate{code: 200, calls: 1}
)

func answered(code int) fate  { return fate{code: code} }
func dropped(key string) fate { return fate{counter: key} }

// hostileRow is a file's fate over UDP and over TCP (tcp nil: the same).
type hostileRow struct {
	udp fate
	tcp *fate
}

func same(f fate) hostileRow         { return hostileRow{udp: f} }
func split(udp, tcp fate) hostileRow { return hostileRow{udp: udp, tcp: &tcp} }
func (r hostileRow) on(n string) fate {
	if n == "tcp" && r.tcp != nil {
		return *r.tcp
	}
	return r.udp
}

// Known defects of code this file does not own are rows marked "bug:";
// they pin what happens today (the report of this test names them).
var sipgo400 = fate{stateless: true, code: 400, why: "sipgo's transaction layer cannot key it and answers 400 itself, uncounted, before any check"}

// serverTable is the server-level outcome of sip/testdata/torture (the
// expectations of sip/validate's tortureTable, through sipgo's
// transport and transaction layers and our handlers) and of
// sip/testdata/malformed (validate's malformedCorpus).
var serverTable = map[string]hostileRow{
	"torture/valid/dblreq":  split(answered(405), fate{parse: true, why: "the CRLF after the INVITE fails the stream; sipgo closes it, the REGISTER's 405 racing the close"}),
	"torture/valid/esc01":   same(call),
	"torture/valid/esc02":   same(answered(501)),
	"torture/valid/escnull": same(answered(405)),
	"torture/valid/intmeth": same(answered(501)),
	// Each answer echoes 34 Vias, about 2 KiB: sipgo's UDP write bound
	// (1300 bytes) dropped them silently until sip/signal lifted it.
	"torture/valid/longreq":    same(call),
	"torture/valid/lwsdisp":    same(answered(200)),
	"torture/valid/mpart01":    same(answered(405)),
	"torture/valid/noreason":   same(stray),
	"torture/valid/semiuri":    same(answered(200)),
	"torture/valid/transports": same(answered(200)),
	"torture/valid/unreason":   same(stray),
	"torture/valid/wsinv":      same(fate{stateless: true, code: 400, why: "bug (sipgo): no RFC 3261 branch, and sipgo reads no From tag in \"tag = 98asjd8\": its stateless 400"}),

	"torture/invalid/badaspec":   same(parseDrop),
	"torture/invalid/badbranch":  same(answered(400)),
	"torture/invalid/baddate":    same(call),
	"torture/invalid/baddn":      split(parseDrop, partial),
	"torture/invalid/badinv01":   same(parseDrop),
	"torture/invalid/badvers":    same(answered(505)),
	"torture/invalid/bcast":      same(stray),
	"torture/invalid/bext01":     same(answered(420)),
	"torture/invalid/bigcode":    same(parseDrop),
	"torture/invalid/clerr":      split(parseDrop, partial),
	"torture/invalid/cparam01":   same(answered(405)),
	"torture/invalid/cparam02":   same(answered(405)),
	"torture/invalid/escruri":    same(answered(400)),
	"torture/invalid/insuf":      same(dropped("drops_invalid-missing_call_id")),
	"torture/invalid/inv2543":    split(sipgo400, parseDrop),
	"torture/invalid/invut":      same(answered(415)),
	"torture/invalid/ltgtruri":   same(parseDrop),
	"torture/invalid/lwsruri":    same(parseDrop),
	"torture/invalid/lwsstart":   same(parseDrop),
	"torture/invalid/mcl01":      split(answered(400), fate{parse: true, why: "the body's rest fails the stream; closed before the 400 leaves"}),
	"torture/invalid/mismatch01": same(answered(400)),
	"torture/invalid/mismatch02": same(answered(400)),
	"torture/invalid/multi01":    same(answered(400)),
	"torture/invalid/ncl":        same(parseDrop),
	"torture/invalid/novelsc":    same(parseDrop),
	"torture/invalid/quotbal":    same(parseDrop),
	"torture/invalid/regaut01":   same(answered(405)),
	"torture/invalid/regbadct":   same(answered(405)),
	"torture/invalid/regescrt":   same(answered(405)),
	"torture/invalid/scalar02":   same(parseDrop),
	"torture/invalid/scalarlg":   same(parseDrop),
	"torture/invalid/sdp01":      same(answered(406)),
	"torture/invalid/test":       same(parseDrop),
	"torture/invalid/trws":       same(parseDrop),
	"torture/invalid/unkscm":     same(answered(416)),
	"torture/invalid/unksm2":     same(answered(400)),
	"torture/invalid/zeromf":     same(answered(200)),

	"malformed/missing-via":            same(fate{stateless: true, code: 400, why: "sipgo answers before validate's drop, with no Via, to the source"}),
	"malformed/missing-from":           same(answered(400)),
	"malformed/missing-to":             same(answered(400)),
	"malformed/missing-call-id":        same(dropped("drops_invalid-missing_call_id")),
	"malformed/missing-cseq":           same(sipgo400),
	"malformed/missing-max-forwards":   same(answered(400)),
	"malformed/missing-content-length": split(answered(200), parseDrop),
	"malformed/injection-lf":           same(answered(400)),
	"malformed/injection-lf-from-tag":  same(answered(400)),
	"malformed/injection-cr":           same(parseDrop),
	"malformed/injection-nul":          same(answered(400)),
	// A datagram carries at most 65507 bytes: the UDP rows send that
	// much of the file (sipgo reads 32 KiB of it).
	"malformed/vias-10000":            split(dropped("drops_udp-oversize"), fate{parse: true, why: "above sipgo's 65535-byte bound: the connection is closed"}),
	"malformed/vias-3000-folded":      split(dropped("drops_udp-oversize"), dropped("drops_invalid-too_many_headers")),
	"malformed/size-70k":              split(dropped("drops_udp-oversize"), fate{parse: true, why: "above sipgo's 65535-byte bound: the connection is closed"}),
	"malformed/body-20k":              split(dropped("drops_udp-oversize"), answered(413)),
	"malformed/content-length-larger": split(parseDrop, partial),
	"malformed/options-body":          same(answered(415)),
	"malformed/max-forwards-zero":     same(answered(483)),
	"malformed/require-100rel":        same(answered(420)),
	"malformed/version-1":             same(answered(505)),
	"malformed/garbage-binary":        same(parseDrop),
	"malformed/garbage-after-invite":  same(parseDrop),
}

// TestServerTableCoversCorpora: the table names every corpus file.
func TestServerTableCoversCorpora(t *testing.T) {
	files, err := filepath.Glob("testdata/*/*/*.dat")
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob("testdata/malformed/*.dat")
	seen := map[string]bool{}
	for _, f := range append(files, more...) {
		name := strings.TrimSuffix(strings.TrimPrefix(f, "testdata/"), ".dat")
		seen[name] = true
		if _, ok := serverTable[name]; !ok {
			t.Errorf("%s has no row", name)
		}
	}
	for name := range serverTable {
		if !seen[name] {
			t.Errorf("row %s has no file", name)
		}
	}
}

// TestHostileCorpora sends every torture and malformed file, alone, over
// UDP and over TCP, to a running server (real loopback sockets), and
// holds each to its row: the code (an answered INVITE is ACKed and then
// ended with a BYE), the drop counter, the parser's refusal. After each,
// an OPTIONS probe is answered 200 and no other answer to the file came.
// No INVITE that fails a check ever reaches Application.Invite (Admit
// counts them), nothing panicked, and no call, goroutine or socket is
// left.
// Mutations caught (each seen failing): validate.Check skipped in
// signal.serveRequest (insuf and missing-call-id reach Admit and are
// answered; every 4xx row fails); the read filter's UDP bound removed
// (the 65507-byte datagrams are parsed: no udp-oversize).
func TestHostileCorpora(t *testing.T) {
	h := newHostile(t, func(c *sip.Config) {
		// One source sends the whole corpus: the flood limit is not what
		// this test is about.
		c.Trunk.Rate, c.Trunk.Burst = 100000, 100000
	})
	names := make([]string, 0, len(serverTable))
	for name := range serverTable {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, network := range []string{"udp", "tcp"} {
		for _, name := range names {
			t.Run(network+"/"+name, func(t *testing.T) { h.hold(t, network, name, serverTable[name].on(network)) })
		}
	}
	st := h.srv.Stats()
	if st["panics"] != 0 || st["calls_live"] != 0 {
		t.Errorf("panics %d, calls live %d", st["panics"], st["calls_live"])
	}
}

// hold sends one file on network and holds the server to want.
func (h *hostile) hold(t *testing.T, network, name string, want fate) {
	p := dial(t, network, netip.MustParseAddr("127.0.0.1"), h.addr(network))
	before := h.srv.Stats()
	parse, admitted := h.log.parse.Load(), h.admitted.Load()
	orig := readCorpus(t, name)
	data := rewriteVia(orig, network, p.local())
	if network == "udp" && len(data) > maxDatagram {
		data = data[:maxDatagram]
	}
	if err := p.send(data); err != nil {
		t.Fatal(err)
	}
	switch {
	case want.code != 0:
		res := p.response("", 5*time.Second)
		if res == nil {
			t.Fatalf("no answer; want %d", want.code)
		}
		if res.StatusCode != want.code {
			t.Fatalf("answered %d; want %d", res.StatusCode, want.code)
		}
		// A stateless answer has no transaction to ACK: sipgo would
		// answer the ACK 400 too.
		if !want.stateless && res.CSeq() != nil && res.CSeq().MethodName == sipmsg.INVITE {
			h.finish(t, p, orig, res)
		}
		if want.stateless {
			// Not one of ours: no response of ours was counted.
			for k, v := range h.srv.Stats() {
				if strings.HasPrefix(k, "responses_") && v != before[k] {
					t.Errorf("%s counted: the 400 was ours", k)
				}
			}
		}
	case want.unsent:
		waitFor(t, "the 200 counted", func() bool { return h.stat("responses_INVITE_200") > before["responses_INVITE_200"] })
		if res := p.response("", time.Second); res != nil {
			t.Fatalf("answered %d; the row says nothing arrives", res.StatusCode)
		}
	case want.partial:
		if m := p.next(500 * time.Millisecond); m != nil || p.eof {
			t.Fatalf("got %v (closed %v); want the connection open and silent", m, p.eof)
		}
	}
	if want.counter != "" {
		waitFor(t, want.counter, func() bool { return h.stat(want.counter) > before[want.counter] })
	}
	if want.parse {
		waitFor(t, "failed to parse", func() bool { return h.log.parse.Load() > parse })
	}
	if !want.parse && h.log.parse.Load() != parse {
		t.Errorf("sipgo's parser refused it; the row says it parses")
	}
	if got := h.admitted.Load() - admitted; got != want.calls {
		t.Errorf("%d INVITEs reached the application; want %d", got, want.calls)
	}
	// Alive, and nothing else answered the file. On TCP the probe goes
	// on the same connection first: it is answered, or the server has
	// closed the connection, which the row must say (a parser's refusal
	// or a stream drop closes it).
	if network == "tcp" && !want.partial {
		// When the parser fails the stream, what sipgo had parsed of the
		// chunk before may be answered or not: its answers race the
		// close.
		if closed := h.probeOrClosed(t, p, want.parse); closed != (want.parse || want.closes) {
			t.Fatalf("the server closed the connection: %v; the row says %v", closed, want.parse || want.closes)
		}
	}
	if p.eof || want.partial || network == "tcp" {
		p = dial(t, network, netip.MustParseAddr("127.0.0.1"), h.addr(network))
	}
	h.probe(t, p)
}

// probeOrClosed sends a probe on p: false when it is answered, true when
// the server closed the connection instead.
// With racing set, answers to the file before the close are let pass.
func (h *hostile) probeOrClosed(t *testing.T, p *peer, racing bool) bool {
	t.Helper()
	id := fmt.Sprintf("probe-%d", h.probes.Add(1))
	if p.send([]byte(request(p, "OPTIONS", "sip:bot@"+h.addr(p.network).String(), id, 1,
		"From: <sip:probe@127.0.0.1>;tag=p", "To: <sip:bot@127.0.0.1>"))) != nil {
		return true
	}
	for {
		res := p.response("", 5*time.Second)
		switch {
		case res == nil && p.eof:
			return true
		case res == nil:
			t.Fatalf("the probe got no answer and the connection is open")
		case res.CallID() == nil || res.CallID().Value() != id:
			if racing {
				continue
			}
			t.Fatalf("an answer %d to the file came after the row's outcome", res.StatusCode)
		}
		return false
	}
}

// maxDatagram is the largest UDP payload over IPv4.
const maxDatagram = 65507

// waitFor polls cond for up to 5 s (a bound on a real socket's delivery,
// not a timing assertion).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("%s: not within 5 s", what)
}

// settleSipgo waits (up to 5 s) until no message read from a socket is
// still being handled by sipgo. Its transaction layer handles each
// message on a goroutine of its own that nobody waits for; one still
// running when the server closes (an ACK read just before) makes a new
// server transaction and answers on a connection it opens after the
// transport closed, left open for good: the leak check's goroutine and
// file descriptor (CI on ccc43c7, TestAdmissionReleasedOnEveryPath/488
// under -race, 2 of 25 runs here). A server's Close cannot wait for
// those goroutines; the tests do, so they check what the server owns.
func settleSipgo(t *testing.T) {
	t.Helper()
	buf := make([]byte, 1<<20)
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		n := runtime.Stack(buf, true)
		st := buf[:n]
		if !bytes.Contains(st, []byte("(*TransactionLayer).handleRequestBackground")) && !bytes.Contains(st, []byte("(*TransactionLayer).handleResponseBackground")) {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("sipgo still handles a message after 5 s")
		}
	}
}

// probe sends an OPTIONS on p and wants its 200 as the next final
// response.
func (h *hostile) probe(t *testing.T, p *peer) {
	t.Helper()
	id := fmt.Sprintf("probe-%d", h.probes.Add(1))
	if err := p.send([]byte(request(p, "OPTIONS", "sip:bot@"+h.addr(p.network).String(), id, 1,
		"From: <sip:probe@127.0.0.1>;tag=p", "To: <sip:bot@127.0.0.1>"))); err != nil {
		t.Fatal(err)
	}
	res := p.response("", 5*time.Second)
	switch {
	case res == nil:
		t.Fatalf("the probe got no answer: the server is down")
	case res.CallID() == nil || res.CallID().Value() != id:
		t.Fatalf("an answer %d to the file came after the row's outcome", res.StatusCode)
	case res.StatusCode != 200:
		t.Fatalf("the probe was answered %d", res.StatusCode)
	}
}

// request is a request from p with a fresh branch; hs are From, To and
// any others.
func request(p *peer, method, uri, callID string, cseq int, hs ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s SIP/2.0\r\n", method, uri)
	fmt.Fprintf(&b, "Via: SIP/2.0/%s %s;branch=z9hG4bK-%s-%d-%s\r\n", strings.ToUpper(p.network), p.local(), callID, cseq, method)
	for _, h := range hs {
		b.WriteString(h + "\r\n")
	}
	fmt.Fprintf(&b, "Call-ID: %s\r\nCSeq: %d %s\r\nMax-Forwards: 70\r\nContent-Length: 0\r\n\r\n", callID, cseq, method)
	return b.String()
}

// finish ends an INVITE transaction: a non-2xx is ACKed in its
// transaction; a 200 is ACKed, the call taken from OnCall, a BYE sent
// and answered, the call closed.
func (h *hostile) finish(t *testing.T, p *peer, orig []byte, res *sipmsg.Response) {
	t.Helper()
	if res.StatusCode >= 300 {
		// sipgo matches it to the transaction by the Via branch: copy what
		// the answer has (a file may lack From, To or Call-ID).
		m, err := sipmsg.ParseMessage(orig)
		if err != nil || res.Via() == nil {
			return
		}
		var b strings.Builder
		fmt.Fprintf(&b, "ACK %s SIP/2.0\r\nVia: %s\r\n", m.(*sipmsg.Request).Recipient.String(), res.Via().Value())
		for _, hd := range []sipmsg.Header{res.From(), res.To(), res.CallID()} {
			if !reflect.ValueOf(hd).IsNil() {
				b.WriteString(hd.Name() + ": " + hd.Value() + "\r\n")
			}
		}
		fmt.Fprintf(&b, "CSeq: %d ACK\r\nMax-Forwards: 70\r\nContent-Length: 0\r\n\r\n", res.CSeq().SeqNo)
		if p.send([]byte(b.String())) == nil && p.network == "udp" {
			// The probe's answer shows the server has read the ACK
			// (one socket, one reader, in order), so its handling has
			// begun before the test's end closes the server: see
			// settleSipgo.
			h.probe(t, p)
		}
		return
	}
	id, seq := res.CallID().Value(), int(res.CSeq().SeqNo)
	from, to := "From: "+res.From().Value(), "To: "+res.To().Value()
	target := "sip:bot@" + h.addr(p.network).String()
	if err := p.send([]byte(request(p, "ACK", target, id, seq, from, to))); err != nil {
		t.Fatal(err)
	}
	var c *sip.Call
	select {
	case c = <-h.calls:
	case <-time.After(5 * time.Second):
		t.Fatal("the ACKed call did not reach OnCall")
	}
	if err := p.send([]byte(request(p, "BYE", target, id, seq+1, from, to))); err != nil {
		t.Fatal(err)
	}
	if bye := p.response(id, 5*time.Second); bye == nil || bye.StatusCode != 200 {
		t.Errorf("the BYE was answered %v", bye)
	}
	_ = c.Close()
}

// The digest user of the security tests; the password is checked never
// to reach the log.
const (
	authUser     = "alice"
	authPassword = "brisvox-secret"
)

// freePort is a UDP port free on addr now (for sipp's -p and -mp).
func freePort(t *testing.T, addr string) int {
	t.Helper()
	pc, err := net.ListenPacket("udp", addr+":0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	return pc.LocalAddr().(*net.UDPAddr).Port
}

// runSipp runs one sipp call from local against the server's UDP
// listener; it returns sipp's error and output.
func (h *hostile) runSipp(t *testing.T, local, scenario string, extra ...string) (string, error) {
	t.Helper()
	if _, err := exec.LookPath("sipp"); err != nil {
		t.Skip("sipp (sip-tester) is not installed: go tool task setup")
	}
	abs, err := filepath.Abs(scenario)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args := append([]string{"-sf", abs, "-m", "1", "-timeout", "40s", "-timeout_error", "-nostdin",
		"-i", local, "-mi", local, "-p", strconv.Itoa(freePort(t, local)), "-mp", strconv.Itoa(freePort(t, local))}, extra...)
	cmd := exec.CommandContext(ctx, "sipp", append(args, h.udp.String())...)
	cmd.Dir = t.TempDir()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	return out.String(), err
}

// offerSDP is a PCMU offer from 127.0.0.1.
const offerSDP = "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 40000 RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n"

// invite is an INVITE from p to the server with an SDP offer; extra are
// more header lines (Authorization).
func (h *hostile) invite(p *peer, callID string, cseq int, extra ...string) []byte {
	var b strings.Builder
	uri := "sip:" + h.addr(p.network).String()
	fmt.Fprintf(&b, "INVITE %s SIP/2.0\r\n", uri)
	fmt.Fprintf(&b, "Via: SIP/2.0/%s %s;branch=z9hG4bK-%s-%d\r\n", strings.ToUpper(p.network), p.local(), callID, cseq)
	fmt.Fprintf(&b, "From: <sip:caller@%s>;tag=t-%s\r\nTo: <%s>\r\nCall-ID: %s\r\nCSeq: %d INVITE\r\n", p.local().Addr(), callID, uri, callID, cseq)
	fmt.Fprintf(&b, "Contact: <sip:caller@%s>\r\nMax-Forwards: 70\r\n", p.local())
	for _, l := range extra {
		b.WriteString(l + "\r\n")
	}
	fmt.Fprintf(&b, "Content-Type: application/sdp\r\nContent-Length: %d\r\n\r\n%s", len(offerSDP), offerSDP)
	return []byte(b.String())
}

// authorization answers a challenge (RFC 2617, qop=auth, nc 1) for an
// INVITE to uri.
func authorization(t *testing.T, challenge, user, password, uri string) string {
	t.Helper()
	param := func(name string) string {
		_, v, ok := strings.Cut(challenge, name+`="`)
		if !ok {
			t.Fatalf("challenge %q has no %s", challenge, name)
		}
		v, _, _ = strings.Cut(v, `"`)
		return v
	}
	md5hex := func(s string) string { sum := md5.Sum([]byte(s)); return hex.EncodeToString(sum[:]) }
	realm, nonce, opaque := param("realm"), param("nonce"), param("opaque")
	const cnonce, nc = "0a4f113b", "00000001"
	resp := md5hex(md5hex(user+":"+realm+":"+password) + ":" + nonce + ":" + nc + ":" + cnonce + ":auth:" + md5hex("INVITE:"+uri))
	return fmt.Sprintf(`Authorization: Digest username="%s", realm="%s", nonce="%s", uri="%s", response="%s", algorithm=MD5, cnonce="%s", opaque="%s", qop=auth, nc=%s`,
		user, realm, nonce, uri, resp, cnonce, opaque, nc)
}

// shape is a response without its values: the code, the header names in
// order and the WWW-Authenticate parameters (but the nonce's value).
func shape(res *sipmsg.Response) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s", res.StatusCode, res.Reason)
	for _, hd := range res.Headers() {
		b.WriteString(" " + strings.ToLower(hd.Name()))
		if strings.EqualFold(hd.Name(), "WWW-Authenticate") {
			for _, kv := range strings.Split(hd.Value(), ",") {
				kv = strings.TrimSpace(kv)
				if k, _, _ := strings.Cut(kv, "="); k == "Digest nonce" || k == "nonce" {
					kv = k
				}
				b.WriteString(" " + kv)
			}
		}
	}
	return b.String()
}

// challenged sends an INVITE (with extra lines) and returns its final
// answer, ACKed.
func (h *hostile) challenged(t *testing.T, p *peer, callID string, cseq int, extra ...string) *sipmsg.Response {
	t.Helper()
	msg := h.invite(p, callID, cseq, extra...)
	if err := p.send(msg); err != nil {
		t.Fatal(err)
	}
	res := p.response(callID, 5*time.Second)
	if res == nil {
		t.Fatalf("INVITE %s: no answer", callID)
	}
	h.finish(t, p, msg, res)
	return res
}

// TestHostileDigest: digest authentication with sipp and with a Go
// client. sipp's call through the challenge connects; a wrong password
// and an unknown user (from sipp and from Go) are challenged again,
// exactly like an INVITE with no credentials (same code, same headers,
// same challenge parameters; only the nonce differs); a right
// Authorization sent a second time is refused (single-use nonce);
// 10 000 INVITEs without credentials leave the table of pending
// challenges at its bound.
// Mutations caught (each seen failing): a nonce not consumed by Verify
// (the replay is answered 200); the pending table unbounded (nonces_held
// 10 000).
func TestHostileDigest(t *testing.T) {
	h := newHostile(t, func(c *sip.Config) {
		c.Trunk.Users = map[string]string{authUser: authPassword}
		c.Trunk.Rate, c.Trunk.Burst = 100000, 100000
	})
	t.Run("sipp", func(t *testing.T) {
		cases := []struct {
			name, scenario, user, password, counter string
		}{
			{"right", "testdata/hostile/auth.xml", authUser, authPassword, "trunk_auth_ok"},
			{"wrong password", "testdata/hostile/auth_refused.xml", authUser, "not-it", "trunk_auth_wrong_password"},
			{"unknown user", "testdata/hostile/auth_refused.xml", "mallory", authPassword, "trunk_auth_unknown_user"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				before := h.stat(tc.counter)
				out, err := h.runSipp(t, "127.0.0.2", tc.scenario, "-au", tc.user, "-ap", tc.password)
				if err != nil {
					t.Fatalf("sipp: %v\n%s", err, out)
				}
				if got := h.stat(tc.counter) - before; got != 1 {
					t.Errorf("%s grew by %d; want 1", tc.counter, got)
				}
			})
		}
		h.closeCalls()
	})
	t.Run("alike", func(t *testing.T) {
		p := dial(t, "udp", netip.MustParseAddr("127.0.0.2"), h.udp)
		uri := "sip:" + h.udp.String()
		none := h.challenged(t, p, "alike-none", 1)
		chal := none.GetHeader("WWW-Authenticate")
		if none.StatusCode != 401 || chal == nil {
			t.Fatalf("no credentials: %d, challenge %v", none.StatusCode, chal)
		}
		wrong := h.challenged(t, p, "alike-wrong", 1, authorization(t, chal.Value(), authUser, "not-it", uri))
		chal2 := h.challenged(t, p, "alike-none2", 1).GetHeader("WWW-Authenticate")
		unknown := h.challenged(t, p, "alike-unknown", 1, authorization(t, chal2.Value(), "mallory", authPassword, uri))
		t.Logf("the answer: %s", shape(none))
		if shape(wrong) != shape(none) || shape(unknown) != shape(none) {
			t.Errorf("answered unalike:\nnone    %s\nwrong   %s\nunknown %s", shape(none), shape(wrong), shape(unknown))
		}
	})
	t.Run("replay", func(t *testing.T) {
		p := dial(t, "udp", netip.MustParseAddr("127.0.0.2"), h.udp)
		uri := "sip:" + h.udp.String()
		chal := h.challenged(t, p, "replay-1", 1).GetHeader("WWW-Authenticate")
		authz := authorization(t, chal.Value(), authUser, authPassword, uri)
		if res := h.challenged(t, p, "replay-1", 2, authz); res.StatusCode != 200 {
			t.Fatalf("the right credentials were answered %d", res.StatusCode)
		}
		before := h.stat("trunk_auth_replayed_nonce")
		if res := h.challenged(t, p, "replay-2", 1, authz); res.StatusCode != 401 {
			t.Errorf("the replayed Authorization was answered %d; want 401", res.StatusCode)
		}
		if h.stat("trunk_auth_replayed_nonce") != before+1 {
			t.Errorf("the replay was not counted as one")
		}
	})
	t.Run("10000 call-ids", func(t *testing.T) {
		p := dial(t, "udp", netip.MustParseAddr("127.0.0.2"), h.udp)
		before := h.stat("trunk_challenges")
		for i := range 10000 {
			if res := h.challenged(t, p, fmt.Sprintf("flood-%d", i), 1); res.StatusCode != 401 {
				t.Fatalf("INVITE %d answered %d", i, res.StatusCode)
			}
		}
		st := h.srv.Stats()
		if got := st["trunk_challenges"] - before; got != 10000 {
			t.Errorf("%d challenges; want 10000", got)
		}
		if st["trunk_nonces_held"] != trunk.DefaultMaxPending {
			t.Errorf("%d nonces held; want the bound %d", st["trunk_nonces_held"], trunk.DefaultMaxPending)
		}
	})
}

// TestHostileAllowlist: with only 127.0.0.2/32 allowed, a source at
// 127.0.0.4 gets no answer to anything it sends over UDP or TCP, and the
// server keeps no state for it (no source in the trunk's table, no
// dialog, nothing reached the application); the same requests from
// 127.0.0.2 are answered (the control that the probe can see answers).
// Mutation caught (seen failing): the read filter's verdict ignored in
// sip.New (the outsider is answered: OPTIONS 200, INVITE 503).
func TestHostileAllowlist(t *testing.T) {
	h := newHostile(t, func(c *sip.Config) {
		c.Trunk.Allow = []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}
	})
	outsider := netip.MustParseAddr("127.0.0.4")
	for _, network := range []string{"udp", "tcp"} {
		p := dial(t, network, outsider, h.addr(network))
		for i := range 5 {
			_ = p.send(h.invite(p, fmt.Sprintf("outside-%s-%d", network, i), 1))
			_ = p.send([]byte(request(p, "OPTIONS", "sip:"+h.addr(network).String(), fmt.Sprintf("outside-o-%s-%d", network, i), 1,
				"From: <sip:x@127.0.0.4>;tag=o", "To: <sip:bot@127.0.0.1>")))
		}
		if m := p.next(time.Second); m != nil {
			t.Errorf("%s: the outsider got an answer (%T)", network, m)
		}
		p.close()
	}
	st := h.srv.Stats()
	if st["trunk_sources"] != 0 || st["trunk_dialogs_open"] != 0 || st["trunk_challenges"] != 0 || h.admitted.Load() != 0 {
		t.Errorf("state for the outsider: sources %d, dialogs %d, challenges %d, admitted %d",
			st["trunk_sources"], st["trunk_dialogs_open"], st["trunk_challenges"], h.admitted.Load())
	}
	if st["drops_not_allowed"] < 11 { // 10 datagrams, at least one TCP read
		t.Errorf("%d drops counted not_allowed", st["drops_not_allowed"])
	}
	for k, v := range st {
		if strings.HasPrefix(k, "responses_") && v != 0 {
			t.Errorf("%s = %d: something was answered", k, v)
		}
	}
	// The control: the allowed source is answered.
	h.probe(t, dial(t, "udp", netip.MustParseAddr("127.0.0.2"), h.udp))
	if got := h.stat("trunk_sources"); got != 1 {
		t.Errorf("%d sources after the allowed one's probe; want 1", got)
	}
}

// TestHostileSvmap: sipvicious' svmap (User-Agent friendly-scanner) run
// against the server finds nothing: its scan is dropped by the trunk
// filter, counted as a scanner.
// Mutation caught (seen failing): DefaultScanners without
// "friendly-scanner" (svmap lists the server).
func TestHostileSvmap(t *testing.T) {
	if _, err := exec.LookPath("svmap"); err != nil {
		t.Skip("svmap (sipvicious) is not installed: go tool task setup")
	}
	h := newHostile(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "svmap", "-b", "127.0.0.3", "-p", strconv.Itoa(int(h.udp.Port())), "127.0.0.1")
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("svmap: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("found nothing")) || bytes.Contains(out, []byte(h.udp.String())) {
		t.Errorf("svmap found the server:\n%s", out)
	}
	if h.stat("drops_scanner") == 0 {
		t.Errorf("no scanner drop counted: svmap never reached the server\n%s", out)
	}
	st := h.srv.Stats()
	for k, v := range st {
		if strings.HasPrefix(k, "responses_") && v != 0 {
			t.Errorf("%s = %d: svmap was answered", k, v)
		}
	}
}

// Bounds of the flood test, sampled every second while it runs.
const (
	floodFor        = 30 * time.Second
	floodMax        = 20_000_000 // sipsak -e: the count bound (about 40 s of sipsak here)
	floodGoroutines = 100        // runtime.NumGoroutine (15 measured)
	// floodHeap bounds HeapAlloc after a GC, the garbage the drop path
	// allocates during that collection included (1 to 14 MiB measured,
	// with the CPU shared). Eight bytes kept per flood packet would be
	// about 40 to 100 MiB here.
	floodHeap = 64 << 20
)

// TestHostileFlood (real time: about 30 s): sipsak floods the server
// with OPTIONS (-F, at most floodMax, killed after floodFor) while sipp
// places a call from 127.0.0.3 that connects and completes (exit 0)
// before the flood ends. sipsak cannot bind an address, and Linux sends
// from 127.0.0.1 to any 127/8 destination, so the flood's source is
// 127.0.0.1. The flooding source is blocked (one block, one source
// blocked now), goroutines and heap stay under the bounds above, and
// after the flood the server still answers.
// Mutation caught (seen failing): trunk's charge() never blocking (Pass
// for a source over its bucket): the call fails, sipp exits 1.
func TestHostileFlood(t *testing.T) {
	if raceEnabled {
		// Under -race the read loop is several times slower than sipsak's
		// flood: the socket's buffer stays full and the legitimate INVITE
		// is dropped by the kernel, every retransmission (a fresh clone's
		// CI saw it once). What this measures, keeping up with a flood, is
		// a real-time property: it runs in the suite without -race.
		t.Skip("a real-time flood test; it runs without the race detector")
	}
	for _, tool := range []string{"sipsak", "sipp"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: go tool task setup", tool)
		}
	}
	h := newHostile(t, nil)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	type sample struct {
		goroutines int
		heap       uint64
	}
	var samples []sample
	wg.Go(func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				// The live heap: what the flood makes the server keep, not
				// the garbage of the drop path between collections.
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				samples = append(samples, sample{runtime.NumGoroutine(), ms.HeapAlloc})
			}
		}
	})
	floodCtx, cancelFlood := context.WithTimeout(context.Background(), floodFor)
	defer cancelFlood()
	floodDone := make(chan struct{})
	var floodOut []byte
	var floodEnd time.Time
	wg.Go(func() {
		defer close(floodDone)
		cmd := exec.CommandContext(floodCtx, "sipsak", "-F", "-e", strconv.Itoa(floodMax), "-s", "sip:bot@"+h.udp.String())
		floodOut, _ = cmd.CombinedOutput() // killed at floodFor
		floodEnd = time.Now()
	})
	// The legitimate call, once the flood is on.
	time.Sleep(3 * time.Second)
	out, err := h.runSipp(t, "127.0.0.3", "testdata/hostile/uac.xml")
	callEnd := time.Now()
	<-floodDone
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("the call during the flood: %v\n%s", err, out)
	}
	if !callEnd.Before(floodEnd) {
		t.Errorf("the call ended after the flood; it must complete during it\n%s", floodOut)
	}
	st := h.srv.Stats()
	flood := st["trunk_drop_blocked"] + st["trunk_drop_rate_limited"]
	t.Logf("flood: %d dropped, %d passed; %d samples; sipsak: %s", flood, st["trunk_passed"], len(samples), bytes.TrimSpace(floodOut))
	if st["trunk_blocks"] < 1 || st["trunk_blocked_sources"] != 1 || flood < 10000 {
		t.Errorf("blocks %d, blocked now %d, dropped %d: the flood was not held", st["trunk_blocks"], st["trunk_blocked_sources"], flood)
	}
	if st["responses_OPTIONS_200"] > 100 {
		t.Errorf("%d OPTIONS answered during the flood", st["responses_OPTIONS_200"])
	}
	maxG, maxHeap := 0, uint64(0)
	for _, s := range samples {
		maxG, maxHeap = max(maxG, s.goroutines), max(maxHeap, s.heap)
	}
	t.Logf("max goroutines %d, max live heap %d KiB", maxG, maxHeap>>10)
	if len(samples) < int(floodFor/time.Second)-2 || maxG > floodGoroutines || maxHeap > floodHeap {
		t.Errorf("%d samples, max goroutines %d (bound %d), max heap %d KiB (bound %d KiB)", len(samples), maxG, floodGoroutines, maxHeap>>10, floodHeap>>10)
	}
	h.closeCalls()
	// Alive: the call's source is not blocked.
	h.probe(t, dial(t, "udp", netip.MustParseAddr("127.0.0.3"), h.udp))
}
