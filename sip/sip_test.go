package sip_test

import (
	"bytes"
	"context"
	"errors"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/sip"
	"github.com/brisvox/brisvox/sip/rtp"
	"github.com/brisvox/brisvox/sip/signal"
	"github.com/brisvox/brisvox/sip/trunk"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"
)

// rig is a SIP transport on 127.0.0.1 with sipp as the caller on
// 127.0.0.2: real sockets, so these tests are skipped under -short and
// when sip-tester is not installed.
type rig struct {
	t     *testing.T
	srv   *sip.Server
	calls chan *sip.Call
	dir   string
	fds   int
	// mediaPort is the media port of the last sipp run.
	mediaPort int
}

func newRig(t *testing.T, edit func(*sip.Config)) *rig {
	t.Helper()
	if testing.Short() {
		t.Skip("real sockets and sipp")
	}
	if _, err := exec.LookPath("sipp"); err != nil {
		t.Skip("sipp (sip-tester) is not installed: go tool task setup")
	}
	before := goleak.IgnoreCurrent()
	r := &rig{t: t, calls: make(chan *sip.Call, 4), dir: t.TempDir(), fds: countFDs(t)}
	cfg := sip.Config{
		Signal: signal.Config{Listen: []signal.Listen{{Network: "udp", Addr: "127.0.0.1:0"}}},
		Trunk:  trunk.Config{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}},
		Ports:  rtp.PortsConfig{Addr: netip.MustParseAddr("127.0.0.1"), Min: 31000, Max: 31100},
		Admit:  func() (conn.Admission, error) { return noSlot{}, nil },
		OnCall: func(c *sip.Call) { r.calls <- c },
		Log:    zerolog.Nop(),
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
	r.srv = srv
	if err := os.Symlink("/usr/share/sip-tester", filepath.Join(r.dir, "pcap")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Close()
		goleak.VerifyNone(t, before)
		// The sockets of the calls and of the server are all closed.
		if n := countFDs(t); n > r.fds {
			t.Errorf("%d file descriptors open after the test, %d before", n, r.fds)
		}
	})
	return r
}

// sipp runs a scenario (a built-in name or a file) against the server;
// it returns when sipp exits, with its output.
// sippRun is a sipp run in the background: done is closed once it
// exited, and then out and err hold its output and error.
type sippRun struct {
	done chan struct{}
	out  string
	err  error
}

// startSipp runs r.sipp in the background.
func (r *rig) startSipp(ctx context.Context, scenario string, extra ...string) *sippRun {
	s := &sippRun{done: make(chan struct{})}
	go func() { defer close(s.done); s.out, s.err = r.sipp(ctx, scenario, extra...) }()
	return s
}

func (r *rig) sipp(ctx context.Context, scenario string, extra ...string) (string, error) {
	// Ports of our own: another package's sipp may run on 127.0.0.2 at
	// the same time (sipp's media port is 6000 unless told).
	r.mediaPort = freePort(r.t, "127.0.0.2")
	args := []string{"-m", "1", "-timeout", "40s", "-timeout_error", "-i", "127.0.0.2", "-mi", "127.0.0.2",
		"-p", strconv.Itoa(freePort(r.t, "127.0.0.2")), "-mp", strconv.Itoa(r.mediaPort), "-nostdin", "-trace_err"}
	if strings.HasSuffix(scenario, ".xml") {
		abs, err := filepath.Abs(scenario)
		if err != nil {
			return "", err
		}
		args = append(args, "-sf", abs)
	} else {
		args = append(args, "-sn", scenario)
	}
	args = append(args, extra...)
	args = append(args, r.srv.Addrs()[0].Addr.String())
	cmd := exec.CommandContext(ctx, "sipp", args...)
	cmd.Dir = r.dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// call waits for the answered call.
func (r *rig) call() *sip.Call {
	r.t.Helper()
	select {
	case c := <-r.calls:
		return c
	case <-time.After(15 * time.Second):
		r.t.Fatal("no call was answered")
		return nil
	}
}

func countFDs(t *testing.T) int {
	t.Helper()
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(es)
}

// frames reads the caller's audio until the call ends, counting the
// frames and the loud ones (speech of the recording).
func frames(ctx context.Context, c *sip.Call) (n, loud int, err error) {
	f := messages.NewPooledFrame(c.InputRate(), nil)
	for {
		if err := c.ReadFrame(ctx, f); err != nil {
			return n, loud, err
		}
		n++
		var e int64
		for _, v := range f.PCM {
			e += int64(v) * int64(v)
		}
		if e/int64(len(f.PCM)) > 100*100 {
			loud++
		}
	}
}

// TestSippPcapCall: sipp's built-in uac_pcap (g711a.pcap: PCMA, 30 ms
// packets, 7 s of speech, then an RFC 4733 key press from another SSRC)
// reaches the call's stages as 16 kHz frames, most of them speech; the
// source latched is the one the SDP signalled; the bot's audio goes out
// and sipp echoes it back (-rtp_echo), which proves it arrived (the echoes
// carry our SSRC: dropped as a loop, never latched); the call ends with
// sipp's BYE and every socket is closed.
// Mutations caught (seen failing): no own-SSRC check (the echo of our
// stream, which arrives first, latched: ptime_in 20ms, loop 0); no
// sender (sent 0, no echo).
func TestSippPcapCall(t *testing.T) {
	r := newRig(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	run := r.startSipp(ctx, "uac_pcap", "-rtp_echo")
	c := r.call()
	bot := messages.NewPooledOutput(c.OutputRate(), nil)
	for i := range bot.PCM {
		bot.PCM[i] = int16(8000 * ((i / 8) % 2)) // a loud square wave
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for range 300 {
			<-tick.C
			if c.WriteFrame(bot) != nil {
				return
			}
		}
	})
	n, loud, err := frames(ctx, c)
	if !errors.Is(err, conn.ErrClosed) {
		t.Errorf("ReadFrame ended with %v, want conn.ErrClosed", err)
	}
	_, info, counters := c.Describe()
	wg.Wait()
	_ = c.Close()
	<-run.done
	if run.err != nil {
		t.Fatalf("sipp: %v\n%s", run.err, run.out)
	}
	t.Logf("frames %d loud %d; info %v; counters %v", n, loud, info, counters)
	// 9 s of call at 50 frames a second; the recording's 7 s are mostly speech.
	if n < 350 || loud < 200 {
		t.Errorf("%d frames, %d loud: the recording did not come through", n, loud)
	}
	// The recording latched (its 30 ms packets), not the echo of our own
	// 20 ms stream, which sipp reflects from the same address.
	if info["latched"] != info["signalled"][:strings.LastIndex(info["signalled"], ":")]+":"+strconv.Itoa(r.mediaPort) || info["codec"] != "PCMA/8" || info["ptime_in"] != "30ms" {
		t.Errorf("info %v", info)
	}
	if counters["sent"] < 250 || counters["dropped_loop"] < 100 {
		t.Errorf("sent %d, echoes dropped %d: the bot's audio did not reach sipp", counters["sent"], counters["dropped_loop"])
	}
}

// TestSippDTMF: the twelve RFC 4733 recordings of sip-tester (one SSRC,
// sequence numbers jumping between files, first packets of duration 0)
// give exactly twelve key presses, in order.
// Mutation caught: a detector that drops an event whose first packet has
// duration 0, or reports the three end packets three times (12 -> 0 or
// 36 presses); the learning run of the latch eating a whole press.
func TestSippDTMF(t *testing.T) {
	r := newRig(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	run := r.startSipp(ctx, "testdata/sipp/dtmf.xml")
	c := r.call()
	var mu sync.Mutex
	var keys []byte
	c.OnDTMF(func(d messages.DTMF) {
		mu.Lock()
		keys = append(keys, d.Digit)
		mu.Unlock()
	})
	_, _, _ = frames(ctx, c)
	_ = c.Close()
	<-run.done
	if run.err != nil {
		t.Fatalf("sipp: %v\n%s", run.err, run.out)
	}
	mu.Lock()
	defer mu.Unlock()
	if string(keys) != "1234567890*#" {
		t.Errorf("keys %q, want \"1234567890*#\"", keys)
	}
}

// noSlot is the admission of a test without a server.
type noSlot struct{}

func (noSlot) Release() {}
