package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brisvox/brisvox/media/g722"
)

// wireRTP is the callee's RTP socket: it decodes the engine's G.722 to
// 16 kHz PCM and answers each packet with one of silence (a callee's
// line), from the same socket (the engine latches on what it signalled).
type wireRTP struct {
	conn *net.UDPConn
	mu   sync.Mutex
	pcm  []int16
	pkts int
	done chan struct{}
}

func listenRTP(t *testing.T) *wireRTP {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP("127.0.0.2")})
	if err != nil {
		t.Fatal(err)
	}
	w := &wireRTP{conn: c, done: make(chan struct{})}
	go w.run()
	return w
}

func (w *wireRTP) port() int { return w.conn.LocalAddr().(*net.UDPAddr).Port }

func (w *wireRTP) run() {
	defer close(w.done)
	dec, enc := g722.NewDecoder(), g722.NewEncoder()
	quiet := make([]byte, 160)
	enc.Encode(quiet, make([]int16, 320))
	buf := make([]byte, 2048)
	out := make([]int16, 320)
	var seq uint16
	for {
		n, from, err := w.conn.ReadFromUDP(buf)
		if err != nil {
			return
		}
		if n < 12 || buf[0]>>6 != 2 || buf[1]&0x7f != 9 {
			continue // not G.722 RTP (a telephone-event, RTCP)
		}
		k := dec.Decode(out, buf[12:n])
		w.mu.Lock()
		w.pcm = append(w.pcm, out[:k]...)
		w.pkts++
		w.mu.Unlock()
		seq++
		pkt := make([]byte, 12+len(quiet))
		pkt[0], pkt[1] = 0x80, 9
		binary.BigEndian.PutUint16(pkt[2:], seq)
		binary.BigEndian.PutUint32(pkt[4:], uint32(seq)*160)
		binary.BigEndian.PutUint32(pkt[8:], 0x5eed)
		copy(pkt[12:], quiet)
		_, _ = w.conn.WriteToUDP(pkt, from)
	}
}

func (w *wireRTP) heard() ([]int16, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]int16(nil), w.pcm...), w.pkts
}

func (w *wireRTP) close() { _ = w.conn.Close(); <-w.done }

// dialAgent is the keyless agent file with a trunk to the callee at
// 127.0.0.2:port and an [outbound] greeting that uses a variable and is
// spoken at once.
func dialAgent(t *testing.T, port int) string {
	t.Helper()
	base, err := os.ReadFile(keyless(t))
	if err != nil {
		t.Fatal(err)
	}
	src := string(base) + `
[transports.sip.trunks.far]
address = "127.0.0.2:` + strconv.Itoa(port) + `"
from = "+15550000"
max_calls = 2

[outbound]
greeting = "Hello {{name}}, this is Bistro Brisvox calling about your table tonight."
speak_first = true
`
	path := filepath.Join(t.TempDir(), "outbound.toml")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDialSippAnswersAndTheBotSpeaks: `brisvox dial` asks a serving node
// (its operator API) to call a real sipp callee through the agent file's
// trunk; sipp answers G.722 with its media on a socket the test reads.
// The CLI exits 0 with the call's id once the agent runs, and the bot's
// greeting is heard on the wire (speech-loud 100 ms windows of the
// decoded G.722 within seconds of the answer); the operator's hangup
// sends our BYE, which ends sipp's scenario. A dial missing the
// greeting's variable is refused (exit 1) without ringing; a busy callee
// is reported as such. Mutations caught: the dial API not mounted (the
// CLI reports no dial API, exit 1), the SIP call's media not started on
// the answer (seen failing: 0 loud windows on the wire).
func TestDialSippAnswersAndTheBotSpeaks(t *testing.T) {
	needPeer(t, "sipp")
	const token = "op-token-0123456789abcdef"
	t.Setenv("DIAL_TEST_TOKEN", token)
	sipPort := freeUDP(t, "127.0.0.2")
	rtp := listenRTP(t)
	defer rtp.close()
	base, _, stop, stderr := sipServed(t, serveFlags{agent: dialAgent(t, sipPort), operatorTokenEnv: "DIAL_TEST_TOKEN"})
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dial := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := dialWith(ctx, append([]string{"--server", base, "--token-env", "DIAL_TEST_TOKEN", "--trunk", "far", "--to", "+15551234"}, args...), &out, &errb, os.LookupEnv, nil)
		return code, out.String(), errb.String()
	}

	if code, _, errs := dial(); code != 1 || !strings.Contains(errs, "name") {
		t.Errorf("a dial without the greeting's variable: exit %d, %q; want 1 naming the variable", code, errs)
	}

	dir := t.TempDir()
	sipp := exec.CommandContext(ctx, "sipp", "-sf", mustAbs(t, "testdata/sip/uas_answer.xml"), "-m", "1",
		"-i", "127.0.0.2", "-p", strconv.Itoa(sipPort), "-mi", "127.0.0.2", "-mp", strconv.Itoa(freeUDP(t, "127.0.0.2")),
		"-key", "rtpport", strconv.Itoa(rtp.port()), "-timeout", "80s", "-timeout_error", "-nostdin", "-trace_err")
	sipp.Dir = dir
	var sippOut bytes.Buffer
	sipp.Stdout, sipp.Stderr = &sippOut, &sippOut
	if err := sipp.Start(); err != nil {
		t.Fatal(err)
	}
	sippDone := make(chan error, 1)
	go func() { sippDone <- sipp.Wait() }()

	code, out, errs := dial("--var", "name=Ada", "--ring-timeout", "20s")
	if code != 0 || !strings.HasPrefix(out, "sip-") {
		t.Fatalf("brisvox dial: exit %d, stdout %q, stderr %q\nserve:\n%s\nsipp:\n%s", code, out, errs, stderr, sippOut.String())
	}
	id := strings.Fields(out)[0]
	// The greeting ("Hello Ada, this is Bistro Brisvox calling about your
	// table tonight."): about 4 s of flite.
	var loud int
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		pcm, _ := rtp.heard()
		if loud = loudIn(windows(pcm), 0, 1e9); loud >= 15 {
			break
		}
	}
	pcm, pkts := rtp.heard()
	t.Logf("the callee heard %d RTP packets, %.1f s, %d loud windows", pkts, float64(len(pcm))/16000, loud)
	if loud < 15 {
		t.Errorf("the bot's greeting: %d loud windows of 100 ms on the wire, want 15 or more", loud)
	}
	if code, body := fetch(t, "POST", base+"/operator/calls/"+id+"/hangup", token); code != 202 {
		t.Errorf("hangup: %d %s", code, body)
	}
	select {
	case err := <-sippDone:
		if err != nil {
			t.Errorf("sipp's callee scenario failed (our BYE not seen?): %v\n%s", err, sippOut.String())
		}
	case <-time.After(30 * time.Second):
		t.Error("sipp did not end after the hangup")
	}

	// A callee that is busy: the typed outcome, exit 1.
	busy := exec.CommandContext(ctx, "sipp", "-sf", mustAbs(t, "../../sip/signal/testdata/sipp/uas_busy.xml"), "-m", "1",
		"-i", "127.0.0.2", "-p", strconv.Itoa(sipPort), "-mi", "127.0.0.2", "-mp", strconv.Itoa(freeUDP(t, "127.0.0.2")),
		"-timeout", "30s", "-timeout_error", "-nostdin")
	busy.Dir = dir
	if err := busy.Start(); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := dial("--var", "name=Ada"); code != 1 || !strings.Contains(errs, "busy (SIP 486)") {
		t.Errorf("a busy callee: exit %d, %q", code, errs)
	}
	_ = busy.Wait()

	_, metrics := fetch(t, "GET", base+"/metrics", "")
	for series, want := range map[string]float64{
		`brisvox_outbound_calls_total{agent="local",outcome="answered",trunk="far"}`: 1,
		`brisvox_outbound_calls_total{agent="local",outcome="busy",trunk="far"}`:     1,
	} {
		if v := metric(metrics, series); v != want {
			t.Errorf("/metrics: %s = %v, want %v", series, v, want)
		}
	}
	var st struct {
		Server map[string]uint64 `json:"server"`
	}
	_, stats := fetch(t, "GET", base+"/stats", "")
	if err := json.Unmarshal([]byte(stats), &st); err != nil {
		t.Fatal(err)
	}
	if st.Server["dial_bad_requests"] != 1 {
		t.Errorf("dial_bad_requests = %d, want 1 (the dial without its variable)", st.Server["dial_bad_requests"])
	}
	stopped = true
	if code := stop(); code != 0 {
		t.Errorf("serve exited with %d:\n%s", code, stderr)
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}
