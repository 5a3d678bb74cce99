package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brisvox/brisvox/media"
)

// browserResult is what scripts/browser/call.cjs prints: what the page
// knew when it stopped waiting.
type browserResult struct {
	OK        bool      `json:"ok"`
	State     string    `json:"state"`
	Call      string    `json:"call"`
	Turns     []string  `json:"turns"`
	Bot       []string  `json:"bot"`
	Answered  bool      `json:"answered"`
	Latencies []float64 `json:"latencies"`
	Audio     *struct {
		PacketsReceived int     `json:"packetsReceived"`
		AudioLevel      float64 `json:"audioLevel"`
		MaxLevel        float64 `json:"maxLevel"`
	} `json:"audio"`
	Error          string   `json:"error"`
	TranscriptText string   `json:"transcriptText"`
	LatencyText    string   `json:"latencyText"`
	ElapsedMS      int      `json:"elapsedMs"`
	Logs           []string `json:"logs"`
}

// browserNeeds lists what the browser test runs on; setup installs it.
func browserNeeds(root string) []string {
	var missing []string
	for _, p := range []string{"/usr/bin/chromium", filepath.Join(root, ".native", "browser", "node_modules", "puppeteer-core")} {
		if _, err := os.Stat(p); err != nil {
			missing = append(missing, p)
		}
	}
	for _, bin := range []string{"node", "unshare", "ip"} {
		if _, err := exec.LookPath(bin); err != nil {
			missing = append(missing, bin)
		}
	}
	return missing
}

// TestBrowserCall is the browser end-to-end test: Debian's chromium,
// driven by puppeteer-core, calls the keyless local agent through the
// page, its fake microphone playing a flite WAV of a question. It checks
// that the call connects, the question is transcribed, the answer's audio
// arrives (getStats: inbound-rtp audioLevel above zero, played through the
// page's <audio> element) and the page shows the transcript and a latency,
// and it saves a screenshot (.native/artifacts/browser-call.png). The test
// runs itself again inside `unshare -n` with only loopback up, so nothing
// leaves the machine. Skipped with -short; without its tools it fails
// under CI and skips elsewhere.
func TestBrowserCall(t *testing.T) {
	if testing.Short() {
		t.Skip("a real browser and real engines")
	}
	root := moduleRoot(t)
	if os.Getenv("BRISVOX_IN_NETNS") != "1" {
		if missing := browserNeeds(root); len(missing) > 0 {
			if os.Getenv("CI") != "" {
				t.Fatalf("missing %v (go tool task setup installs them)", missing)
			}
			t.Skipf("missing %v (go tool task setup installs them)", missing)
		}
		// The same test binary, in a network namespace of its own.
		cmd := exec.Command("unshare", "-n", "sh", "-c", `ip link set lo up && exec "$@"`, "sh",
			os.Args[0], "-test.run=^TestBrowserCall$", "-test.v", "-test.count=1", "-test.timeout=5m")
		cmd.Env = append(os.Environ(), "BRISVOX_IN_NETNS=1")
		out, err := cmd.CombinedOutput()
		t.Logf("inside unshare -n:\n%s", out)
		if err != nil {
			t.Fatalf("the browser test failed inside its network namespace: %v", err)
		}
		return
	}
	// Inside the namespace: the question, with pauses around it (chromium
	// plays the file in a loop; the greeting plays in the first pause).
	dir := t.TempDir()
	// "What is the time?": pocketsphinx hears flite's "what time is it"
	// through chromium's audio processing as "what town is ed" now and then.
	question := say(t, "What is the time?")
	pcm := make([]int16, 5*16000)
	pcm = append(pcm, question...)
	pcm = append(pcm, make([]int16, 6*16000)...)
	wavPath := filepath.Join(dir, "question.wav")
	f, err := os.Create(wavPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := media.WriteWAV(f, 16000, pcm); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	artifacts := filepath.Join(root, ".native", "artifacts")
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(artifacts, "browser-call.png")
	_ = os.Remove(shot)

	base, stop, stderr := served(t, filepath.Join(root, "examples", "agents", "local.toml"))
	node := exec.Command("node", filepath.Join(root, "scripts", "browser", "call.cjs"))
	node.Env = append(os.Environ(),
		"NODE_PATH="+filepath.Join(root, ".native", "browser", "node_modules"),
		"BRISVOX_URL="+base+"/", "BRISVOX_WAV="+wavPath, "BRISVOX_SCREENSHOT="+shot, "BRISVOX_TIMEOUT_MS=90000")
	var out, errOut syncBuffer
	node.Stdout, node.Stderr = &out, &errOut
	started := time.Now()
	runErr := node.Run()
	code := stop()
	var r browserResult
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if jerr := json.Unmarshal([]byte(lines[len(lines)-1]), &r); jerr != nil {
		t.Fatalf("call.cjs: %v (%v)\nstdout: %s\nstderr: %s\nserver: %s", runErr, jerr, out.String(), errOut.String(), stderr)
	}
	t.Logf("page after %v: state %q, turns %q, bot %q, latencies %v ms, audio %+v", time.Since(started).Round(time.Millisecond), r.State, r.Turns, r.Bot, r.Latencies, r.Audio)
	if runErr != nil || !r.OK {
		t.Errorf("the page did not get there: %v %s\npage logs: %v\nserver: %s", runErr, r.Error, r.Logs, stderr)
	}
	if len(r.Turns) == 0 || !strings.Contains(r.Turns[0], "time") {
		t.Errorf("the question was transcribed as %q", r.Turns)
	}
	if !r.Answered {
		t.Errorf("the answer to the question did not play whole: bot %q", r.Bot)
	}
	if r.Audio == nil || r.Audio.MaxLevel <= 0.01 || r.Audio.PacketsReceived == 0 {
		t.Errorf("no answer audio in getStats: %+v", r.Audio)
	}
	if len(r.Latencies) == 0 || r.Latencies[0] <= 0 || !strings.Contains(r.LatencyText, "ms") {
		t.Errorf("latency %v, shown %q", r.Latencies, r.LatencyText)
	}
	if len(r.Turns) > 0 && !strings.Contains(r.TranscriptText, r.Turns[0]) {
		t.Errorf("the transcript on the page does not show the question: %q", r.TranscriptText)
	}
	if st, err := os.Stat(shot); err != nil || st.Size() < 10_000 {
		t.Errorf("screenshot %s: %v", shot, err)
	} else {
		t.Logf("screenshot: %s (%d bytes)", shot, st.Size())
	}
	if code != 0 {
		t.Errorf("serve exited with %d:\n%s", code, stderr)
	}
}
