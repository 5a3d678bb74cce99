package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestWebRTCLoadRuns runs the built command with two calls for a short
// hold: both connect, packets arrive during the hold, and the report
// holds the CPU and jitter figures (their values are the benchmark's, not
// checked here). Real sockets: skipped with -short. Mutation: the callers
// not reporting the hold's packets -> packets 0.
func TestWebRTCLoadRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("real sockets and a child process")
	}
	bin := filepath.Join(t.TempDir(), "brisvox-bench")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "webrtc-load", "--calls", "2", "--warmup", "500ms", "--hold", "2s", "--json")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("webrtc-load: %v\n%s", err, stderr.String())
	}
	var rep loadReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, stdout.String())
	}
	if rep.Connected != 2 || rep.Packets < 150 || rep.Gaps == 0 || rep.CPUTotal <= 0 || rep.HoldS < 1.9 || rep.Application != "audio" {
		t.Errorf("report %+v", rep)
	}
	if code := run([]string{"webrtc-load", "--application", "lowdelay", "--calls", "1"}, &stdout, &stderr); code == 0 {
		t.Errorf("an unknown application was accepted")
	}
}

// TestSIPLoadRuns runs sip-load with three calls for a short hold: sipp
// completes them, the media peer gets the bot's RTP during the hold from
// every call, and the report holds the figures (their values are the
// benchmark's, not checked here). Real sockets, sipp: skipped with -short
// or without sip-tester. Mutation: the media peer not answering the
// streams (the latch never locks; the calls end by media timeout only
// after the hold, but the server counts no accepted RTP) -> rtp_accepted 0
// (seen failing).
func TestSIPLoadRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("real sockets and child processes")
	}
	if _, err := exec.LookPath("sipp"); err != nil {
		t.Skip("sipp (sip-tester) is not installed")
	}
	bin := filepath.Join(t.TempDir(), "brisvox-bench")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "sip-load", "--calls", "3", "--rate", "10", "--warmup", "500ms", "--hold", "2s", "--json")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("sip-load: %v\n%s", err, stderr.String())
	}
	var rep sipLoadReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, stdout.String())
	}
	if rep.Successful != 3 || rep.Failed != 0 || rep.Media.Streams != 3 || rep.Media.Packets < 250 || rep.Media.Gaps == 0 ||
		rep.CPUTotal <= 0 || rep.Invites != 3 || rep.Server["rtp_accepted"] == 0 {
		t.Errorf("report %+v", rep)
	}
}
