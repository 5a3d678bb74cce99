package sip

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"text/template"
	"time"

	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/sip/rtp"
	"github.com/brisvox/brisvox/sip/sdp"
	"github.com/brisvox/brisvox/sip/signal"
	"github.com/brisvox/brisvox/sip/trunk"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"
)

// TestTrunkModes: how a call's keys go out for each trunk DTMF mode and
// whether the far end negotiated telephone-event. Mutations caught (seen
// failing): rfc4733 without telephone-event falling back to INFO (the
// trunk said events only: the error row gets "info"); info sending events
// when negotiated (the row "info with events" gets "rfc4733").
func TestTrunkModes(t *testing.T) {
	tests := []struct {
		name    string
		mode    string
		events  bool
		want    string
		wantErr error
	}{
		{"auto with events", DTMFAuto, true, dtmfEvents, nil},
		{"auto without events", DTMFAuto, false, dtmfINFO, nil},
		{"unset is auto", "", true, dtmfEvents, nil},
		{"rfc4733 with events", DTMFRFC4733, true, dtmfEvents, nil},
		{"rfc4733 without events", DTMFRFC4733, false, "", conn.ErrNotSupported},
		{"info with events", DTMFInfo, true, dtmfINFO, nil},
		{"info without events", DTMFInfo, false, dtmfINFO, nil},
		{"unknown mode", "sms", true, "", ErrInvalidConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := dtmfWay(tt.mode, tt.events)
			if !errors.Is(err, tt.wantErr) || got != tt.want {
				t.Fatalf("dtmfWay(%q, %v) = %q, %v; want %q, %v", tt.mode, tt.events, got, err, tt.want, tt.wantErr)
			}
			if tt.wantErr == conn.ErrNotSupported && !errors.Is(err, rtp.ErrNoTelephoneEvent) {
				t.Errorf("%v does not wrap rtp.ErrNoTelephoneEvent", err)
			}
		})
	}
}

// TestDialWords: what the model reads of a second leg that was not
// answered. Catches a busy target reported as a plain failure.
func TestDialWords(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"busy", &signal.DialError{Outcome: signal.DialBusy, Code: 486}, "busy (486)"},
		{"not found", &signal.DialError{Outcome: signal.DialRejected, Code: 404}, "refused (404)"},
		{"ring timeout", &signal.DialError{Outcome: signal.DialNoAnswer}, "no answer (ring timeout)"},
		{"no response", &signal.DialError{Outcome: signal.DialTransport}, "no response from the trunk"},
		{"bad answer", fmt.Errorf("%w: no codec", signal.ErrBadAnswer), "the target answered with a codec the call cannot use"},
		{"limited", fmt.Errorf("%w: max_calls", ErrDialLimited), "the trunk's call limit is reached"},
		{"not a number", fmt.Errorf("%w: user part", ErrInvalidDial), "the target cannot be dialled through the trunk"},
		{"other", errors.New("x"), "the second call failed"},
	}
	for _, tt := range tests {
		if got := dialWords(tt.err); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// fakeEnd is a bridged leg that counts its bridge's endBridged.
type fakeEnd struct {
	mu   sync.Mutex
	ends int
}

func (f *fakeEnd) endBridged() { f.mu.Lock(); f.ends++; f.mu.Unlock() }
func (f *fakeEnd) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ends
}

// fakeRelay is a relay whose end the test decides (a leg's session
// ending ends the real one).
type fakeRelay struct {
	once sync.Once
	done chan struct{}
}

func (r *fakeRelay) Stop()                 { r.once.Do(func() { close(r.done) }) }
func (r *fakeRelay) Done() <-chan struct{} { return r.done }

func newFakeBridge() (*bridged, *fakeEnd, *fakeEnd, *fakeRelay) {
	a, b, r := &fakeEnd{}, &fakeEnd{}, &fakeRelay{done: make(chan struct{})}
	return &bridged{a: a, b: b, relay: r, stop: make(chan struct{})}, a, b, r
}

// TestBridgedEnds: the state of a bridged transfer. Either leg's end (its
// session ended: the relay's Done) hangs up and closes both, once; the
// server's close ends every bridge, waits for them and refuses new ones;
// nothing ends a bridge but those. Mutations caught (seen failing): end
// leaving out the second leg's endBridged (its call stays open: ended
// 0); close not waiting for the bridges (ended 0 right after close); a
// start after close taken (a bridge nobody ends: the bubble deadlocks).
func TestBridgedEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var set bridgeSet
		b1, a1, l1, r1 := newFakeBridge()
		b2, a2, l2, _ := newFakeBridge()
		if !set.start(b1) || !set.start(b2) {
			t.Fatal("a start refused")
		}
		synctest.Wait()
		for _, f := range []*fakeEnd{a1, l1, a2, l2} {
			if n := f.count(); n != 0 {
				t.Fatalf("a leg ended (%d) while its bridge runs", n)
			}
		}
		if set.len() != 2 {
			t.Fatalf("%d bridges live, want 2", set.len())
		}
		// The first bridge's caller hangs up: its session ends, so does
		// the relay.
		r1.Stop()
		synctest.Wait()
		for _, f := range []*fakeEnd{a1, l1} {
			if n := f.count(); n != 1 {
				t.Errorf("after a leg's end: a leg ended %d times, want 1", n)
			}
		}
		if set.len() != 1 {
			t.Errorf("%d bridges live after one ended, want 1", set.len())
		}
		set.close()
		for _, f := range []*fakeEnd{a2, l2} {
			if n := f.count(); n != 1 {
				t.Errorf("after the server's close: a leg ended %d times, want 1", n)
			}
		}
		if b3, _, _, _ := newFakeBridge(); set.start(b3) {
			t.Error("a bridge started after close")
		}
		if set.len() != 0 {
			t.Errorf("%d bridges live after close", set.len())
		}
		set.close() // twice is harmless
	})
}

// TestTransferTrunk: which trunk's transfer mode a call follows. Catches
// a call we placed following Config.TransferTrunk instead of its own
// trunk (it would bridge through a trunk it never used).
func TestTransferTrunk(t *testing.T) {
	trunks := map[string]TrunkConfig{
		"pbx":     {Transfer: TransferBridge},
		"carrier": {Transfer: TransferRefer},
	}
	tests := []struct {
		name   string
		call   *Call
		config string // Config.TransferTrunk
		want   string
		ok     bool
	}{
		{"came in, none set", &Call{}, "", "", false},
		{"came in, a transfer trunk", &Call{}, "pbx", "pbx", true},
		{"placed, its own trunk", &Call{outbound: true, trunkName: "carrier", trunkCfg: trunks["carrier"]}, "pbx", "carrier", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.call.srv = &Server{cfg: Config{Trunks: trunks, TransferTrunk: tt.config}}
			name, cfg, ok := tt.call.transferTrunk()
			if name != tt.want || ok != tt.ok || (ok && cfg.Transfer != trunks[tt.want].Transfer) {
				t.Errorf("transferTrunk() = %q (transfer %q), %v; want %q, %v", name, cfg.Transfer, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestBaresipBridgedTransfer: the bridged transfer between two real
// softphones on loopback. baresip A (127.0.0.3, a 440 Hz tone as its
// microphone, PCMU only) calls us; the agent hears it. In the first row,
// a transfer to a number the target refuses (baresip B answers 404 for a
// user it does not have) fails with conn.ErrTransferFailed "refused
// (404)" and the call goes on with its agent. A transfer to B's user
// (127.0.0.4, auto answer, a 1000 Hz tone, G.722 and PCMU) dials the
// second leg through the trunk (transfer = "bridge",
// Config.TransferTrunk) offering PCMU alone, bridges it, and the agent's
// ReadFrame ends; the serve layer's Hangup and Close at the session's
// end do not hang up. Then the call ends by the row's way (A hangs up, B
// hangs up, or the server closes) and each phone still up gets our BYE.
// Each phone's recording of what it heard holds the other's tone and not
// its own. Mutations caught (seen failing): Close or Hangup hanging up a
// bridged call (no packet relayed); the leg offered every codec of ours
// (B picks G.722: the transfer fails); ReadFrame going on once bridged
// (it does not end); the bridge not ending the other leg (no BYE).
func TestBaresipBridgedTransfer(t *testing.T) {
	if testing.Short() {
		t.Skip("real sockets and baresip")
	}
	needProgram(t, "baresip")
	tests := []struct {
		name       string
		end        string // who ends the bridged call: caller, target, server
		failsFirst bool   // a transfer the target refuses first
	}{
		{"caller hangs up", "caller", true},
		{"target hangs up", "target", false},
		{"server closes", "server", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { bridgedTransfer(t, tt.end, tt.failsFirst) })
	}
}

func bridgedTransfer(t *testing.T, end string, failsFirst bool) {
	before := goleak.IgnoreCurrent()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	callerTone, targetTone := filepath.Join(dir, "a.wav"), filepath.Join(dir, "b.wav")
	writeTone(t, callerTone, 440, 30*time.Second)
	writeTone(t, targetTone, 1000, 30*time.Second)

	target := startBaresip(ctx, t, phoneConf{IP: "127.0.0.4", RTPPorts: "34600-34699", Source: targetTone, User: "2000", AutoAnswer: true,
		Codecs: "G722/16000/1,PCMU/8000/1"})
	calls := make(chan *Call, 2)
	srv, err := New(Config{
		Signal: signal.Config{Listen: []signal.Listen{{Network: "udp", Addr: "127.0.0.1:0"}}},
		Trunk:  trunk.Config{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}},
		Ports:  rtp.PortsConfig{Addr: netip.MustParseAddr("127.0.0.1"), Min: 34400, Max: 34499},
		// baresip sends its RTP from 127.0.0.1 whatever its SDP says.
		SymmetricRTP: true,
		Admit:        func() (conn.Admission, error) { return noSlot{}, nil },
		OnCall:       func(c *Call) { calls <- c },
		Trunks: map[string]TrunkConfig{"pbx": {
			Address: "127.0.0.4:" + strconv.Itoa(target.conf.Port), From: "+15550100", Transfer: TransferBridge,
		}},
		TransferTrunk: "pbx",
		Log:           zerolog.Nop(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			srv.Close()
		}
	}()
	caller := startBaresip(ctx, t, phoneConf{IP: "127.0.0.3", RTPPorts: "34500-34599", Source: callerTone, User: "caller", Codecs: "PCMU/8000/1"})
	caller.send("/dial sip:bot@" + srv.Addrs()[0].Addr.String())
	var c *Call
	select {
	case c = <-calls:
	case <-time.After(15 * time.Second):
		t.Fatalf("no call from baresip\n%s", caller.output())
	}

	// The agent: reads the caller until its ReadFrame ends.
	var heard, loud atomic.Int64
	readErr := make(chan error, 1)
	go func() {
		f := messages.NewPooledFrame(c.InputRate(), nil)
		for {
			if err := c.ReadFrame(ctx, f); err != nil {
				readErr <- err
				return
			}
			heard.Add(1)
			if toneAmplitude(f.PCM, c.InputRate(), 440) > 2000 {
				loud.Add(1)
			}
		}
	}()
	waitUntil(t, 10*time.Second, "the agent hears the caller's tone", func() bool { return loud.Load() >= 25 })

	failures := uint64(0)
	if failsFirst {
		err = c.Transfer(ctx, "2999")
		if !errors.Is(err, conn.ErrTransferFailed) || !strings.Contains(err.Error(), "refused (404)") {
			t.Fatalf("transfer to a number the target refuses: %v, want conn.ErrTransferFailed refused (404)", err)
		}
		failures = 1
		// The call goes on with its agent.
		n := heard.Load()
		waitUntil(t, 5*time.Second, "the agent still hears the caller after the failed transfer", func() bool { return heard.Load() >= n+25 })
		if c.bridged.Load() || srv.Stats()["bridges_live"] != 0 {
			t.Fatal("the failed transfer left the call bridged")
		}
	}

	if err := c.Transfer(ctx, "2000"); err != nil {
		t.Fatalf("bridged transfer: %v\n%s", err, strings.ReplaceAll(target.output(), "\r", "\n"))
	}
	select {
	case err := <-readErr:
		if !errors.Is(err, conn.ErrClosed) {
			t.Errorf("the agent's ReadFrame ended with %v, want conn.ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the agent's ReadFrame did not end after the bridged transfer")
	}
	// What the serve layer does at the session's end: no BYE may follow.
	c.Hangup(conn.EndNormal, "transferred")
	_ = c.Close()
	if st := srv.Stats(); st["bridges_live"] != 1 || st["bridges"] != 1 || st["bridge_failures"] != failures {
		t.Errorf("stats after the transfer: bridges_live %d, bridges %d, bridge_failures %d; want 1, 1, %d",
			st["bridges_live"], st["bridges"], st["bridge_failures"], failures)
	}
	// Three seconds of relayed audio each way.
	in := c.sess.Stats().PacketsIn
	waitUntil(t, 10*time.Second, "150 packets relayed each way", func() bool {
		st := c.sess.Stats()
		return st.Relayed >= 150 && st.PacketsIn >= in+150
	})
	for _, p := range []*baresip{caller, target} {
		if strings.Contains(p.output(), "session closed") {
			t.Fatalf("a phone was hung up while bridged\n%s", p.output())
		}
	}
	switch end {
	case "caller":
		caller.send("/hangup")
		if !target.waitFor("session closed", 10*time.Second) {
			t.Fatalf("the target got no BYE after the caller hung up\n%s", target.output())
		}
	case "target":
		target.send("/hangup")
		if !caller.waitFor("session closed", 10*time.Second) {
			t.Fatalf("the caller got no BYE after the target hung up\n%s", caller.output())
		}
	case "server":
		srv.Close()
		closed = true
		// Close waits for its bridges (only TestBridgedEnds catches that
		// wait left out: the signalling's own BYEs end them quickly too).
		if n := srv.Stats()["bridges_live"]; n != 0 {
			t.Errorf("%d bridges live after the server's Close", n)
		}
		for _, p := range []*baresip{caller, target} {
			if !p.waitFor("session closed", 10*time.Second) {
				t.Fatalf("a phone got no BYE when the server closed\n%s", p.output())
			}
		}
	}
	waitUntil(t, 5*time.Second, "the bridge and both calls gone", func() bool {
		return srv.Stats()["bridges_live"] == 0 && len(srv.Calls()) == 0
	})
	caller.quit()
	target.quit()
	if !closed {
		srv.Close()
		closed = true
	}

	// What each phone heard: the other's tone, not its own.
	for _, p := range []struct {
		name       string
		phone      *baresip
		want, echo float64
	}{{"caller", caller, 1000, 440}, {"target", target, 440, 1000}} {
		pcm, rate := readRecording(t, p.phone.dir)
		wanted, own := toneWindows(pcm, rate, p.want), toneWindows(pcm, rate, p.echo)
		t.Logf("%s heard %d windows of %v Hz, %d of its own %v Hz", p.name, wanted, p.want, own, p.echo)
		if wanted < 40 || own > 5 {
			t.Errorf("%s: %d windows of 50 ms with the other's %v Hz (want 40 or more), %d with its own %v Hz (want 5 at most)",
				p.name, wanted, p.want, own, p.echo)
		}
	}
	goleak.VerifyNone(t, before)
}

// waitUntil polls cond (real time: a loopback test) until it holds or d passed.
func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(d)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// phoneConf fills testdata/baresip's config and accounts.
type phoneConf struct {
	IP, RTPPorts, Source, Dir, User string
	// Codecs is the account's audio_codecs.
	Codecs     string
	Port       int
	AutoAnswer bool
}

// baresip is one headless softphone: commands on its stdin, its output
// kept.
type baresip struct {
	t    *testing.T
	conf phoneConf
	dir  string
	in   io.WriteCloser
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{}
}

func (b *baresip) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.out.Write(p)
}

func (b *baresip) output() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.out.String()
}

func startBaresip(ctx context.Context, t *testing.T, conf phoneConf) *baresip {
	t.Helper()
	conf.Dir = t.TempDir()
	conf.Port = freeUDPPort(t, conf.IP)
	for _, name := range []string{"config", "accounts"} {
		tmpl, err := template.ParseFiles(filepath.Join("testdata", "baresip", name))
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(filepath.Join(conf.Dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := tmpl.Execute(f, conf); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	b := &baresip{t: t, conf: conf, dir: conf.Dir, done: make(chan struct{})}
	// -t: it quits by itself if the test forgets it.
	b.cmd = exec.CommandContext(ctx, "baresip", "-f", conf.Dir, "-t", "90")
	b.cmd.Dir = conf.Dir
	b.cmd.Stdout, b.cmd.Stderr = b, b
	in, err := b.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	b.in = in
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { defer close(b.done); _ = b.cmd.Wait() }()
	t.Cleanup(b.quit)
	if !b.waitFor("baresip is ready", 10*time.Second) {
		t.Fatalf("baresip did not start\n%s", b.output())
	}
	return b
}

func (b *baresip) send(line string) { _, _ = io.WriteString(b.in, line+"\n") }

// waitFor polls the output for s.
func (b *baresip) waitFor(s string, d time.Duration) bool {
	end := time.Now().Add(d)
	for !strings.Contains(b.output(), s) {
		if time.Now().After(end) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// quit asks baresip to quit and waits (killing it after 5 s).
func (b *baresip) quit() {
	select {
	case <-b.done:
		return
	default:
	}
	b.send("/quit")
	_ = b.in.Close()
	select {
	case <-b.done:
	case <-time.After(5 * time.Second):
		_ = b.cmd.Process.Kill()
		<-b.done
	}
}

// freeUDPPort is a UDP port free on ip now.
func freeUDPPort(t *testing.T, ip string) int {
	t.Helper()
	c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr(ip), 0)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

// writeTone writes a mono 16-bit 8 kHz WAV of a sine at f Hz.
func writeTone(t *testing.T, path string, f float64, d time.Duration) {
	t.Helper()
	const rate = 8000
	n := int(d.Seconds() * rate)
	b := make([]byte, 44+2*n)
	copy(b, "RIFF")
	binary.LittleEndian.PutUint32(b[4:], uint32(36+2*n))
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16)
	binary.LittleEndian.PutUint16(b[20:], 1) // PCM
	binary.LittleEndian.PutUint16(b[22:], 1) // mono
	binary.LittleEndian.PutUint32(b[24:], rate)
	binary.LittleEndian.PutUint32(b[28:], 2*rate)
	binary.LittleEndian.PutUint16(b[32:], 2)
	binary.LittleEndian.PutUint16(b[34:], 16)
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], uint32(2*n))
	for i := range n {
		v := int16(8000 * math.Sin(2*math.Pi*f*float64(i)/rate))
		binary.LittleEndian.PutUint16(b[44+2*i:], uint16(v))
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// readRecording reads what a phone heard: sndfile's decode dump in its
// directory (16-bit mono WAV).
func readRecording(t *testing.T, dir string) ([]int16, int) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "dump-*-dec.wav"))
	if len(files) != 1 {
		t.Fatalf("%d recordings of what the phone heard in %s, want 1", len(files), dir)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 12 || string(b[:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		t.Fatalf("%s is not a WAV file", files[0])
	}
	rate := 0
	for p := 12; p+8 <= len(b); {
		id, size := string(b[p:p+4]), int(binary.LittleEndian.Uint32(b[p+4:]))
		body := b[p+8 : min(len(b), p+8+size)]
		switch id {
		case "fmt ":
			if len(body) < 16 || binary.LittleEndian.Uint16(body[2:]) != 1 || binary.LittleEndian.Uint16(body[14:]) != 16 {
				t.Fatalf("%s is not 16-bit mono", files[0])
			}
			rate = int(binary.LittleEndian.Uint32(body[4:]))
		case "data":
			pcm := make([]int16, len(body)/2)
			for i := range pcm {
				pcm[i] = int16(binary.LittleEndian.Uint16(body[2*i:]))
			}
			if rate == 0 {
				t.Fatalf("%s: data before fmt", files[0])
			}
			return pcm, rate
		}
		p += 8 + size + size%2
	}
	t.Fatalf("%s has no data", files[0])
	return nil, 0
}

// toneAmplitude is the amplitude of f Hz in pcm (Goertzel).
func toneAmplitude(pcm []int16, rate int, f float64) float64 {
	if len(pcm) == 0 {
		return 0
	}
	c := 2 * math.Cos(2*math.Pi*f/float64(rate))
	var s1, s2 float64
	for _, v := range pcm {
		s1, s2 = float64(v)+c*s1-s2, s1
	}
	return 2 * math.Sqrt(max(0, s1*s1+s2*s2-c*s1*s2)) / float64(len(pcm))
}

// toneWindows counts the 50 ms windows of pcm where f Hz is loud.
func toneWindows(pcm []int16, rate int, f float64) int {
	w, n := rate/20, 0
	for i := 0; i+w <= len(pcm); i += w {
		if toneAmplitude(pcm[i:i+w], rate, f) > 2000 {
			n++
		}
	}
	return n
}

// TestBridgedCallLeftAlone: a call a bridge took is the bridge's: the
// serve layer's Hangup and Close at the end of the agent's session touch
// neither its dialog nor its media (nil here: touching them panics), and
// ReadFrame ends with conn.ErrClosed. Mutations caught (seen failing):
// the guard dropped from Hangup, Close or ReadFrame (a nil dereference).
func TestBridgedCallLeftAlone(t *testing.T) {
	c := &Call{}
	c.bridged.Store(true)
	c.Hangup(conn.EndNormal, "transferred")
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := c.ReadFrame(context.Background(), messages.NewPooledFrame(16000, nil)); !errors.Is(err, conn.ErrClosed) {
		t.Errorf("ReadFrame: %v, want conn.ErrClosed", err)
	}
}

// TestBridgeDialFails: a second leg that cannot be dialled fails the
// transfer in fixed words (conn.ErrTransferFailed, no number in them),
// counted, and leaves the call as it was: not bridged, no bridge live.
// Nothing is sent (the target is refused before any INVITE). Catches a
// failed dial leaving the call marked as bridged (its Close would then
// never hang up).
func TestBridgeDialFails(t *testing.T) {
	s, err := New(Config{
		Signal:        signal.Config{Listen: []signal.Listen{{Network: "udp", Addr: "127.0.0.1:0"}}},
		Trunk:         trunk.Config{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}},
		Admit:         func() (conn.Admission, error) { return noSlot{}, nil },
		OnCall:        func(*Call) {},
		Trunks:        map[string]TrunkConfig{"pbx": {Address: "127.0.0.1:9", From: "+15550100", Transfer: TransferBridge}},
		TransferTrunk: "pbx",
		Log:           zerolog.Nop(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := &Call{srv: s, started: true, negotiate: sdp.Negotiated{Codec: sdp.PCMU}}
	err = c.Transfer(context.Background(), "12 34")
	if !errors.Is(err, conn.ErrTransferFailed) || !strings.HasSuffix(err.Error(), ": the target cannot be dialled through the trunk") {
		t.Fatalf("Transfer: %v", err)
	}
	if strings.Contains(err.Error(), "12 34") {
		t.Errorf("the error names the target: %v", err)
	}
	if c.bridged.Load() {
		t.Error("the call was left bridged")
	}
	if st := s.Stats(); st["bridge_failures"] != 1 || st["bridges"] != 0 || st["bridges_live"] != 0 {
		t.Errorf("stats: bridge_failures %d, bridges %d, bridges_live %d; want 1, 0, 0", st["bridge_failures"], st["bridges"], st["bridges_live"])
	}
}
