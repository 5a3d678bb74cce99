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
