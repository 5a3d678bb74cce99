package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/brisvox/brisvox/internal/leaktest"
)

// TestLatencyRuns builds brisvox, serves the keyless agent as a child and
// runs one turn of each kind through the PCM websocket: every turn is
// answered after the end of its speech, the tool turn called get_time,
// and each answered turn carries the server's timeline. Counts and
// invariants, never timings. Real sockets, a child process and the flite
// command: skipped with -short. Mutations: the latency event's stages
// not read -> no stages; the user_turn event's epoch not kept -> epoch 0
// and no tool counted; user_speaking not counted -> no speech start (each
// seen failing).
func TestLatencyRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("real sockets, a child process and flite")
	}
	if _, err := exec.LookPath("flite"); err != nil {
		t.Skip("no flite command (go tool task setup)")
	}
	base := leaktest.Snapshot()
	dir := t.TempDir()
	bin := filepath.Join(dir, "brisvox")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/brisvox/brisvox/cmd/brisvox").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	var stdout, stderr bytes.Buffer
	code := run([]string{"latency", "--brisvox", bin, "--agent", keylessAgent(t, dir), "--turns", "1", "--pause", "200ms", "--json"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("latency: exit %d\n%s", code, stderr.String())
	}
	var rep latencyReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, stdout.String())
	}
	if len(rep.Turns) != 2 || len(rep.Kinds) != 2 {
		t.Fatalf("%d turns, %d kinds: want 2 and 2\n%s", len(rep.Turns), len(rep.Kinds), stdout.String())
	}
	for _, r := range rep.Turns {
		if !r.Answered || r.LatencyMS <= 0 || r.Epoch == 0 || r.Spoke == 0 {
			t.Errorf("turn %+v: want answered after the end of speech, in an epoch, its speech start seen", r)
		}
		sum := 0.0
		for _, v := range r.Stages {
			sum += v
		}
		if _, ok := r.Stages["listen"]; !ok || math.Abs(sum-r.ServerMS) > 0.01 {
			t.Errorf("turn %q: stages %v do not split the server's %v ms", r.Phrase, r.Stages, r.ServerMS)
		}
	}
	if k := rep.Kinds[1]; k.Kind != "tool" || k.ToolRan != 1 || k.Answered != 1 {
		t.Errorf("tool kind %+v: want its one turn answered with get_time (heard %q)", k, rep.Turns[1].Heard)
	}
	waitGoroutines(t, base)
}

func TestLatencyFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"no binary", []string{"latency"}},
		{"no turns", []string{"latency", "--brisvox", "x", "--turns", "0"}},
		{"negative pause", []string{"latency", "--brisvox", "x", "--pause", "-1s"}},
		{"no answer timeout", []string{"latency", "--brisvox", "x", "--answer-timeout", "0s"}},
		{"an argument", []string{"latency", "--brisvox", "x", "extra"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code := run(tt.args, io.Discard, io.Discard); code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
		})
	}
}

// TestQuantile pins the nearest rank. Mutation caught: a rank rounded
// down (p90 of 10 values = the 9th -> the 8th).
func TestQuantile(t *testing.T) {
	ten := []float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}
	tests := []struct {
		name string
		v    []float64
		q    float64
		want float64
	}{
		{"none", nil, 0.5, 0},
		{"one", []float64{7}, 0.9, 7},
		{"median of ten", ten, 0.5, 5},
		{"p90 of ten", ten, 0.9, 9},
		{"p90 of twenty", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, 0.9, 18},
		{"median of three", []float64{3, 1, 2}, 0.5, 2},
		{"max", ten, 1, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := quantile(slices.Clone(tt.v), tt.q); got != tt.want {
				t.Errorf("quantile(%v, %v) = %v, want %v", tt.v, tt.q, got, tt.want)
			}
		})
	}
}

// TestNewUtterance: the utterance ends at its last sample of sound, in
// whole frames padded with silence. Mutation caught: the last sound found
// from the start (the first quiet sample after sound) -> the end of
// speech placed early, the latency overstated.
func TestNewUtterance(t *testing.T) {
	pcm := make([]int16, 1000)
	pcm[100] = 2000
	pcm[650] = -soundLevel // the last sound: frame 2, sample 10
	pcm[700] = soundLevel - 1
	u, err := newUtterance("plain", "x", pcm)
	if err != nil {
		t.Fatal(err)
	}
	if u.endFrame != 2 || u.endSample != 10 || len(u.frames) != 3 {
		t.Errorf("end at frame %d sample %d of %d frames, want 2, 10 of 3", u.endFrame, u.endSample, len(u.frames))
	}
	last := u.frames[2]
	if len(last) != 2*frameSamples || int16(binary.LittleEndian.Uint16(last[20:])) != -soundLevel || firstSound(last[22:]) != -1 {
		t.Errorf("last frame: the sound at 10, silence after it")
	}
	if _, err := newUtterance("plain", "x", make([]int16, 500)); !errors.Is(err, ErrSpeech) {
		t.Errorf("silence: %v, want ErrSpeech", err)
	}
}

func TestFirstSound(t *testing.T) {
	f := make([]byte, 2*frameSamples)
	if got := firstSound(f); got != -1 {
		t.Errorf("silence: %d", got)
	}
	binary.LittleEndian.PutUint16(f[2*5:], uint16(soundLevel-1))
	binary.LittleEndian.PutUint16(f[2*9:], uint16(0x10000-soundLevel)) // -soundLevel
	if got := firstSound(f); got != 9 {
		t.Errorf("first sound at %d, want 9", got)
	}
}

// TestSummarize: figures over the answered turns only, the tool counted
// per kind. Mutation caught: an unanswered turn's 0 in the figures ->
// min 0.
func TestSummarize(t *testing.T) {
	turns := []turnResult{
		{Kind: "plain", Spoke: 1, Answered: true, LatencyMS: 500, ServerMS: 480, Stages: map[string]float64{"turn_end": 300}},
		{Kind: "plain", Spoke: 1, Answered: true, LatencyMS: 700, ServerMS: 690, Stages: map[string]float64{"turn_end": 320}},
		{Kind: "plain"},
		{Kind: "tool", Answered: true, LatencyMS: 800, Tools: []string{"get_time"}},
		{Kind: "tool", Answered: true, LatencyMS: 900},
	}
	got := summarize(turns)
	if len(got) != 2 {
		t.Fatalf("%d kinds", len(got))
	}
	p, tool := got[0], got[1]
	if p.Kind != "plain" || p.Turns != 3 || p.Answered != 2 || p.Median != 500 || p.P90 != 700 || p.Min != 500 || p.Max != 700 || p.Server != 480 || p.Stages["turn_end"] != 300 || p.Unheard != 1 {
		t.Errorf("plain %+v", p)
	}
	if tool.Kind != "tool" || tool.Turns != 2 || tool.ToolRan != 1 || tool.Min != 800 || tool.Max != 900 || tool.Server != 0 {
		t.Errorf("tool %+v", tool)
	}
}
