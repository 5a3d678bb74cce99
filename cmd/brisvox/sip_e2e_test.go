package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brisvox/brisvox/actors/session"
	"github.com/brisvox/brisvox/cmd/internal/agentfile"
	"github.com/brisvox/brisvox/cmd/internal/serve"
	"github.com/brisvox/brisvox/internal/logtest"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/sip"
	sipmsg "github.com/emiago/sipgo/sip"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"
)

// These tests call `brisvox serve` over SIP with real, independent peers
// from Debian: baresip (a softphone: aufile plays a WAV as its microphone,
// sndfile records what it hears) and sipp (sip-tester). Real sockets on
// loopback and real engines: skipped with -short and when the peer is not
// installed.

// needPeer skips the test under -short or without the named programs.
func needPeer(t *testing.T, progs ...string) {
	t.Helper()
	if testing.Short() {
		t.Skip("real sockets, engines and SIP peers on loopback")
	}
	for _, p := range progs {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("%s is not installed (apt-get install baresip sip-tester flite sox)", p)
		}
	}
}

// sockets counts the process's open sockets (/proc/self/fd links named
// socket:[inode]): the SIP server's listeners and every call's RTP pair.
func sockets(t *testing.T) int {
	t.Helper()
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	n := 0
	for _, e := range es {
		if l, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && strings.HasPrefix(l, "socket:") {
			n++
		}
	}
	return n
}

// noLeaks records the goroutines and sockets now; the returned check,
// run after the server stopped, fails the test if any is left. Mutation
// caught (seen failing): sip.Server.Close doing nothing -> sipgo's
// goroutines and 2 sockets left.
// verifyNoLeaks is goleak.VerifyNone with a longer wait. protoactor's
// dead-letter throttle starts a goroutine of its own at a dead letter and
// that goroutine ends by itself one throttle interval (1 s) later; a system
// stopped just after a dead letter leaves it running for up to that long,
// longer than goleak's own retries (about 0.4 s) on a loaded machine. So
// wait up to 3 s for the set to settle, then verify.
func verifyNoLeaks(t *testing.T, leaks goleak.Option) {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if goleak.Find(leaks) == nil {
			return
		}
	}
	goleak.VerifyNone(t, leaks)
}

func noLeaks(t *testing.T) func() {
	t.Helper()
	leaks := goleak.IgnoreCurrent()
	before := sockets(t)
	return func() {
		t.Helper()
		verifyNoLeaks(t, leaks)
		if n := sockets(t); n > before {
			t.Errorf("%d sockets open after the server stopped, %d before", n, before)
		}
	}
}

// plainClient speaks to the test server without keep-alive, so no idle
// connection (a socket and two goroutines) outlives a request.
var plainClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}

// fetch does one request and returns the status and body.
func fetch(t *testing.T, method, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := plainClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	return resp.StatusCode, string(body)
}

// metric is the value of the Prometheus series whose line starts with
// series (name and labels as printed), 0 when absent.
func metric(text, series string) float64 {
	for line := range strings.Lines(text) {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			v, _ := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			return v
		}
	}
	return 0
}

var sipBanner = regexp.MustCompile(`brisvox: SIP on udp (\S+)`)

// sipServed runs `brisvox serve` in process like served (SIP on
// 127.0.0.1:0), and returns the SIP UDP address read from the banner.
func sipServed(t *testing.T, f serveFlags) (base, sipAddr string, stop func() int, stderr *syncBuffer) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.sipAddr, f.maxCalls, f.drain = "127.0.0.1:0", 4, 2*time.Second
	if f.recordsDir == "" {
		f.recordsDir = t.TempDir()
	}
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- runServe(ctx, f, ln, stdout, stderr, zerolog.New(stderr).Level(zerolog.WarnLevel))
	}()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if m := sipBanner.FindStringSubmatch(stdout.String()); m != nil {
			sipAddr = m[1]
			break
		}
		select {
		case code := <-done:
			cancel()
			t.Fatalf("serve exited with %d:\n%s", code, stderr)
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("serve did not start SIP:\n%s\n%s", stdout, stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return "http://" + ln.Addr().String(), sipAddr, func() int { cancel(); return <-done }, stderr
}

// keyless is the keyless agent file, served as `go tool task run` does.
func keyless(t *testing.T) string {
	return filepath.Join(moduleRoot(t), "examples", "agents", "local.toml")
}

// ---- baresip ----

// baresipConfig is examples/sip/baresip (the config a README reader
// runs) made to need no audio device: the microphone is aufile (a WAV),
// the player ALSA's "null" PCM (alsa-lib's built-in sink), and the sndfile
// filter records both directions to rec; SIP on port 0 and the RTP ports
// given. Everything else, net_interface 127.0.0.1 above all, is the
// example's: baresip binds its RTP sockets on 0.0.0.0, so its packets to
// 127.0.0.1 leave from 127.0.0.1; with another address in its SDP the
// engine's strict source latch (without symmetric_rtp) rightly drops every
// one as unsignalled.
func baresipConfig(t *testing.T, mic, rec string, rtpPorts int) (config, accounts []byte) {
	t.Helper()
	dir := filepath.Join(moduleRoot(t), "examples", "sip", "baresip")
	example, err := os.ReadFile(filepath.Join(dir, "config"))
	if err != nil {
		t.Fatal(err)
	}
	accounts, err = os.ReadFile(filepath.Join(dir, "accounts"))
	if err != nil {
		t.Fatal(err)
	}
	replace := map[string]string{
		"sip_listen":   "127.0.0.1:0",
		"rtp_ports":    fmt.Sprintf("%d-%d", rtpPorts, rtpPorts+99),
		"audio_player": "alsa,null",
		"audio_alert":  "alsa,null",
		"audio_source": "aufile," + mic,
	}
	var b strings.Builder
	for line := range strings.Lines(string(example)) {
		if k, _, ok := strings.Cut(strings.TrimSpace(line), "\t"); ok {
			if v, ok := replace[k]; ok {
				line = k + "\t\t" + v + "\n"
				delete(replace, k)
			}
		}
		b.WriteString(line)
	}
	if len(replace) > 0 {
		t.Fatalf("examples/sip/baresip/config lacks %v", replace)
	}
	fmt.Fprintf(&b, "module\t\t\taufile.so\nmodule\t\t\tsndfile.so\nsnd_path\t\t%s\n", rec)
	return []byte(b.String()), accounts
}

// writeWAV writes 16 kHz mono PCM16 as a WAV file.
func writeWAV(t *testing.T, path string, pcm []int16) {
	t.Helper()
	le := binary.LittleEndian
	n := uint32(2 * len(pcm))
	b := []byte("RIFF")
	b = le.AppendUint32(b, 36+n)
	b = append(b, "WAVEfmt "...)
	b = le.AppendUint32(b, 16)    // the fmt chunk's size
	b = le.AppendUint16(b, 1)     // PCM
	b = le.AppendUint16(b, 1)     // mono
	b = le.AppendUint32(b, 16000) // rate
	b = le.AppendUint32(b, 32000) // bytes a second
	b = le.AppendUint16(b, 2)     // bytes a frame
	b = le.AppendUint16(b, 16)    // bits a sample
	b = append(b, "data"...)
	b = le.AppendUint32(b, n)
	for _, v := range pcm {
		b = le.AppendUint16(b, uint16(v))
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// readWAV reads a PCM16 mono WAV (what sndfile writes): its rate and
// samples. A data chunk whose size was never patched (baresip killed)
// runs to the end of the file.
func readWAV(path string) (rate int, pcm []int16, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, nil, err
	}
	if len(b) < 12 || string(b[:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return 0, nil, errors.New("not a WAV file")
	}
	le := binary.LittleEndian
	for off := 12; off+8 <= len(b); {
		id, size := string(b[off:off+4]), int(le.Uint32(b[off+4:]))
		body := b[off+8:]
		switch id {
		case "fmt ":
			if len(body) < 16 || le.Uint16(body[0:]) != 1 || le.Uint16(body[2:]) != 1 || le.Uint16(body[14:]) != 16 {
				return 0, nil, errors.New("not PCM16 mono")
			}
			rate = int(le.Uint32(body[4:]))
		case "data":
			if size > len(body) || size == 0 {
				size = len(body)
			}
			pcm = make([]int16, size/2)
			for i := range pcm {
				pcm[i] = int16(le.Uint16(body[2*i:]))
			}
			return rate, pcm, nil
		}
		off += 8 + size + size%2
	}
	return 0, nil, errors.New("no data chunk")
}

// baresipCall dials sipAddr with baresip, the microphone playing mic (16
// kHz); baresip hangs up when the WAV ends. It returns what baresip heard
// (sndfile's decode dump, 16 kHz) and its output.
func baresipCall(t *testing.T, sipAddr string, mic []int16, rtpPorts int) (heard []int16, out string) {
	t.Helper()
	dir := t.TempDir()
	rec := filepath.Join(dir, "rec")
	if err := os.Mkdir(rec, 0o755); err != nil {
		t.Fatal(err)
	}
	wav := filepath.Join(dir, "mic.wav")
	writeWAV(t, wav, mic)
	config, accounts := baresipConfig(t, wav, rec, rtpPorts)
	if err := os.WriteFile(filepath.Join(dir, "config"), config, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "accounts"), accounts, 0o644); err != nil {
		t.Fatal(err)
	}
	secs := len(mic)/16000 + 8 // baresip quits then even if the call hung
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(secs+10)*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "baresip", "-f", dir, "-t", strconv.Itoa(secs), "-e", "/dial sip:agent@"+sipAddr)
	cmd.Dir = dir
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	err := cmd.Run()
	out = b.String()
	if err != nil {
		t.Fatalf("baresip: %v\n%s", err, out)
	}
	if !strings.Contains(out, "Call established") {
		t.Fatalf("baresip's call was not established:\n%s", out)
	}
	dumps, _ := filepath.Glob(filepath.Join(rec, "dump-*-dec.wav"))
	if len(dumps) != 1 {
		t.Fatalf("sndfile wrote %v, want one decode dump:\n%s", dumps, out)
	}
	rate, heard, err := readWAV(dumps[0])
	if err != nil || rate != 16000 {
		t.Fatalf("the recording %s: rate %d, %v", dumps[0], rate, err)
	}
	return heard, out
}

// window is the RMS of each 100 ms of pcm (16 kHz).
func windows(pcm []int16) []float64 {
	const w = 1600
	var out []float64
	for i := 0; i+w <= len(pcm); i += w {
		out = append(out, rms(pcm[i:i+w]))
	}
	return out
}

// loudIn counts the 100 ms windows in [from, to) seconds louder than
// speechRMS.
func loudIn(ws []float64, from, to float64) int {
	n := 0
	for i := int(from * 10); i < int(to*10) && i < len(ws); i++ {
		if i >= 0 && ws[i] > speechRMS {
			n++
		}
	}
	return n
}

// speechRMS separates flite's speech, as G.722 brings it back (windows of
// 2000 to 8000), from the silence between words and the codec's idle
// noise (about 16).
const speechRMS = 300

// silence is n seconds of 16 kHz silence.
func silence(seconds float64) []int16 { return make([]int16, int(seconds*16000)) }

// TestServeSIPBaresipAnswers: baresip (G.722 first) calls the keyless
// agent through `brisvox serve`; its microphone is silence, the flite
// question "What is the time?" at 6 s, then silence. What baresip
// recorded holds the greeting (speech in the first seconds, before the
// question) and the answer (speech after the question ends, and none
// while the caller asks); the server counted the INVITE answered 200, the
// question as a turn and a voice-to-voice latency. Mutations caught (each
// seen failing): the RTP latch taking no packet from the signalled source
// (what baresip without net_interface meets: no turn, no answer in the
// recording, accepted 0); the SIP call's WriteFrame dropping the bot's
// audio (no greeting, no answer).
func TestServeSIPBaresipAnswers(t *testing.T) {
	needPeer(t, "baresip")
	check := noLeaks(t)
	question := say(t, "What is the time?")
	const askAt = 6.0
	asked := askAt + float64(len(question))/16000
	mic := append(append(silence(askAt), question...), silence(9)...)
	base, sipAddr, stop, stderr := sipServed(t, serveFlags{agent: keyless(t)})
	heard, out := baresipCall(t, sipAddr, mic, 32000)
	metrics := func() string { _, m := fetch(t, "GET", base+"/metrics", ""); return m }()
	stats := func() string { _, s := fetch(t, "GET", base+"/stats", ""); return s }()
	if code := stop(); code != 0 {
		t.Errorf("serve exited with %d:\n%s", code, stderr)
	}
	check()
	if err := logtest.Check([]byte(stderr.String()), logtest.JSONLines); err != nil {
		t.Errorf("serve's log: %v", err)
	}

	ws := windows(heard)
	// Voice to voice as the caller hears it: from the question's end to
	// the first loud window after it.
	onset := -1.0
	for i := int(asked * 10); i < len(ws); i++ {
		if ws[i] > speechRMS {
			onset = float64(i)/10 - asked
			break
		}
	}
	t.Logf("baresip heard %.1f s; loud windows: greeting %d, while asking %d, answer %d; the answer began %.1f s after the question", float64(len(heard))/16000,
		loudIn(ws, 0, askAt), loudIn(ws, askAt+0.3, asked), loudIn(ws, asked, asked+8), onset)
	if d := float64(len(heard)) / 16000; d < asked+4 {
		t.Errorf("the recording is %.1f s long, want at least %.1f s", d, asked+4)
	}
	// "Hello, this is Bistro Brisvox. How can I help you?": about 3.5 s.
	if n := loudIn(ws, 0, askAt); n < 15 {
		t.Errorf("the greeting: %d loud windows of 100 ms before the question, want 15 or more", n)
	}
	// The bot is quiet while the caller asks (it is not still greeting).
	if n := loudIn(ws, askAt+0.3, asked); n > 2 {
		t.Errorf("%d loud windows while the caller asked: the bot talked over the question", n)
	}
	// "It is 9:41 PM." or so: a second or more of speech.
	if n := loudIn(ws, asked, asked+8); n < 8 {
		t.Errorf("the answer: %d loud windows of 100 ms after the question, want 8 or more\nbaresip:\n%s", n, out)
	}
	for series, least := range map[string]float64{
		`brisvox_sip_requests_total{agent="local",code="200",method="INVITE"}`: 1,
		`brisvox_turns_total{agent="local"}`:                                   1,
		`brisvox_turn_latency_seconds_count{agent="local"}`:                    1,
	} {
		if v := metric(metrics, series); v < least {
			t.Errorf("/metrics: %s is %v, want at least %v", series, v, least)
		}
	}
	var st struct {
		SIP map[string]uint64 `json:"sip"`
	}
	if err := json.Unmarshal([]byte(stats), &st); err != nil {
		t.Fatal(err)
	}
	t.Logf("sip stats: accepted %d sent %d unsignalled %d", st.SIP["rtp_accepted"], st.SIP["rtp_sent"], st.SIP["rtp_dropped_unsignalled_source"])
	// About 20 s of G.722 at 50 packets a second each way.
	if st.SIP["rtp_accepted"] < 500 || st.SIP["rtp_sent"] < 500 {
		t.Errorf("/stats sip: %d RTP packets accepted, %d sent", st.SIP["rtp_accepted"], st.SIP["rtp_sent"])
	}
}

// TestServeSIPBaresipBargeIn: baresip calls the keyless agent and talks
// over the greeting from 1.5 s on, for several seconds: the recording
// shows the bot speaking before, then silent within a bound after the
// caller started, for as long as the caller talks; the server counted the
// barge-in. (The barge-in is on the greeting: it starts at a known time,
// which a WAV played blind can aim at; the answer's start depends on the
// machine's load.) Mutation caught (seen failing): the turn actor never
// acting on its barge-in timer -> the greeting plays on under the caller
// (8 loud windows after the bound, 0 barge-ins).
func TestServeSIPBaresipBargeIn(t *testing.T) {
	needPeer(t, "baresip")
	check := noLeaks(t)
	over := say(t, "Hello hello. Can you hear me? I am talking over you now. One two three four five. Six seven eight nine ten.")
	const talkAt = 1.5
	talked := talkAt + float64(len(over))/16000
	mic := append(append(silence(talkAt), over...), silence(3)...)
	base, sipAddr, stop, stderr := sipServed(t, serveFlags{agent: keyless(t)})
	heard, out := baresipCall(t, sipAddr, mic, 32200)
	_, metrics := fetch(t, "GET", base+"/metrics", "")
	if code := stop(); code != 0 {
		t.Errorf("serve exited with %d:\n%s", code, stderr)
	}
	check()
	if err := logtest.Check([]byte(stderr.String()), logtest.JSONLines); err != nil {
		t.Errorf("serve's log: %v", err)
	}

	ws := windows(heard)
	// The bound: barge_in_delay 150 ms, Silero's windows and hangover,
	// the 40 ms of output lead and the far jitter buffer; 1.5 s is lenient
	// enough for a loaded machine and far shorter than the greeting left
	// (about 2 s).
	const bound = 1.2
	before, after := loudIn(ws, 0, talkAt), loudIn(ws, talkAt+bound, talked)
	// When the bot fell silent: the start of the first half second of
	// quiet windows after the caller started.
	stopped := -1.0
	for i := int(talkAt * 10); i+5 <= len(ws); i++ {
		if loudIn(ws, float64(i)/10, float64(i+5)/10) == 0 {
			stopped = float64(i)/10 - talkAt
			break
		}
	}
	t.Logf("talking over from %.1f s to %.1f s; the bot silent %.1f s after; loud windows before %d, after the bound %d", talkAt, talked, stopped, before, after)
	if before < 5 {
		t.Errorf("the greeting: %d loud windows before the caller talked, want 5 or more\n%s", before, out)
	}
	if stopped < 0 || stopped > bound {
		t.Errorf("the bot fell silent %.1f s after the caller started, want within %.1f s", stopped, bound)
	}
	if after > 1 {
		t.Errorf("%d loud windows of 100 ms from %.1f s to %.1f s: the bot did not stop for the caller", after, talkAt+bound, talked)
	}
	if v := metric(metrics, `brisvox_barge_ins_total{agent="local"}`); v < 1 {
		t.Errorf("/metrics: %v barge-ins", v)
	}
}

// ---- sipp ----

// sippRun runs sipp from 127.0.0.2 against target: a built-in scenario
// name or a file under testdata/sip. The run directory holds the "pcap"
// link uac_pcap needs and the traces; it returns sipp's output and exit
// error.
func sippRun(t *testing.T, ctx context.Context, dir, target, scenario string, extra ...string) (string, error) {
	t.Helper()
	if _, err := os.Lstat(filepath.Join(dir, "pcap")); err != nil {
		if err := os.Symlink("/usr/share/sip-tester", filepath.Join(dir, "pcap")); err != nil {
			t.Fatal(err)
		}
	}
	// Ports of our own: another package's sipp may run on 127.0.0.2 at
	// the same time (sipp's media port is 6000 unless told).
	free := func() string {
		pc, err := net.ListenPacket("udp", "127.0.0.2:0")
		if err != nil {
			t.Fatal(err)
		}
		defer pc.Close()
		return strconv.Itoa(pc.LocalAddr().(*net.UDPAddr).Port)
	}
	args := []string{"-m", "1", "-timeout", "40s", "-timeout_error", "-i", "127.0.0.2", "-mi", "127.0.0.2",
		"-p", free(), "-mp", free(), "-nostdin", "-trace_err", "-trace_msg"}
	if strings.HasSuffix(scenario, ".xml") {
		abs, err := filepath.Abs(filepath.Join("testdata", "sip", scenario))
		if err != nil {
			t.Fatal(err)
		}
		args = append(args, "-sf", abs)
	} else {
		args = append(args, "-sn", scenario)
	}
	args = append(append(args, extra...), target)
	cmd := exec.CommandContext(ctx, "sipp", args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// sippMessages is what sipp's -trace_msg wrote in dir.
func sippMessages(t *testing.T, dir string) string {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(dir, "*_messages.log"))
	var b strings.Builder
	for _, l := range logs {
		data, err := os.ReadFile(l)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
	}
	return b.String()
}

// TestServeSIPSippNarrowbandRefused: sipp offers only PCMU and PCMA to
// the keyless agent (pocketsphinx loses its intents at 8 kHz): serve
// answers 488 and the Warning names the codecs it takes, G722 and opus;
// the scenario ACKs the 488 and passes. The same with the built-in
// uac_pcap (PCMA): it fails on the unexpected 488. Mutation caught (seen
// failing): the 488 sent without its Warning -> the scenario's check
// fails.
func TestServeSIPSippNarrowbandRefused(t *testing.T) {
	needPeer(t, "sipp")
	check := noLeaks(t)
	base, sipAddr, stop, stderr := sipServed(t, serveFlags{agent: keyless(t)})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	out, err := sippRun(t, ctx, dir, sipAddr, "uac_488.xml")
	msgs := sippMessages(t, dir)
	pcapDir := t.TempDir()
	pcapOut, pcapErr := sippRun(t, ctx, pcapDir, sipAddr, "uac_pcap")
	pcapMsgs := sippMessages(t, pcapDir)
	_, metrics := fetch(t, "GET", base+"/metrics", "")
	if code := stop(); code != 0 {
		t.Errorf("serve exited with %d:\n%s", code, stderr)
	}
	check()
	if err := logtest.Check([]byte(stderr.String()), logtest.JSONLines); err != nil {
		t.Errorf("serve's log: %v", err)
	}

	if err != nil {
		t.Fatalf("sipp uac_488: %v\n%s\n%s", err, out, msgs)
	}
	warning := regexp.MustCompile(`(?m)^Warning: *(.*)$`)
	for name, m := range map[string]string{"uac_488": msgs, "uac_pcap": pcapMsgs} {
		if !strings.Contains(m, "SIP/2.0 488") {
			t.Errorf("%s: no 488 in sipp's trace:\n%s", name, m)
			continue
		}
		w := warning.FindStringSubmatch(m)
		if w == nil || !strings.Contains(w[1], "G722") || !strings.Contains(w[1], "opus") {
			t.Errorf("%s: the 488's Warning is %q, want G722 and opus named", name, w)
		}
	}
	if pcapErr == nil {
		t.Errorf("uac_pcap passed against an agent that refuses PCMA:\n%s", pcapOut)
	}
	if v := metric(metrics, `brisvox_sip_requests_total{agent="local",code="488",method="INVITE"}`); v != 2 {
		t.Errorf("/metrics: %v INVITEs answered 488, want 2", v)
	}
	if v := metric(metrics, `brisvox_sip_requests_total{agent="local",code="200",method="INVITE"}`); v != 0 {
		t.Errorf("/metrics: %v INVITEs answered 200, want 0", v)
	}
}

// sipLoad is the load agent: mock providers (the mock STT hears any loud
// audio as "hello"), the energy VAD, and a greeting long enough to keep
// the bot talking for the whole call.
type sipLoad struct{ greeting string }

func (sipLoad) Name() string { return "load" }

func (a sipLoad) Session(serve.CallEnv) (session.Config, error) {
	return session.Config{
		STT:      providertest.NewMockSTT(providertest.STTConfig{}, []string{"hello", "hello", "hello", "hello"}),
		LLM:      providertest.NewMockLLM(providertest.LLMConfig{}),
		TTS:      providertest.NewMockTTS(providertest.TTSConfig{}),
		Greeting: a.greeting,
	}, nil
}

// loadSIPFile is the [transports.sip] table the load server mounts with
// mountSIP: 8 kHz G.711 served (the mock STT does not care).
const loadSIPFile = `prompt = "p"
[transports.sip]
udp = "127.0.0.1:0"
allow = ["127.0.0.0/8"]
codecs = ["PCMA", "PCMU"]
rtp_port_min = 33000
rtp_port_max = 33098
`

// loadServer is the load agent behind serve.Server with the SIP transport
// mounted by mountSIP, and the operator API on token.
type loadServer struct {
	base, sipAddr string
	sip           *sip.Server
	stop          func() error
}

// loadOpts shape serveLoadWith's server: the call limit (default 4), the
// operator token, the [transports.sip] table (default loadSIPFile), the
// log (default none) and --log-content.
type loadOpts struct {
	maxCalls   int
	token      string
	file       string
	log        io.Writer
	logContent bool
}

func serveLoad(t *testing.T, token string) *loadServer {
	t.Helper()
	return serveLoadWith(t, loadOpts{token: token})
}

func serveLoadWith(t *testing.T, o loadOpts) *loadServer {
	t.Helper()
	if o.maxCalls == 0 {
		o.maxCalls = 4
	}
	if o.file == "" {
		o.file = loadSIPFile
	}
	log := zerolog.Nop()
	if o.log != nil {
		log = zerolog.New(o.log).Level(zerolog.DebugLevel)
	}
	f, _ := agentfile.Parse("load.toml", []byte(o.file), agentfile.TOML, agentfile.Options{})
	if f == nil {
		t.Fatal("the load agent's file did not parse")
	}
	words := strings.TrimSpace(strings.Repeat("load ", 300))
	srv, err := serve.New(serve.Config{MaxCalls: o.maxCalls, DrainTimeout: time.Second, ClosingTimeout: time.Second, Log: log, LogContent: o.logContent}, sipLoad{greeting: words})
	if err != nil {
		t.Fatal(err)
	}
	s, err := mountSIP(srv, f.Transports.SIP, log)
	if err != nil {
		t.Fatal(err)
	}
	if o.token != "" {
		if err := srv.EnableOperator(o.token); err != nil {
			t.Fatal(err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	return &loadServer{
		base: "http://" + ln.Addr().String(), sipAddr: s.Addrs()[0].Addr.String(), sip: s,
		stop: func() error { cancel(); return <-done },
	}
}

// TestServeSIPSippLoadAgent: sipp's built-in uac_pcap (g711a.pcap: PCMA,
// 30 ms packets, 7 s of speech) calls the load agent with -rtp_echo: sipp
// completes (exit 0, its BYE answered), the engine heard speech (the
// energy VAD's speech became turns or barge-ins over the endless
// greeting), and the bot's RTP reached sipp: sipp echoed it back, and the
// echoes, carrying our own SSRC, were dropped as a loop (rtp_dropped_loop)
// while only the recording's packets were accepted; the recording's key
// press, from another SSRC, was dropped as foreign. Mutations caught (each
// seen failing): sip/rtp before 8679737, which could latch onto the echo of
// the bot's own voice (448 packets accepted, no loop counted); the latch
// not checking the SSRC after the lock (foreign_ssrc 0).
func TestServeSIPSippLoadAgent(t *testing.T) {
	needPeer(t, "sipp")
	check := noLeaks(t)
	ls := serveLoad(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	out, err := sippRun(t, ctx, dir, ls.sipAddr, "uac_pcap", "-rtp_echo")
	stats := ls.sip.Stats()
	_, metrics := fetch(t, "GET", ls.base+"/metrics", "")
	if err := ls.stop(); err != nil {
		t.Error(err)
	}
	check()

	if err != nil {
		t.Fatalf("sipp uac_pcap: %v\n%s\n%s", err, out, sippMessages(t, dir))
	}
	turns := metric(metrics, `brisvox_turns_total{agent="load"}`)
	barges := metric(metrics, `brisvox_barge_ins_total{agent="load"}`)
	rtpStats := map[string]uint64{}
	for k, v := range stats {
		if (strings.HasPrefix(k, "rtp_") || strings.HasPrefix(k, "responses_")) && v > 0 {
			rtpStats[k] = v
		}
	}
	t.Logf("turns %v barge-ins %v; sip %v", turns, barges, rtpStats)
	if turns+barges < 1 {
		t.Errorf("the engine heard no speech: turns %v, barge-ins %v", turns, barges)
	}
	// 7 s of 30 ms packets: about 230.
	if stats["rtp_accepted"] < 200 {
		t.Errorf("%d RTP packets of sipp accepted, want 200 or more", stats["rtp_accepted"])
	}
	// Only the recording: not the echoes of the bot's voice.
	if stats["rtp_accepted"] > 260 {
		t.Errorf("%d RTP packets accepted, the recording has about 233: the echoes of our own voice were taken as the caller's", stats["rtp_accepted"])
	}
	// Our own SSRC coming back is a loop: dropped, counted.
	if stats["rtp_sent"] < 250 || stats["rtp_dropped_loop"] < 100 {
		t.Errorf("sent %d, echoes dropped as loops %d: the bot's audio did not reach sipp", stats["rtp_sent"], stats["rtp_dropped_loop"])
	}
	// The key press at the recording's end comes from another SSRC.
	if stats["rtp_dropped_foreign_ssrc"] == 0 {
		t.Error("no packet of another SSRC dropped after the lock")
	}
	if v := metric(metrics, `brisvox_sip_requests_total{agent="load",code="200",method="BYE"}`); v != 1 {
		t.Errorf("/metrics: %v BYEs answered 200, want sipp's one", v)
	}
}

// TestServeSIPByeFromUs: sipp calls the load agent and never hangs up;
// the operator API hangs the call up (POST /operator/calls/{id}/hangup)
// and the engine sends the BYE, which the scenario waits for and answers
// 200: sipp exits 0, and the call is gone. Mutation caught (seen
// failing): the SIP call's Hangup and Close not ending the dialog (no BYE)
// -> sipp times out waiting for it (exit 255).
func TestServeSIPByeFromUs(t *testing.T) {
	needPeer(t, "sipp")
	check := noLeaks(t)
	const token = "sip-e2e-operator-token"
	ls := serveLoad(t, token)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	var out string
	var sippErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		out, sippErr = sippRun(t, ctx, dir, ls.sipAddr, "uac_wait_bye.xml", "-rtp_echo")
	}()
	// The call appears in the operator API; let it run a second, then
	// hang it up.
	var id string
	for deadline := time.Now().Add(20 * time.Second); id == "" && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		_, body := fetch(t, "GET", ls.base+"/operator/calls", token)
		var calls struct {
			Calls []struct {
				ID        string `json:"id"`
				Transport string `json:"transport"`
			} `json:"calls"`
		}
		if json.Unmarshal([]byte(body), &calls) == nil && len(calls.Calls) == 1 {
			id = calls.Calls[0].ID
			if tr := calls.Calls[0].Transport; tr != "sip" {
				t.Errorf("the call's transport is %q, want sip", tr)
			}
		}
	}
	if id == "" {
		cancel()
		<-done
		_ = ls.stop()
		t.Fatalf("no live call in the operator API; sipp: %v\n%s", sippErr, out)
	}
	time.Sleep(time.Second)
	code, body := fetch(t, "POST", ls.base+"/operator/calls/"+id+"/hangup", token)
	if code != http.StatusAccepted {
		t.Errorf("hangup: %d %s", code, body)
	}
	<-done
	stats := ls.sip.Stats()
	_, stat := fetch(t, "GET", ls.base+"/stats", "")
	if err := ls.stop(); err != nil {
		t.Error(err)
	}
	check()

	if sippErr != nil {
		t.Fatalf("sipp did not see our BYE: %v\n%s\n%s", sippErr, out, sippMessages(t, dir))
	}
	if !strings.Contains(sippMessages(t, dir), "BYE sip:") {
		t.Error("no BYE in sipp's trace")
	}
	if stats["calls_live"] != 0 || !strings.Contains(stat, `"live_calls":0`) {
		t.Errorf("the call is still live: sip %d, /stats %s", stats["calls_live"], stat)
	}
	if stats["rtp_sent"] < 25 {
		t.Errorf("%d RTP packets sent in the call's second", stats["rtp_sent"])
	}
}

// ---- careless and hostile callers (issue 14) ----

// uac is a raw SIP caller written for these tests: one UDP socket on an
// address of its own (the trunk policy's rate limits are per source, and
// a burst is many callers, not one), a media socket whose address its
// offers give (what the bot sends it is read and dropped), one call.
type uac struct {
	t      *testing.T
	conn   *net.UDPConn
	media  *net.UDPConn
	server *net.UDPAddr
	callID string
	cseq   int
	// ok is the INVITE's 2xx, once it came.
	ok   *sipmsg.Response
	wg   sync.WaitGroup
	stop chan struct{}
}

func newUAC(t *testing.T, local netip.Addr, server, callID string) *uac {
	t.Helper()
	srv, err := net.ResolveUDPAddr("udp", server)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(local, 0)))
	if err != nil {
		t.Fatal(err)
	}
	media, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(local, 0)))
	if err != nil {
		t.Fatal(err)
	}
	u := &uac{t: t, conn: conn, media: media, server: srv, callID: callID, stop: make(chan struct{})}
	u.wg.Go(func() {
		buf := make([]byte, 2048)
		for {
			if _, _, err := media.ReadFromUDP(buf); err != nil {
				return
			}
		}
	})
	t.Cleanup(u.close)
	return u
}

// callers are the uacs of a test, closed together before its leak check.
type callers []*uac

func (cs *callers) add(u *uac) *uac { *cs = append(*cs, u); return u }

func (cs callers) close() {
	for _, u := range cs {
		u.close()
	}
}

func (u *uac) close() {
	select {
	case <-u.stop:
		return
	default:
		close(u.stop)
	}
	_ = u.conn.Close()
	_ = u.media.Close()
	u.wg.Wait()
}

func (u *uac) local() string { return u.conn.LocalAddr().String() }

// request is a request of the call with a fresh branch; body is an SDP
// body or, with contentType, another.
func (u *uac) request(method string, cseq int, toTag, contentType, body string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "%s sip:agent@%s SIP/2.0\r\n", method, u.server)
	fmt.Fprintf(&b, "Via: SIP/2.0/UDP %s;branch=z9hG4bK-%s-%d-%s\r\n", u.local(), u.callID, cseq, method)
	fmt.Fprintf(&b, "From: <sip:caller@%s>;tag=from-%s\r\n", u.conn.LocalAddr().(*net.UDPAddr).IP, u.callID)
	to := fmt.Sprintf("<sip:agent@%s>", u.server)
	if toTag != "" {
		to += ";tag=" + toTag
	}
	fmt.Fprintf(&b, "To: %s\r\nCall-ID: %s\r\nCSeq: %d %s\r\nContact: <sip:caller@%s>\r\nMax-Forwards: 70\r\n", to, u.callID, cseq, method, u.local())
	if body == "" {
		b.WriteString("Content-Length: 0\r\n\r\n")
	} else {
		fmt.Fprintf(&b, "Content-Type: %s\r\nContent-Length: %d\r\n\r\n%s", contentType, len(body), body)
	}
	return []byte(b.String())
}

func (u *uac) send(b []byte) {
	u.t.Helper()
	if _, err := u.conn.WriteToUDP(b, u.server); err != nil {
		u.t.Error(err)
	}
}

// offer is a PCMA offer (what the load agent takes) at the media socket.
func (u *uac) offer() string {
	a := u.media.LocalAddr().(*net.UDPAddr)
	return fmt.Sprintf("v=0\r\no=- 1 1 IN IP4 %s\r\ns=-\r\nc=IN IP4 %s\r\nt=0 0\r\nm=audio %d RTP/AVP 8\r\na=rtpmap:8 PCMA/8000\r\n", a.IP, a.IP, a.Port)
}

// invite sends the INVITE with body (an SDP offer; "" for none).
func (u *uac) invite(body string) {
	u.cseq = 1
	u.send(u.request("INVITE", 1, "", "application/sdp", body))
}

// next reads the next message within d; nil when none came.
func (u *uac) next(d time.Duration) sipmsg.Message {
	buf := make([]byte, 65536)
	_ = u.conn.SetReadDeadline(time.Now().Add(d))
	for {
		n, _, err := u.conn.ReadFromUDP(buf)
		if err != nil {
			return nil
		}
		if m, err := sipmsg.ParseMessage(buf[:n]); err == nil {
			return m
		}
	}
}

// final reads until the final response to method (a request of the
// server's on the way is left unanswered); nil after d.
func (u *uac) final(method sipmsg.RequestMethod, d time.Duration) *sipmsg.Response {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		res, ok := u.next(time.Until(end)).(*sipmsg.Response)
		if ok && res.StatusCode >= 200 && res.CSeq() != nil && res.CSeq().MethodName == method {
			return res
		}
	}
	return nil
}

// answered sends the INVITE and ACKs its final response (a 2xx in a
// transaction of its own, another in the INVITE's).
func (u *uac) answered(body string) *sipmsg.Response {
	u.t.Helper()
	u.invite(body)
	res := u.final(sipmsg.INVITE, 10*time.Second)
	if res == nil {
		u.t.Errorf("%s: no final answer to the INVITE", u.callID)
		return nil
	}
	u.ackFor(res)
	return res
}

// ackFor ACKs the INVITE's final response res.
func (u *uac) ackFor(res *sipmsg.Response) {
	tag, _ := res.To().Params.Get("tag")
	if res.StatusCode < 300 {
		u.ok = res
		u.send(u.request("ACK", 1, tag, "", ""))
		return
	}
	// A non-2xx is ACKed in the INVITE's transaction: its branch.
	ack := u.request("ACK", 1, tag, "", "")
	ack = bytes.Replace(ack, []byte("-1-ACK"), []byte("-1-INVITE"), 1)
	u.send(ack)
}

// inDialog sends a request in the call's dialog and returns its final
// answer (nil after 5 s).
func (u *uac) inDialog(method sipmsg.RequestMethod, contentType, body string) *sipmsg.Response {
	u.t.Helper()
	tag, _ := u.ok.To().Params.Get("tag")
	u.cseq++
	u.send(u.request(string(method), u.cseq, tag, contentType, body))
	return u.final(method, 5*time.Second)
}

// hangup sends the BYE and wants its 200.
func (u *uac) hangup() {
	u.t.Helper()
	if res := u.inDialog(sipmsg.BYE, "", ""); res == nil || res.StatusCode != 200 {
		u.t.Errorf("%s: the BYE was answered %v", u.callID, res)
	}
}

// sendRTP sends n 20 ms PCMA packets of silence to the answer's media
// address, in real time.
func (u *uac) sendRTP(n int) {
	u.t.Helper()
	to := sdpMedia(u.t, u.ok.Body())
	pkt := make([]byte, 12+160)
	pkt[0], pkt[1] = 0x80, 8
	binary.BigEndian.PutUint32(pkt[8:], 0x5eed)
	for i := 12; i < len(pkt); i++ {
		pkt[i] = 0xd5 // A-law silence
	}
	for i := range n {
		binary.BigEndian.PutUint16(pkt[2:], uint16(i))
		binary.BigEndian.PutUint32(pkt[4:], uint32(i*160))
		if _, err := u.media.WriteToUDP(pkt, to); err != nil {
			u.t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var (
	sdpConn = regexp.MustCompile(`(?m)^c=IN IP4 (\S+)`)
	sdpPort = regexp.MustCompile(`(?m)^m=audio (\d+) `)
)

// sdpMedia is the RTP address of an SDP body.
func sdpMedia(t *testing.T, body []byte) *net.UDPAddr {
	t.Helper()
	c, m := sdpConn.FindSubmatch(body), sdpPort.FindSubmatch(body)
	if c == nil || m == nil {
		t.Fatalf("no media address in\n%s", body)
	}
	port, _ := strconv.Atoi(string(m[1]))
	return &net.UDPAddr{IP: net.ParseIP(string(c[1])), Port: port}
}

// inviteBurst makes n callers on addresses 127.0.<net>.1 onwards that all send
// their INVITE at once (a start barrier) and ACK the answer; it returns
// them and their final answers.
func inviteBurst(t *testing.T, cs *callers, sipAddr string, subnet byte, n int, prefix string) ([]*uac, []*sipmsg.Response) {
	t.Helper()
	uacs := make([]*uac, n)
	for i := range uacs {
		uacs[i] = cs.add(newUAC(t, netip.AddrFrom4([4]byte{127, 0, subnet, byte(i + 1)}), sipAddr, fmt.Sprintf("%s-%d", prefix, i)))
	}
	answers := make([]*sipmsg.Response, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, u := range uacs {
		body := u.offer()
		wg.Go(func() {
			<-start
			answers[i] = u.answered(body)
		})
	}
	close(start)
	wg.Wait()
	return uacs, answers
}

// tally counts answers by code, and the 503s that carry a Retry-After.
func tally(answers []*sipmsg.Response) (codes map[int]int, retryAfter int) {
	codes = map[int]int{}
	for _, a := range answers {
		if a == nil {
			codes[0]++
			continue
		}
		codes[a.StatusCode]++
		if h := a.GetHeader("Retry-After"); a.StatusCode == 503 && h != nil {
			if v, err := strconv.Atoi(strings.TrimSpace(h.Value())); err == nil && v > 0 {
				retryAfter++
			}
		}
	}
	return codes, retryAfter
}

// liveCalls is /stats' live_calls.
func liveCalls(t *testing.T, base string) int {
	t.Helper()
	_, body := fetch(t, "GET", base+"/stats", "")
	var st struct {
		Live int `json:"live_calls"`
	}
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatalf("/stats: %v", err)
	}
	return st.Live
}

// waitLive waits (up to 20 s, a bound, not a timing) until /stats shows n
// live calls.
func waitLive(t *testing.T, base string, n int) {
	t.Helper()
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if liveCalls(t, base) == n {
			return
		}
	}
	t.Fatalf("/stats: %d live calls, want %d", liveCalls(t, base), n)
}

// checkLogs fails on a log line that is not one JSON object or holds a
// key twice.
func checkLogs(t *testing.T, logs *syncBuffer) {
	t.Helper()
	if err := logtest.Check([]byte(logs.String()), nil); err != nil {
		t.Errorf("the server's log: %v", err)
	}
}

// TestServeSIPAdmissionBurst: 60 callers (distinct Call-IDs and sources,
// loopback UDP) send their INVITE at once to the load server with
// --max-calls 20: exactly 20 are answered 200 (and ACKed) and 40 get a
// 503 with a Retry-After. Once the 20 hang up, 20 slots are free again
// (21 at once: 20 answered, one refused). Then the ways an INVITE fails
// after its slot was reserved, against the real server: an offer refused
// (488), a BYE before the ACK, a CANCEL racing the answer; after them 21
// callers at once again get exactly 20 answers, so no slot leaked. Every
// log line of the run is strict JSON. Mutations caught (each seen
// failing): sip.Server.Invite reserving nothing (answers up to the
// RTP range: 49 answered), Invite's deferred Release removed (the last
// burst gets 19 answers after the 488 kept its slot).
func TestServeSIPAdmissionBurst(t *testing.T) {
	if testing.Short() {
		t.Skip("real sockets on loopback")
	}
	check := noLeaks(t)
	logs := &syncBuffer{}
	ls := serveLoadWith(t, loadOpts{maxCalls: 20, log: logs})
	var cs callers

	uacs, answers := inviteBurst(t, &cs, ls.sipAddr, 1, 60, "burst")
	codes, retry := tally(answers)
	t.Logf("60 INVITEs at once against 20 slots: %v, %d 503s with Retry-After", codes, retry)
	if codes[200] != 20 || codes[503] != 40 || retry != 40 {
		t.Errorf("answers %v (%d with Retry-After), want 20 200 and 40 503 with Retry-After", codes, retry)
	}
	// The 40 refusals are a summary in the log, not 40 lines (issue 14:
	// every refusal logged a line). Mutation caught: sip/signal's
	// endEarly logging each refusal ("call not answered").
	if n, sum := strings.Count(logs.String(), `"message":"call not answered"`), strings.Count(logs.String(), `"message":"sip: calls not answered"`); n > 0 || sum > 2 {
		t.Errorf("the refusals wrote %d lines and %d summaries, want none and at most 2", n, sum)
	}
	waitLive(t, ls.base, codes[200])
	for i, u := range uacs {
		if answers[i] != nil && answers[i].StatusCode == 200 {
			u.hangup()
		}
	}
	waitLive(t, ls.base, 0)

	round := func(subnet byte, prefix string) {
		t.Helper()
		uacs, answers := inviteBurst(t, &cs, ls.sipAddr, subnet, 21, prefix)
		codes, retry := tally(answers)
		t.Logf("%s: 21 INVITEs at once: %v", prefix, codes)
		if codes[200] != 20 || codes[503] != 1 || retry != 1 {
			t.Errorf("%s: answers %v, want 20 200 and one 503 with Retry-After", prefix, codes)
		}
		waitLive(t, ls.base, codes[200])
		for i, u := range uacs {
			if answers[i] != nil && answers[i].StatusCode == 200 {
				u.hangup()
			}
		}
		waitLive(t, ls.base, 0)
	}
	round(2, "again")

	// An offer the agent refuses: 488, its slot given back.
	g729 := cs.add(newUAC(t, netip.MustParseAddr("127.0.3.1"), ls.sipAddr, "refused-488"))
	a := g729.media.LocalAddr().(*net.UDPAddr)
	if res := g729.answered(fmt.Sprintf("v=0\r\no=- 1 1 IN IP4 %s\r\ns=-\r\nc=IN IP4 %s\r\nt=0 0\r\nm=audio %d RTP/AVP 18\r\na=rtpmap:18 G729/8000\r\n", a.IP, a.IP, a.Port)); res == nil || res.StatusCode != 488 {
		t.Errorf("the G.729 offer was answered %v, want 488", res)
	}
	// A BYE before the ACK: the dialog ends before the server had the call.
	early := cs.add(newUAC(t, netip.MustParseAddr("127.0.3.2"), ls.sipAddr, "bye-before-ack"))
	early.invite(early.offer())
	if res := early.final(sipmsg.INVITE, 10*time.Second); res == nil || res.StatusCode != 200 {
		t.Errorf("the INVITE was answered %v", res)
	} else {
		early.ok = res
		early.hangup()
	}
	// A CANCEL right behind the INVITE: whichever wins, no slot is kept.
	cancelled := cs.add(newUAC(t, netip.MustParseAddr("127.0.3.3"), ls.sipAddr, "cancel"))
	inv := cancelled.request("INVITE", 1, "", "application/sdp", cancelled.offer())
	cancelled.send(inv)
	// The CANCEL is in the INVITE's transaction: its branch.
	cancelled.send(bytes.Replace(cancelled.request("CANCEL", 1, "", "", ""), []byte("-1-CANCEL"), []byte("-1-INVITE"), 1))
	if res := cancelled.final(sipmsg.INVITE, 10*time.Second); res == nil {
		t.Error("the cancelled INVITE got no final answer")
	} else {
		cancelled.ackFor(res)
		t.Logf("the CANCEL race: the INVITE was answered %d", res.StatusCode)
		if res.StatusCode == 200 {
			cancelled.hangup()
		}
	}
	waitLive(t, ls.base, 0)
	round(4, "after")

	stats := ls.sip.Stats()
	if err := ls.stop(); err != nil {
		t.Error(err)
	}
	cs.close()
	check()
	checkLogs(t, logs)
	t.Logf("sip: refused_sdp %d, INVITE 503 %d, INVITE 200 %d", stats["refused_sdp"], stats["responses_INVITE_503"], stats["responses_INVITE_200"])
	if stats["refused_sdp"] != 1 {
		t.Errorf("refused_sdp = %d, want 1", stats["refused_sdp"])
	}
}

// TestServeSIPCallerVanishes: a caller answers, sends a second of RTP
// and vanishes (no BYE, no RTP): the media timeout (5 s, the shortest
// the file takes) ends the call, the server logs it ended "vanished" and
// counts the timeout; the detect time is logged. Every log line is
// strict JSON. Mutation caught (seen failing): sip/rtp's closedErr
// without conn.ErrVanished (the call ended "hangup").
func TestServeSIPCallerVanishes(t *testing.T) {
	if testing.Short() {
		t.Skip("real sockets on loopback")
	}
	check := noLeaks(t)
	logs := &syncBuffer{}
	ls := serveLoadWith(t, loadOpts{log: logs, file: loadSIPFile + "media_timeout = \"5s\"\n"})
	u := newUAC(t, netip.MustParseAddr("127.0.5.1"), ls.sipAddr, "vanish")
	if res := u.answered(u.offer()); res == nil || res.StatusCode != 200 {
		t.Fatalf("the INVITE was answered %v", res)
	}
	waitLive(t, ls.base, 1)
	u.sendRTP(50)
	last := time.Now()
	waitLive(t, ls.base, 0)
	detect := time.Since(last)
	stats := ls.sip.Stats()
	if err := ls.stop(); err != nil {
		t.Error(err)
	}
	u.close()
	check()
	checkLogs(t, logs)
	t.Logf("the vanished caller's call ended %v after its last RTP packet (media timeout 5 s)", detect.Round(10*time.Millisecond))
	var ended map[string]any
	for line := range strings.Lines(logs.String()) {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["message"] == "call ended" {
			ended = m
		}
	}
	if ended == nil || ended["reason"] != "vanished" {
		t.Errorf("the call ended %v, want reason vanished", ended)
	}
	if stats["media_timeouts"] != 1 {
		t.Errorf("media_timeouts = %d, want 1", stats["media_timeouts"])
	}
}

// TestServeSIPLogContentNoDigits: with --log-content and the debug level
// (the operator's switch to see what callers said), a SIP caller presses
// keys (SIP INFO, dtmf-relay) that become its turn: no log line carries
// the keys, which may be a PIN. Every log line is strict JSON. It fails
// today, seen: actors/session's logContent writes the turn's text, and
// actors/turn makes the keys that text ("caller said", "The caller
// pressed 9 7 3 1"); neither is the SIP transport's to change, so the
// test is skipped until they are (issue 14, defect 4 of the SIP part).
func TestServeSIPLogContentNoDigits(t *testing.T) {
	if testing.Short() {
		t.Skip("real sockets on loopback")
	}
	check := noLeaks(t)
	logs := &syncBuffer{}
	ls := serveLoadWith(t, loadOpts{log: logs, logContent: true})
	u := newUAC(t, netip.MustParseAddr("127.0.6.1"), ls.sipAddr, "keys")
	if res := u.answered(u.offer()); res == nil || res.StatusCode != 200 {
		t.Fatalf("the INVITE was answered %v", res)
	}
	const pin = "9731"
	for _, k := range pin {
		if res := u.inDialog(sipmsg.INFO, "application/dtmf-relay", fmt.Sprintf("Signal=%c\r\nDuration=160\r\n", k)); res == nil || res.StatusCode != 200 {
			t.Fatalf("the INFO was answered %v", res)
		}
	}
	// The keys make a turn after the inter-digit timeout (2 s).
	turns := 0.0
	for end := time.Now().Add(15 * time.Second); turns < 1 && time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		_, m := fetch(t, "GET", ls.base+"/metrics", "")
		turns = metric(m, `brisvox_turns_total{agent="load"}`)
	}
	u.hangup()
	stats := ls.sip.Stats()
	t.Logf("dtmf: %d by SIP INFO, %d undelivered", stats["dtmf_sip_info"], stats["dtmf_undelivered"])
	if err := ls.stop(); err != nil {
		t.Error(err)
	}
	u.close()
	check()
	checkLogs(t, logs)
	if turns < 1 {
		t.Fatal("the keys made no turn")
	}
	spaced := strings.Join(strings.Split(pin, ""), " ")
	for line := range strings.Lines(logs.String()) {
		if strings.Contains(line, pin) || strings.Contains(line, spaced) || strings.Contains(line, "pressed") {
			t.Errorf("a log line carries the caller's keys: %s", line)
		}
	}
}
