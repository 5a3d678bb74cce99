package signal

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.uber.org/goleak"
)

// sippUAS is sipp as the far end of our Dial: a UAS scenario on
// 127.0.0.1, its message trace and errors in a temporary directory.
type sippUAS struct {
	port int
	dir  string
	cmd  *exec.Cmd
	out  bytes.Buffer
}

// startSippUAS runs scenario ("" the built-in uas) in the background for
// one call, bounded by ctx.
func startSippUAS(ctx context.Context, t *testing.T, scenario string) *sippUAS {
	t.Helper()
	u := &sippUAS{port: freePort(t), dir: t.TempDir()}
	args := []string{"-m", "1", "-t", "u1", "-i", "127.0.0.1", "-p", strconv.Itoa(u.port),
		"-mp", strconv.Itoa(freeMediaPort(t)), "-timeout", "20s", "-timeout_error",
		"-trace_err", "-error_file", filepath.Join(u.dir, "err.log"),
		"-trace_msg", "-message_file", filepath.Join(u.dir, "msg.log"), "-nostdin"}
	if scenario == "" {
		args = append(args, "-sn", "uas")
	} else {
		args = append(args, "-sf", filepath.Join("testdata", "sipp", scenario))
	}
	u.cmd = exec.CommandContext(ctx, "sipp", args...)
	u.cmd.Stdout, u.cmd.Stderr = &u.out, &u.out
	if err := u.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // sipp binds its socket
	return u
}

// wait is sipp's exit code and the messages it saw (its trace).
func (u *sippUAS) wait(t *testing.T) (int, string) {
	t.Helper()
	err := u.cmd.Wait()
	code := 0
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("sipp: %v", err)
	}
	trace, _ := os.ReadFile(filepath.Join(u.dir, "msg.log"))
	if code != 0 {
		errs, _ := os.ReadFile(filepath.Join(u.dir, "err.log"))
		t.Logf("sipp exited %d\nerrors:\n%s\noutput tail:\n%s", code, errs, tailOf(u.out.Bytes(), 2000))
	}
	return code, string(trace)
}

// needSipp skips the test when sipp is missing, except under CI=true,
// where setup installs it and its absence fails the test.
func needSipp(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("sipp"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("sipp not installed (CI=true: setup installs it)")
		}
		t.Skip("sipp not installed (the setup script installs it)")
	}
}

// receivedWith counts the messages sipp received whose first line starts
// with prefix and that hold sub.
func receivedWith(trace, prefix, sub string) int {
	n := 0
	for _, block := range strings.Split(trace, "message received") {
		_, rest, ok := strings.Cut(block, ":\n")
		if !ok {
			continue
		}
		rest = strings.TrimLeft(rest, "\r\n ")
		if end := strings.Index(rest, "\n-----"); end >= 0 {
			rest = rest[:end]
		}
		if strings.HasPrefix(rest, prefix) && strings.Contains(rest, sub) {
			n++
		}
	}
	return n
}

// progressLog records Outbound.Progress calls.
type progressLog struct {
	mu    sync.Mutex
	codes []int
	sdps  int // calls with a non-nil SDP
}

func (p *progressLog) add(code int, sdp []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.codes = append(p.codes, code)
	if sdp != nil {
		p.sdps++
	}
}

// TestDialSipp places calls to a sipp UAS on loopback, one scenario per
// row, and checks both Dial's result and what sipp saw (its exit code:
// each scenario fails unless every message it expects came; its message
// trace for counts).
//
// Mutations caught (each seen failing):
//   - no answer: no CANCEL at the ring timeout (sipp's CANCEL wait runs
//     out, Dial ends at ctx's end: cancelled, not no_answer);
//   - auth: an Authorization computed without the password (sipp's
//     verifyauth refuses it: 403, rejected, not answered);
//   - 401 forever: the MaxAuthAttempts bound dropped (sipp saw 17552
//     INVITEs before the ring timeout, not 3);
//   - early media: Progress not called for an 18x with SDP;
//   - bye in the early dialog: the early dialog not looked up (the BYE
//     answered 481, the dial ends at the ring timeout: no_answer);
//   - bad SDP: the BYE without its Reason (sipp's check_it fails the
//     call: exit 1).
func TestDialSipp(t *testing.T) {
	if testing.Short() {
		t.Skip("loopback sipp calls: not under -short")
	}
	needSipp(t)
	ignore := goleak.IgnoreCurrent()
	defer goleak.VerifyNone(t, ignore)
	alice := &Credentials{User: "alice", Password: "secret"}
	for _, tc := range []struct {
		name, scenario string
		auth           *Credentials
		ring           time.Duration
		badAnswer      bool // Answered refuses an answer without PCMU
		outcome        DialOutcome
		code           int
		check          func(t *testing.T, trace string, p *progressLog)
	}{
		{name: "answer", outcome: DialAnswered, code: 200},
		{name: "busy", scenario: "uas_busy.xml", outcome: DialBusy, code: 486},
		{name: "no answer", scenario: "uas_no_answer.xml", ring: 2 * time.Second, outcome: DialNoAnswer,
			check: func(t *testing.T, trace string, _ *progressLog) {
				if n, a := received(trace, "CANCEL"), received(trace, "ACK"); n != 1 || a != 1 {
					t.Errorf("sipp saw %d CANCELs and %d ACKs, want 1 and 1", n, a)
				}
			}},
		{name: "auth right", scenario: "uas_auth.xml", auth: alice, outcome: DialAnswered, code: 200,
			check: func(t *testing.T, trace string, _ *progressLog) {
				if n := receivedWith(trace, "INVITE", "Authorization: Digest"); n != 1 {
					t.Errorf("sipp saw %d authenticated INVITEs, want 1", n)
				}
				if n := received(trace, "BYE"); n != 1 {
					t.Errorf("sipp saw %d BYEs, want 1", n)
				}
			}},
		{name: "auth wrong password", scenario: "uas_auth.xml", auth: &Credentials{User: "alice", Password: "wrong"},
			outcome: DialRejected, code: 403,
			check: func(t *testing.T, trace string, _ *progressLog) {
				if n := receivedWith(trace, "INVITE", "Authorization: Digest"); n < 1 || n > MaxAuthAttempts {
					t.Errorf("sipp saw %d authenticated INVITEs, want 1 to %d", n, MaxAuthAttempts)
				}
			}},
		{name: "401 forever", scenario: "uas_auth_forever.xml", auth: alice, outcome: DialAuthFailed, code: 401,
			check: func(t *testing.T, trace string, _ *progressLog) {
				n, a := received(trace, "INVITE"), receivedWith(trace, "INVITE", "Authorization: Digest")
				if n != 1+MaxAuthAttempts || a != MaxAuthAttempts {
					t.Errorf("sipp saw %d INVITEs (%d authenticated), want %d (%d)", n, a, 1+MaxAuthAttempts, MaxAuthAttempts)
				}
			}},
		{name: "early media", scenario: "uas_early_media.xml", outcome: DialAnswered, code: 200,
			check: func(t *testing.T, _ string, p *progressLog) {
				p.mu.Lock()
				defer p.mu.Unlock()
				if len(p.codes) != 1 || p.codes[0] != 183 || p.sdps != 1 {
					t.Errorf("Progress %v with %d SDPs, want [183] with 1", p.codes, p.sdps)
				}
			}},
		{name: "bye in the early dialog", scenario: "uas_early_bye.xml", outcome: DialRejected,
			check: func(t *testing.T, trace string, _ *progressLog) {
				if n, c, a := received(trace, "SIP/2.0 200"), received(trace, "CANCEL"), received(trace, "ACK"); n != 1 || c != 1 || a != 1 {
					t.Errorf("sipp saw %d 200s, %d CANCELs, %d ACKs, want 1 each", n, c, a)
				}
			}},
		{name: "bad sdp", scenario: "uas_bad_sdp.xml", badAnswer: true, outcome: DialBadAnswer, code: 200,
			check: func(t *testing.T, trace string, _ *progressLog) {
				if n, b := received(trace, "ACK"), receivedWith(trace, "BYE", "Reason: SIP;cause=488"); n != 1 || b != 1 {
					t.Errorf("sipp saw %d ACKs and %d BYEs with the Reason, want 1 and 1", n, b)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
			defer cancel()
			u := startSippUAS(ctx, t, tc.scenario)
			s, err := New(Config{Listen: []Listen{{Network: "udp", Addr: "127.0.0.1:0"}}, Log: zerolog.Nop()}, funcApp(nil))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Start(); err != nil {
				t.Fatal(err)
			}
			m := &fakeMedia{}
			o := outbound(m)
			o.Target = "sip:service@127.0.0.1:" + strconv.Itoa(u.port)
			o.Auth = tc.auth
			o.RingTimeout = 10 * time.Second
			if tc.ring > 0 {
				o.RingTimeout = tc.ring
			}
			p := &progressLog{}
			o.Progress = p.add
			if tc.badAnswer {
				o.Answered = func(answer []byte) (Media, error) {
					if !bytes.Contains(answer, []byte("PCMU/8000")) {
						return nil, errors.New("no codec in common")
					}
					return m, nil
				}
			}
			d, err := s.Dial(ctx, o)
			var de *DialError
			switch {
			case tc.outcome == DialAnswered && err == nil:
				d.Hangup(nil)
				<-d.Done()
			case tc.outcome == DialBadAnswer && errors.Is(err, ErrBadAnswer):
			case errors.As(err, &de) && de.Outcome == tc.outcome && de.Code == tc.code:
			default:
				t.Errorf("Dial: %v, want %s %d", err, tc.outcome, tc.code)
			}
			code, trace := u.wait(t)
			s.Close()
			if code != 0 {
				t.Errorf("sipp exited %d", code)
			}
			if tc.check != nil {
				tc.check(t, trace, p)
			}
			if got := s.Stats().Dials; got[string(tc.outcome)] != 1 {
				t.Errorf("dials %v", got)
			}
		})
	}
}
