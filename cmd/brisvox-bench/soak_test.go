package main

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/internal/leaktest"
)

const mib = 1 << 20

// soakSeriesGen builds n samples 10 s apart of a steady process (levels
// with seeded noise) and lets shape change one series: shape(i, n) is
// added to that series at sample i.
func soakSeriesGen(n int, series string, shape func(i, n int) float64) []soakSample {
	r := rand.New(rand.NewPCG(18, 5))
	noise := func(a float64) float64 { return (r.Float64()*2 - 1) * a }
	out := make([]soakSample, n)
	for i := range out {
		add := func(s string) float64 {
			if s == series && shape != nil {
				return shape(i, n)
			}
			return 0
		}
		out[i] = soakSample{
			ElapsedS:      float64(10 * i),
			Goroutines:    int(math.Round(400 + noise(6) + add("goroutines"))),
			HeapLiveBytes: uint64((60 + noise(1.5) + add("heap_live")) * mib),
			RSSBytes:      uint64((140 + noise(2) + add("rss")) * mib),
			FDs:           int(math.Round(60 + noise(2) + add("fds"))),
			Sockets:       int(math.Round(40 + noise(2) + add("sockets"))),
			LiveCalls:     int(math.Round(30 + noise(2))),
		}
	}
	return out
}

// linear is a rise of total over the whole run.
func linear(total float64) func(i, n int) float64 {
	return func(i, n int) float64 { return total * float64(i) / float64(n-1) }
}

// TestSoakVerdict judges synthetic series of a 10-minute soak (60 samples,
// the window samples 20-59, 6.5 minutes). Mutations caught, by case:
//   - "step early" fails when the fit takes every sample instead of the
//     last two thirds (a step at 30% of the run fits a line over all of
//     it with r² 0.63);
//   - "sawtooth" fails without the r² condition (its fitted rise is above
//     both floors: checked below, so the case keeps testing r²);
//   - "over the floor" / "under the floor" fail when the absolute floor is
//     off (10 read as 15 or 5; the leak is 1.9 a minute: 12 over the
//     window; under: 8);
//   - "heap under the floor" (6 MiB, over 5% of 60 MiB) fails when the
//     heap is read in KiB instead of MiB;
//   - "relative" fails without the relative floor (30 goroutines more of
//     4000 is 0.75%);
//   - "leak" cases fail when a series is read in the wrong unit or from
//     the wrong field.
func TestSoakVerdict(t *testing.T) {
	sawtooth := func(i, n int) float64 { return 70 * float64(i%19) / 18 } // GC cycles of 19 samples, 0-70 MiB
	for _, tc := range []struct {
		name   string
		n      int
		series string
		shape  func(i, n int) float64
		grew   []string
		exact  bool // the series without noise
		check  func(t *testing.T, r soakReport)
	}{
		{name: "flat with noise", n: 60},
		{name: "goroutine leak", n: 60, series: "goroutines", shape: linear(120), grew: []string{"goroutines"}},
		{name: "heap leak", n: 60, series: "heap_live", shape: linear(16), grew: []string{"heap_live"}},
		{name: "rss leak", n: 60, series: "rss", shape: linear(40), grew: []string{"rss"}},
		{name: "fd leak", n: 60, series: "fds", shape: linear(30), grew: []string{"fds"}},
		{name: "socket leak", n: 60, series: "sockets", shape: linear(30), grew: []string{"sockets"}},
		{name: "sawtooth", n: 60, series: "heap_live", shape: sawtooth, check: func(t *testing.T, r soakReport) {
			h := r.Series[1]
			if !(h.Growth > h.MinGrowth && h.Growth > h.MinShare*h.Level) || h.R2 >= soakMinR2 {
				t.Fatalf("the sawtooth no longer tests r²: growth %v (floors %v, %v), r² %v", h.Growth, h.MinGrowth, h.MinShare*h.Level, h.R2)
			}
		}},
		{name: "step early", n: 60, series: "goroutines", shape: func(i, n int) float64 {
			if i >= 18 { // the pools filling in the first third
				return 300
			}
			return 0
		}},
		{name: "over the floor", n: 60, series: "sockets", shape: linear(12 * 59 / 39.0), exact: true, grew: []string{"sockets"}},
		{name: "under the floor", n: 60, series: "sockets", shape: linear(8 * 59 / 39.0), exact: true},
		{name: "heap under the floor", n: 60, series: "heap_live", shape: linear(6 * 59 / 39.0)},
		{name: "relative", n: 60, series: "goroutines", shape: func(i, n int) float64 { return 3600 + linear(30*59/39.0)(i, n) }},
		{name: "six samples", n: 6, series: "goroutines", shape: linear(200), grew: []string{"goroutines"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			samples := soakSeriesGen(tc.n, tc.series, tc.shape)
			if tc.exact {
				for i := range samples {
					samples[i].Sockets = 40 + int(math.Round(tc.shape(i, tc.n)))
				}
			}
			r := soakVerdict(samples)
			if r.Error != "" {
				t.Fatal(r.Error)
			}
			want := tc.grew
			if want == nil {
				want = []string{}
			}
			if !slices.Equal(r.Grew, want) || r.OK != (len(want) == 0) {
				t.Errorf("grew %q (ok %v), want %q; %s", r.Grew, r.OK, want, r.Verdict)
				for _, s := range r.Series {
					t.Logf("%s: growth %.3g level %.4g r² %.3f", s.Series, s.Growth, s.Level, s.R2)
				}
			}
			if tc.check != nil {
				tc.check(t, r)
			}
			if _, err := json.Marshal(r); err != nil {
				t.Errorf("the report is not JSON: %v", err)
			}
		})
	}
}

// TestSoakTooFewSamples: five samples are an error, not a pass. Mutation
// caught: minSoakSamples lowered, or OK set before the check.
func TestSoakTooFewSamples(t *testing.T) {
	for _, n := range []int{0, 1, 5} {
		r := soakVerdict(soakSeriesGen(n, "", nil))
		if r.OK || r.Error == "" || !strings.Contains(r.Verdict, "no verdict") {
			t.Errorf("%d samples: ok %v, error %q, verdict %q", n, r.OK, r.Error, r.Verdict)
		}
	}
}

// TestSoakFit checks the fit on exact lines. Mutations caught: the
// growth taken over the whole run instead of the window, the slope not
// per minute, r² not 1 on a clean line.
func TestSoakFit(t *testing.T) {
	samples := soakSeriesGen(30, "", nil)
	for i := range samples {
		samples[i].Goroutines = 100 + 2*i // +2 a sample: +12 a minute
	}
	r := soakVerdict(samples)
	g := r.Series[0]
	if r.WindowFrom != 10 || r.WindowS != 190 {
		t.Errorf("window from %d over %v s, want 10 over 190 s", r.WindowFrom, r.WindowS)
	}
	if math.Abs(g.SlopePerMin-12) > 1e-9 || math.Abs(g.Growth-38) > 1e-9 || math.Abs(g.R2-1) > 1e-9 || math.Abs(g.Intercept-120) > 1e-9 {
		t.Errorf("slope %v/min, growth %v, r² %v, at the window's start %v: want 12, 38, 1, 120", g.SlopePerMin, g.Growth, g.R2, g.Intercept)
	}
}

// TestSoakSampler runs the sampler in a bubble: a sample at the start and
// at every tick, the live calls from the caller, the process's figures
// read for real (three sockets opened between two samples show as three
// more sockets and three more descriptors), and Stop waiting for its
// goroutine, none left once the bubble is quiet. Mutations caught: no
// sample at the start; the directory's own descriptor counted; sockets
// told by another prefix. Stop returning before the goroutine ends is
// TestSoakStopWaits'.
func TestSoakSampler(t *testing.T) {
	runtime.GC() // /gc/heap/live:bytes is 0 until the first cycle
	synctest.Test(t, func(t *testing.T) {
		base := leaktest.Snapshot()
		calls := 0
		s := startSoakSampler(10*time.Second, func() int { calls++; return calls })
		time.Sleep(15 * time.Second)
		var ls []net.Listener
		for range 3 {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			ls = append(ls, l)
		}
		time.Sleep(50 * time.Second)
		r := s.Stop()
		// The goroutine that closed done (and in TestSoakStopWaits the
		// one that called Stop) may not have exited yet; once the bubble
		// is quiet, a leaked one would still be there, blocked.
		synctest.Wait()
		if n := leaktest.Snapshot().NewSince(base); n != 0 {
			t.Errorf("%d goroutines left after Stop", n)
		}
		for _, l := range ls {
			l.Close()
		}
		if len(r.Samples) != 7 {
			t.Fatalf("%d samples, want 7 (0 to 60 s)", len(r.Samples))
		}
		for i, smp := range r.Samples {
			if smp.ElapsedS != float64(10*i) || smp.LiveCalls != i+1 {
				t.Errorf("sample %d at %v s with %d live calls, want %d s and %d", i, smp.ElapsedS, smp.LiveCalls, 10*i, i+1)
			}
			if smp.Goroutines == 0 || smp.HeapLiveBytes == 0 || smp.RSSBytes == 0 || smp.FDs == 0 {
				t.Errorf("sample %d: %+v", i, smp)
			}
		}
		a, b := r.Samples[1], r.Samples[2]
		if b.Sockets-a.Sockets != 3 || b.FDs-a.FDs != 3 {
			t.Errorf("three listeners: sockets %d -> %d, fds %d -> %d", a.Sockets, b.Sockets, a.FDs, b.FDs)
		}
		if r.Error != "" {
			t.Errorf("error %q", r.Error)
		}
	})
}

// TestSoakStopWaits stops the sampler while it is taking a sample (the
// live calls' count is held) and checks Stop returns only once that sample
// is in and the goroutine has ended. Mutation caught: Stop returning
// without waiting for the goroutine (it returns while the sample is held).
func TestSoakStopWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := leaktest.Snapshot()
		held, release := make(chan struct{}), make(chan struct{})
		calls := 0
		s := startSoakSampler(time.Second, func() int {
			calls++
			if calls == 3 {
				close(held)
				<-release
			}
			return calls
		})
		<-held
		var r soakReport
		stopped := make(chan struct{})
		go func() {
			r = s.Stop()
			close(stopped)
		}()
		synctest.Wait()
		select {
		case <-stopped:
			t.Fatal("Stop returned while a sample was being taken")
		default:
		}
		close(release)
		<-stopped
		if len(r.Samples) != 3 || r.Samples[2].LiveCalls != 3 {
			t.Errorf("%d samples, the last %+v: want the held one last", len(r.Samples), r.Samples[len(r.Samples)-1])
		}
		// The goroutine that closed done (and in TestSoakStopWaits the
		// one that called Stop) may not have exited yet; once the bubble
		// is quiet, a leaked one would still be there, blocked.
		synctest.Wait()
		if n := leaktest.Snapshot().NewSince(base); n != 0 {
			t.Errorf("%d goroutines left after Stop", n)
		}
	})
}

// TestSoakSamplerFor: a sampler given 35 s samples at 0, 10, 20 and 30 s
// and no more, however late Stop comes, and its goroutine has ended by
// then. Mutations caught: the limit ignored (7 samples), a sample taken at
// or after it (> for >=: with 30 s, the sample at 30 s).
func TestSoakSamplerFor(t *testing.T) {
	for _, tc := range []struct {
		span time.Duration
		want int
	}{{35 * time.Second, 4}, {30 * time.Second, 3}, {0, 7}} {
		synctest.Test(t, func(t *testing.T) {
			base := leaktest.Snapshot()
			s := startSoakSamplerFor(10*time.Second, tc.span, func() int { return 1 }, nil)
			time.Sleep(65 * time.Second)
			r := s.Stop()
			if len(r.Samples) != tc.want {
				t.Errorf("for %v: %d samples, want %d", tc.span, len(r.Samples), tc.want)
			}
			// The goroutine that closed done (and in TestSoakStopWaits the
			// one that called Stop) may not have exited yet; once the bubble
			// is quiet, a leaked one would still be there, blocked.
			synctest.Wait()
			if n := leaktest.Snapshot().NewSince(base); n != 0 {
				t.Errorf("%d goroutines left after Stop", n)
			}
		})
	}
}

// TestCountFDs checks the descriptor count against a file opened and
// closed. Mutation caught: the directory's own descriptor counted (the
// count is one more than /proc/self/fd less it).
func TestCountFDs(t *testing.T) {
	before, _, err := countFDs()
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	during, sockets, _ := countFDs()
	l.Close()
	after, _, _ := countFDs()
	if during != before+1 || after != before || sockets < 1 {
		t.Errorf("fds %d, %d with a listener (%d sockets), %d after", before, during, sockets, after)
	}
	// /proc/self/fd read directly includes the reader's own descriptor.
	if raw := readDirCount(t); raw != before+1 {
		t.Errorf("countFDs %d, the directory lists %d: want one fewer (the reader's own)", before, raw)
	}
}

func readDirCount(t *testing.T) int {
	t.Helper()
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(es)
}

// TestWriteSoakHTML checks the soak page: well-formed, a chart per series
// and one of the live calls, each series' chart with its samples and its
// fitted line starting at the window (the window's first sample's x), the
// grown series marked, the y axis around the data. Mutations caught: the
// fit drawn from the first sample, the fitted line left out, a grown
// series not marked, yFit ignored (the axis from 0) or yMinSpan not set.
func TestWriteSoakHTML(t *testing.T) {
	r := soakVerdict(soakSeriesGen(30, "sockets", linear(40)))
	var b bytes.Buffer
	if err := writeSoakHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	doc := parseReport(t, b.Bytes())
	checkFinite(t, doc)
	svgs := doc.all("svg")
	if len(svgs) != 6 {
		t.Fatalf("%d charts, want 6", len(svgs))
	}
	for i, svg := range svgs[:5] {
		lines := svg.all("polyline")
		if len(lines) != 2 {
			t.Fatalf("chart %d: %d lines, want the samples and the fit", i, len(lines))
		}
		data, fit := strings.Fields(lines[0].Attr["points"]), strings.Fields(lines[1].Attr["points"])
		if len(data) != 30 || len(fit) != 2 {
			t.Fatalf("chart %d: %d samples and %d fit points", i, len(data), len(fit))
		}
		if strings.Split(fit[0], ",")[0] != strings.Split(data[r.WindowFrom], ",")[0] {
			t.Errorf("chart %d: the fit starts at %s, the window at %s", i, fit[0], data[r.WindowFrom])
		}
	}
	// The y axis spans the data, at least three times the larger floor:
	// goroutines at 400 with floors 20 and 2% (8) span 60 or more, not
	// from 0.
	var ys []float64
	for _, tx := range svgs[0].all("text") {
		if tx.hasClass("tick") && tx.Attr["text-anchor"] == "end" {
			v, _ := strconv.ParseFloat(tx.Text, 64)
			ys = append(ys, v)
		}
	}
	if len(ys) < 2 || slices.Min(ys) <= 0 || slices.Max(ys)-slices.Min(ys) < 60 {
		t.Errorf("goroutines' y ticks %v: want a span of 60 or more around 400", ys)
	}
	rows := doc.all("tbody")[0].all("tr")
	for i, row := range rows {
		cells := row.all("td")
		last := cells[len(cells)-1]
		if want := r.Series[i].Series == "sockets"; last.hasClass("miss") != want || (last.Text == "grew") != want {
			t.Errorf("row %s: verdict %q marked %v", cells[0].Text, last.Text, last.hasClass("miss"))
		}
	}
	if !strings.Contains(doc.text(), "FAIL: grew without bound") {
		t.Error("the page does not give the verdict")
	}
	// The error report (too few samples) renders too.
	b.Reset()
	if err := writeSoakHTML(&b, soakVerdict(nil)); err != nil {
		t.Fatal(err)
	}
	checkFinite(t, parseReport(t, b.Bytes()))
}

// TestSoakChartYRange checks the y axes of two shapes a real soak gives: a
// constant series (the live calls a steady churn keeps) gets room around
// it, and a series from 0 (the heap before the first GC) is not padded
// below 0. Mutations caught: a flat series given a tiny span (its ticks
// all read "50"), the padding left below 0.
func TestSoakChartYRange(t *testing.T) {
	samples := soakSeriesGen(12, "", nil)
	for i := range samples {
		samples[i].LiveCalls = 50
		samples[i].HeapLiveBytes = 10 * mib
	}
	samples[0].HeapLiveBytes = 0
	var b bytes.Buffer
	if err := writeSoakHTML(&b, soakVerdict(samples)); err != nil {
		t.Fatal(err)
	}
	doc := parseReport(t, b.Bytes())
	yTicks := func(title string) []string {
		var out []string
		for _, tx := range chartTitled(t, doc, title).all("text") {
			if tx.hasClass("tick") && tx.Attr["text-anchor"] == "end" {
				out = append(out, tx.Text)
			}
		}
		return out
	}
	live := yTicks("Live calls")
	if len(live) < 3 || len(slices.Compact(slices.Clone(live))) != len(live) {
		t.Errorf("live calls' y ticks %q: want three or more, all different", live)
	}
	heap := yTicks("Live heap")
	if len(heap) == 0 || strings.HasPrefix(heap[0], "-") {
		t.Errorf("heap's y ticks %q: want none below 0", heap)
	}
}

// TestSoakPoolWorkers: the dispatcher's workers start in a burst and stay
// (kit.Workers), so the goroutines step up for good within the pool's
// bound; judged without them that is flat, while the same step with no
// workers behind it still grows (the idle 30-minute soak of 2026-12-04:
// +45 at 1 000-1 100 s, then flat, failed the verdict). Mutation caught:
// soakValue judging the raw goroutines (the first case grows).
func TestSoakPoolWorkers(t *testing.T) {
	step := func(samples []soakSample, workers bool) {
		for i := range samples {
			samples[i].PoolWorkers = 40
			if i >= 35 {
				samples[i].Goroutines += 45
				if workers {
					samples[i].PoolWorkers += 45
				}
			}
		}
	}
	withPool := soakSeriesGen(60, "", nil)
	step(withPool, true)
	if r := soakVerdict(withPool); !r.OK {
		t.Errorf("a step of the pool's workers: %s", r.Verdict)
	}
	without := soakSeriesGen(60, "", nil)
	step(without, false)
	if r := soakVerdict(without); r.OK || !slices.Equal(r.Grew, []string{"goroutines"}) {
		t.Errorf("the same step without workers behind it: grew %q, %s", r.Grew, r.Verdict)
	}
}
