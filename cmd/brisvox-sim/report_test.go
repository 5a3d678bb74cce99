package brisvoxsim

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/brisvox/brisvox/internal/leaktest"
	"github.com/brisvox/brisvox/sim"
)

// TestWriteSuite pins the two report formats byte for byte: the baseline
// comparison of the suites' JSON (check.sh) depends on them.
// Mutations caught: the exit status 0 with a failed line, the error field
// printed when empty, the summary counting wrong, the JSON not indented.
func TestWriteSuite(t *testing.T) {
	pass := line{Name: "s01_happy_path", Passed: true, FirstAudioMS: []float64{950}, ToSilenceMS: []float64{}, Fingerprint: "ab12"}
	fail := line{Name: "s02_barge_in", Error: "run 1: sim: check failed: late", FirstAudioMS: []float64{}, ToSilenceMS: []float64{12.5}}
	cases := []struct {
		name   string
		json   bool
		lines  []line
		want   string
		failed bool
	}{
		{name: "text, all passed", lines: []line{pass},
			want: "s01_happy_path                           pass first_audio_ms=[950] to_silence_ms=[] fingerprint=ab12\n1 passed, 0 failed\n"},
		{name: "text, one failed", lines: []line{pass, fail}, failed: true,
			want: "s01_happy_path                           pass first_audio_ms=[950] to_silence_ms=[] fingerprint=ab12\n" +
				"s02_barge_in                             FAIL first_audio_ms=[] to_silence_ms=[12.5] fingerprint= error=\"run 1: sim: check failed: late\"\n" +
				"1 passed, 1 failed\n"},
		{name: "json, all passed", json: true, lines: []line{pass},
			want: "[\n  {\n    \"name\": \"s01_happy_path\",\n    \"passed\": true,\n    \"first_audio_ms\": [\n      950\n    ],\n" +
				"    \"interrupt_to_silence_ms\": [],\n    \"fingerprint\": \"ab12\"\n  }\n]\n"},
		{name: "json, one failed", json: true, lines: []line{fail}, failed: true,
			want: "[\n  {\n    \"name\": \"s02_barge_in\",\n    \"passed\": false,\n    \"error\": \"run 1: sim: check failed: late\",\n" +
				"    \"first_audio_ms\": [],\n    \"interrupt_to_silence_ms\": [\n      12.5\n    ],\n    \"fingerprint\": \"\"\n  }\n]\n"},
		{name: "json, no lines", json: true, lines: []line{}, want: "[]\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := Report{cmd: Command{Name: Sim, JSON: c.json}, lines: c.lines}.Write(&stdout, &stderr)
			if got := stdout.String(); got != c.want {
				t.Errorf("stdout:\n%s\nwant:\n%s", got, c.want)
			}
			if c.failed != errors.Is(err, ErrFailed) || (!c.failed && err != nil) {
				t.Errorf("err = %v, want failed=%v", err, c.failed)
			}
			if stderr.Len() != 0 {
				t.Errorf("stderr %q", stderr.String())
			}
		})
	}
}

// TestPlay plays real suites in a bubble, as TestProgram does: the tool
// suite passes, and a case whose check fails gives a FAIL line and exit
// status 1. No goroutine of the calls is left.
// Mutations caught: a failed outcome reported as passed (the exit status
// of a failing scenario 0), the tools suite not selected by --suite.
func TestPlay(t *testing.T) {
	failing := sim.Scenarios()[0]
	failing.Name = "s01_with_a_failing_check"
	failing.Check = func(*sim.Result, *sim.Call) error { return errors.New("the check says no") }
	cases := []struct {
		name   string
		lines  func() []line
		n      int
		failed []string
	}{
		{name: "tools suite", lines: func() []line { return Command{Name: Sim, Suite: SuiteTools}.Run().lines }, n: len(sim.ToolCases())},
		{name: "a failing case", lines: func() []line { return play([]sim.Case{sim.Scenarios()[0], failing}) }, n: 2, failed: []string{failing.Name}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := leaktest.Count()
				lines := c.lines()
				synctest.Wait()
				if n := leaktest.Count(); n > base {
					t.Errorf("%d goroutines after the calls, %d before", n, base)
				}
				if len(lines) != c.n {
					t.Fatalf("%d lines, want %d", len(lines), c.n)
				}
				var failed []string
				for _, l := range lines {
					if !l.Passed {
						failed = append(failed, l.Name)
						if l.Error == "" {
							t.Errorf("%s failed without an error", l.Name)
						}
					} else if l.Fingerprint == "" || len(l.FirstAudioMS) == 0 {
						t.Errorf("%s passed without fingerprint or first audio: %+v", l.Name, l)
					}
				}
				if strings.Join(failed, ",") != strings.Join(c.failed, ",") {
					t.Errorf("failed %v, want %v", failed, c.failed)
				}
				var stdout bytes.Buffer
				err := Report{cmd: Command{Name: Sim}, lines: lines}.Write(&stdout, &stdout)
				want := 0
				if len(c.failed) > 0 {
					want = 1
				}
				if got := ExitCode(err); got != want {
					t.Errorf("exit status %d (%v), want %d\n%s", got, err, want, stdout.String())
				}
			})
		})
	}
}

// TestDemo plays the demo call in a bubble and reads its report: the tool
// turn, the answer, first audio at the mocks' default 950 ms, the checks'
// verdict; a call that could not run is reported on stderr with status 1.
// Mutations caught: the timeline measured from the wrong mark, a failed
// demo call printed as a conversation.
func TestDemo(t *testing.T) {
	t.Run("played", func(t *testing.T) {
		var r Report
		synctest.Test(t, func(t *testing.T) { r = Command{Name: Demo}.Run() })
		var stdout, stderr bytes.Buffer
		if err := r.Write(&stdout, &stderr); err != nil {
			t.Fatalf("demo: %v\n%s", err, stderr.String())
		}
		for _, want := range []string{"get_time({}) [t1.0]", "It is twelve o'clock.", "first_audio_out=950", "context equals what was heard"} {
			if !strings.Contains(stdout.String(), want) {
				t.Errorf("demo output lacks %q:\n%s", want, stdout.String())
			}
		}
	})
	t.Run("not played", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		err := Report{cmd: Command{Name: Demo}, err: errors.New("no call")}.Write(&stdout, &stderr)
		if ExitCode(err) != 1 || stdout.Len() != 0 || !strings.Contains(stderr.String(), "brisvox-sim demo: no call") {
			t.Errorf("err %v, stdout %q, stderr %q", err, stdout.String(), stderr.String())
		}
	})
}
