package signal

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// TestDialSipp places calls to a sipp UAS on loopback: the built-in uas
// answers (180, 200, our ACK, our BYE: sipp exits 0 only after it saw
// them), uas_busy.xml answers 486 (DialBusy 486, sipp exits 0 only after
// the transaction's ACK).
func TestDialSipp(t *testing.T) {
	if testing.Short() {
		t.Skip("loopback sipp calls: not under -short")
	}
	if _, err := exec.LookPath("sipp"); err != nil {
		t.Fatal("sipp not installed (setup installs it)")
	}
	for _, tc := range []struct {
		name, scenario string
		outcome        DialOutcome
		code           int
	}{
		{"answer", "", DialAnswered, 200},
		{"busy", "uas_busy.xml", DialBusy, 486},
	} {
		t.Run(tc.name, func(t *testing.T) {
			port := freePort(t)
			args := []string{"-m", "1", "-t", "u1", "-i", "127.0.0.1", "-p", strconv.Itoa(port),
				"-mp", strconv.Itoa(freePort(t)), "-timeout", "20s", "-timeout_error", "-nostdin"}
			if tc.scenario == "" {
				args = append(args, "-sn", "uas")
			} else {
				args = append(args, "-sf", filepath.Join("testdata", "sipp", tc.scenario))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, "sipp", args...)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(500 * time.Millisecond) // sipp binds its socket
			s, err := New(Config{Listen: []Listen{{Network: "udp", Addr: "127.0.0.1:0"}}, Log: zerolog.Nop()}, funcApp(nil))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Start(); err != nil {
				t.Fatal(err)
			}
			m := &fakeMedia{}
			o := outbound(m)
			o.Target = "sip:service@127.0.0.1:" + strconv.Itoa(port)
			o.RingTimeout = 10 * time.Second
			d, err := s.Dial(ctx, o)
			var de *DialError
			switch {
			case tc.outcome == DialAnswered && err == nil:
				d.Hangup(nil)
				<-d.Done()
			case errors.As(err, &de) && de.Outcome == tc.outcome && de.Code == tc.code:
			default:
				t.Errorf("Dial: %v", err)
			}
			werr := cmd.Wait()
			s.Close()
			if werr != nil {
				t.Errorf("sipp: %v", werr)
			}
			if s.Stats().Dials[string(tc.outcome)] != 1 {
				t.Errorf("dials %v", s.Stats().Dials)
			}
		})
	}
}
