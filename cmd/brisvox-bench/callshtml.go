package main

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The HTML report of `brisvox-bench calls`: one self-contained file (inline
// CSS and SVG drawn here, no scripts, fonts or styles from elsewhere) that
// reads the callsSweep for someone comparing voice engines. The charts'
// geometry is computed in Go (svgChart); html/template writes it, so every
// string that came from outside (the command line, the CPU's name, the
// reasons a run missed) is escaped. The markup is also well-formed XML, so
// the tests read it with encoding/xml.

// writeCallsHTML writes the report of s to w.
func writeCallsHTML(w io.Writer, s callsSweep) error {
	return callsPage.Execute(w, newCallsPage(s))
}

// callsPageData is what the page template reads.
type callsPageData struct {
	Title   string
	S       callsSweep
	Goals   []string
	Verdict string
	Head    []string
	Rows    [][]htmlCell
	// The checks: what each run's calls did besides their latencies (the
	// invariants a run must hold, and what was left out of its figures).
	CheckHead []string
	Checks    [][]htmlCell
	VAD       string
	Charts    []svgChart // the CDF first, full width
	Pairs     [][]svgChart
}

// htmlCell is one cell of the runs table; Miss marks a goal missed.
type htmlCell struct {
	Text string
	Miss bool
}

func newCallsPage(s callsSweep) callsPageData {
	g := s.Goals
	p := callsPageData{
		Title:   "brisvox calls: concurrent conversations on one machine",
		S:       s,
		Goals:   goalWords(g),
		Verdict: verdictWords(s),
		Head: []string{"N", "turns", "answered", "lost", "barge-ins",
			"engine-added p50 ms", "p99 ms", "max ms", "barge-in p99 ms", "jitter p99 ms",
			"CPU per call % of a core", "RSS per call KiB", "heap per call KiB",
			"GC pause p99 ms", "goroutines per call", "goals"},
	}
	for _, r := range s.Runs {
		verdict := "met"
		if !r.Met {
			verdict = "missed"
			if len(r.Why) > 0 {
				verdict += ": " + strings.Join(r.Why, "; ")
			}
		}
		p.Rows = append(p.Rows, []htmlCell{
			{Text: strconv.Itoa(r.N)},
			{Text: strconv.Itoa(r.Turns), Miss: r.Turns == 0},
			{Text: strconv.Itoa(r.Answered)},
			{Text: strconv.Itoa(r.Lost), Miss: r.Lost > 0},
			{Text: strconv.Itoa(r.BargeIns)},
			{Text: distNum(r.EngineAdded, r.EngineAdded.P50)},
			{Text: distNum(r.EngineAdded, r.EngineAdded.P99), Miss: over(r.EngineAdded, r.EngineAdded.P99, g.EngineAddedP99MS)},
			{Text: distNum(r.EngineAdded, r.EngineAdded.Max)},
			{Text: distNum(r.BargeIn, r.BargeIn.P99), Miss: over(r.BargeIn, r.BargeIn.P99, g.BargeInP99MS)},
			{Text: distNum(r.Jitter, r.Jitter.P99), Miss: over(r.Jitter, r.Jitter.P99, g.JitterP99MS)},
			{Text: num(r.CPUPerCallPct)},
			{Text: num(r.RSSPerCallKiB)},
			{Text: num(r.HeapPerCallKiB), Miss: g.HeapPerCallKiB > 0 && r.HeapPerCallKiB > g.HeapPerCallKiB},
			{Text: num(r.GCPauseP99MS)},
			{Text: num(r.GoroutinesPerCall)},
			{Text: verdict, Miss: !r.Met},
		})
	}
	p.CheckHead = []string{"N", "VAD", "tool turns", "barge-ins missed", "unjoined turns", "misheard turns",
		"stale frames", "tool repeats", "goroutines left", "sched latency p99 ms", "error"}
	var vads []string
	for _, r := range s.Runs {
		if r.VAD != "" && !slices.Contains(vads, r.VAD) {
			vads = append(vads, r.VAD)
		}
		p.Checks = append(p.Checks, []htmlCell{
			{Text: strconv.Itoa(r.N)},
			{Text: r.VAD},
			{Text: strconv.Itoa(r.ToolTurn)},
			{Text: strconv.Itoa(r.BargeMissed)},
			{Text: strconv.Itoa(r.Unjoined)},
			{Text: strconv.Itoa(r.Misheard), Miss: r.Misheard > 0},
			staleCell(r),
			{Text: strconv.Itoa(r.ToolRepeats), Miss: r.ToolRepeats > 0},
			{Text: strconv.Itoa(r.GoroutinesLeft), Miss: r.GoroutinesLeft > 0},
			{Text: num(r.SchedLatencyP99MS)},
			{Text: r.Error, Miss: r.Error != ""},
		})
	}
	p.VAD = strings.Join(vads, ", ")
	for _, r := range s.Runs {
		if r.Transport == "sip" {
			p.VAD += "; the callers over SIP (G.711 PCMU RTP, the calls' stages and Silero at 8 kHz), not measured over RTP: " + strings.Join(r.NotMeasured, ", ")
			break
		}
	}
	if s.VAD == "silero" {
		p.VAD += fmt.Sprintf("; windows under %g dBFS RMS not scored", s.FloorDBFS)
	}
	if s.NoiseDBFS < 0 {
		p.VAD += fmt.Sprintf("; callers' line noise %g dBFS RMS", s.NoiseDBFS)
	} else {
		p.VAD += "; callers' silence digital zero"
	}
	p.Charts = []svgChart{cdfChart(s, false), cdfChart(s, true)}
	p.Pairs = [][]svgChart{
		{perNChart(s, "CPU per call", "% of one core per call", "The server process's user+system CPU time over the hold, divided by N, in percent of one core. Flat means the cost per call does not grow with load.",
			[]nSeries{{"CPU per call", func(r callsRun) (float64, bool) { return r.CPUPerCallPct, true }}}, nil),
			perNChart(s, "Memory per call", "KiB per call", "The server's resident set (RSS) and its live heap (at the hold, less the heap before the calls) divided by N, in KiB. The dashed line is the heap goal.",
				[]nSeries{
					{"RSS per call", func(r callsRun) (float64, bool) { return r.RSSPerCallKiB, true }},
					{"heap per call", func(r callsRun) (float64, bool) { return r.HeapPerCallKiB, true }},
				}, goalLine(g.HeapPerCallKiB, "heap goal %s KiB")),
		},
		{perNChart(s, "Output jitter p99", "ms", "The 99th percentile of |arrival gap - 20 ms| of the bot's audio frames at the callers (kernel receive timestamps), within a spurt, over all calls of a run. The dashed line is the goal.",
			[]nSeries{{"jitter p99", func(r callsRun) (float64, bool) { return r.Jitter.P99, r.Jitter.Count > 0 }}}, goalLine(g.JitterP99MS, "goal %s ms")),
			perNChart(s, "Barge-in to silence p99", "ms", "The 99th percentile, over a run's barge-ins, of the caller's speech start (the VAD's decision) to the last bot audio the caller received. The dashed line is the goal.",
				[]nSeries{{"barge-in p99", func(r callsRun) (float64, bool) { return r.BargeIn.P99, r.BargeIn.Count > 0 }}}, goalLine(g.BargeInP99MS, "goal %s ms")),
		},
	}
	return p
}

// goalWords lists the goals that are set, in words.
func goalWords(g callsGoals) []string {
	var out []string
	if g.EngineAddedP99MS > 0 {
		out = append(out, "engine-added latency p99 ≤ "+num(g.EngineAddedP99MS)+" ms on every turn")
	}
	out = append(out, "no lost turn")
	if g.BargeInP99MS > 0 {
		out = append(out, "barge-in to silence p99 ≤ "+num(g.BargeInP99MS)+" ms")
	}
	if g.JitterP99MS > 0 {
		out = append(out, "output jitter p99 ≤ "+num(g.JitterP99MS)+" ms")
	}
	if g.HeapPerCallKiB > 0 {
		out = append(out, "heap per live call ≤ "+num(g.HeapPerCallKiB)+" KiB")
	}
	return out
}

// verdictWords says the sweep's verdict in a sentence or two.
func verdictWords(s callsSweep) string {
	if len(s.Runs) == 0 {
		return "No runs: nothing was measured."
	}
	var b strings.Builder
	if s.Largest > 0 {
		fmt.Fprintf(&b, "The largest N that met every goal is %d concurrent calls", s.Largest)
		if s.Machine.Cores > 0 {
			fmt.Fprintf(&b, ": %s calls per core on %d cores", num(float64(s.Largest)/float64(s.Machine.Cores)), s.Machine.Cores)
		}
		b.WriteString(".")
	} else {
		b.WriteString("No run met every goal.")
	}
	var missed []string
	for _, r := range s.Runs {
		if !r.Met {
			m := "N=" + strconv.Itoa(r.N)
			if len(r.Why) > 0 {
				m += " (" + strings.Join(r.Why, "; ") + ")"
			}
			missed = append(missed, m)
		}
	}
	if len(missed) > 0 {
		b.WriteString(" Missed: " + strings.Join(missed, ", ") + ".")
	}
	return b.String()
}

func over(d callsDist, v, goal float64) bool { return d.Count > 0 && goal > 0 && v > goal }

// distNum is a quantile of d, or a dash when d has no samples.
func distNum(d callsDist, v float64) string {
	if d.Count == 0 {
		return "–"
	}
	return num(v)
}

// num formats v with about three significant digits, a dash for NaN or
// an infinity (which JSON cannot carry either).
func num(v float64) string {
	switch a := math.Abs(v); {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "–"
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return trimZeros(strconv.FormatFloat(v, 'f', 1, 64))
	case a >= 1 || a == 0:
		return trimZeros(strconv.FormatFloat(v, 'f', 2, 64))
	default:
		return trimZeros(strconv.FormatFloat(v, 'f', 3, 64))
	}
}

func trimZeros(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	s = strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
	if s == "-0" {
		return "0"
	}
	return s
}

// tickLabel is a tick's value as short as it reads (0.3, not 0.30000000000000004).
func tickLabel(v float64) string {
	v = math.Round(v*1e6) / 1e6
	if v == 0 {
		v = 0 // not -0
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// The charts.

// palette is Okabe and Ito's colour-blind safe set (without its yellow,
// which does not read on white), with a dash pattern per round so more
// series than colours stay apart.
var palette = []string{"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000"}

var dashes = []string{"", "6 3", "2 3"}

func seriesStyle(i int) (color, dash string) {
	return palette[i%len(palette)], dashes[(i/len(palette))%len(dashes)]
}

// chartSpec is a chart in data units; build lays it out.
type chartSpec struct {
	title, caption string
	xLabel, yLabel string
	w, h           int
	xLog           bool
	// x and y ranges; zero hi: from the data (and the goal lines).
	xLo, xHi, yLo, yHi float64
	// yTicks fixed (for a CDF's 0 to 1); nil: nice steps.
	yTicks []float64
	// yFit: the y range from the data's least to its largest (a level's
	// changes read), not from 0.
	yFit bool
	// yMinSpan: the least span of a fitted y range (so a change below a
	// floor does not fill the chart).
	yMinSpan float64
	series   []seriesSpec
	vLines   []lineSpec // vertical, at x = v
	hLines   []lineSpec // horizontal, at y = v
	// legend entries that draw nothing (a run with no turns).
	notes []string
}

type seriesSpec struct {
	label  string
	xs, ys []float64
	tips   []string // one per point: a marker with a tooltip; nil: no markers
	color  string
	dash   string
}

type lineSpec struct {
	v     float64
	label string
	faint bool
}

// svgChart is a laid-out chart: positions in SVG pixels, ready to write.
type svgChart struct {
	Title, Caption, XLabel, YLabel string
	W, H                           int
	// Plot area.
	L, T, R, B float64
	XTicks     []svgTick
	YTicks     []svgTick
	Series     []svgSeries
	Lines      []svgLine
	Legend     []svgLegend
}

type svgTick struct {
	Pos   float64
	Label string
}

type svgSeries struct {
	Label, Color, Dash, Points string
	Marks                      []svgMark
}

type svgMark struct {
	X, Y float64
	Tip  string
}

type svgLine struct {
	X1, Y1, X2, Y2 float64
	Label          string
	LX, LY         float64
	Anchor         string
	Faint          bool
}

type svgLegend struct {
	Y           float64
	Color, Dash string
	Label       string
	Note        bool
}

const legendW = 190

func (c chartSpec) build() svgChart {
	out := svgChart{Title: c.title, Caption: c.caption, XLabel: c.xLabel, YLabel: c.yLabel, W: c.w, H: c.h}
	out.L, out.T, out.R, out.B = 64, 40, float64(c.w-legendW), float64(c.h-48)

	xLo, xHi, yLo, yHi := c.xLo, c.xHi, c.yLo, c.yHi
	if xHi <= xLo {
		xHi = xLo
		for _, s := range c.series {
			for _, x := range s.xs {
				xHi = maxFinite(xHi, x)
			}
		}
		xHi = niceTop(xHi)
	}
	if c.yFit {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, s := range c.series {
			for _, y := range s.ys {
				if finite(y) {
					lo, hi = math.Min(lo, y), math.Max(hi, y)
				}
			}
		}
		if lo > hi {
			lo, hi = 0, 1
		}
		// A flat series gets a fifth of its level (and at least 1) around
		// it, so the ticks have room.
		mid := (lo + hi) / 2
		if span := max(c.yMinSpan, 0.2*math.Abs(mid), 1); hi-lo < span {
			dataLo := lo
			lo, hi = mid-span/2, mid+span/2
			if lo < 0 && dataLo >= 0 {
				lo, hi = 0, hi-lo // counts and sizes do not go below 0
			}
		}
		step := niceCeil((hi - lo) / 5)
		yLo, yHi = math.Floor(lo/step)*step, math.Ceil(hi/step)*step
	}
	if yHi <= yLo {
		yHi = yLo
		for _, s := range c.series {
			for _, y := range s.ys {
				yHi = maxFinite(yHi, y)
			}
		}
		for _, l := range c.hLines {
			yHi = maxFinite(yHi, l.v)
		}
		yHi = niceTop(yHi * 1.08)
	}
	if xHi <= xLo {
		xHi = xLo + 1
	}
	if yHi <= yLo {
		yHi = yLo + 1
	}
	xpos := func(x float64) float64 {
		x = clampFinite(x, xLo, xHi)
		if c.xLog {
			return out.L + (out.R-out.L)*(math.Log10(x)-math.Log10(xLo))/(math.Log10(xHi)-math.Log10(xLo))
		}
		return out.L + (out.R-out.L)*(x-xLo)/(xHi-xLo)
	}
	ypos := func(y float64) float64 {
		y = clampFinite(y, yLo, yHi)
		return out.B - (out.B-out.T)*(y-yLo)/(yHi-yLo)
	}

	var xt []float64
	if c.xLog {
		xt = logTicks(xLo, xHi)
	} else {
		xt = linTicks(xLo, xHi)
	}
	for _, x := range xt {
		out.XTicks = append(out.XTicks, svgTick{Pos: xpos(x), Label: tickLabel(x)})
	}
	yt := c.yTicks
	if yt == nil {
		yt = linTicks(yLo, yHi)
	}
	for _, y := range yt {
		out.YTicks = append(out.YTicks, svgTick{Pos: ypos(y), Label: tickLabel(y)})
	}

	ly := out.T + 8
	for _, s := range c.series {
		var pts strings.Builder
		ss := svgSeries{Label: s.label, Color: s.color, Dash: s.dash}
		for i := range s.xs {
			x, y := xpos(s.xs[i]), ypos(s.ys[i])
			if i > 0 {
				pts.WriteByte(' ')
			}
			pts.WriteString(px(x) + "," + px(y))
			if s.tips != nil {
				ss.Marks = append(ss.Marks, svgMark{X: x, Y: y, Tip: s.tips[i]})
			}
		}
		ss.Points = pts.String()
		out.Series = append(out.Series, ss)
		out.Legend = append(out.Legend, svgLegend{Y: ly, Color: s.color, Dash: s.dash, Label: s.label})
		ly += 20
	}
	for _, n := range c.notes {
		out.Legend = append(out.Legend, svgLegend{Y: ly, Label: n, Note: true})
		ly += 20
	}
	for _, l := range c.vLines {
		if !finite(l.v) || l.v < xLo || l.v > xHi {
			continue
		}
		x := xpos(l.v)
		out.Lines = append(out.Lines, svgLine{X1: x, Y1: out.T, X2: x, Y2: out.B, Label: l.label, LX: x + 5, LY: out.B - 8, Anchor: "start", Faint: l.faint})
	}
	for _, l := range c.hLines {
		if !finite(l.v) || l.v < yLo || l.v > yHi {
			continue
		}
		y := ypos(l.v)
		// A goal's label at the left, where the costs of small N are
		// usually below it; a faint guide's at the right.
		ln := svgLine{X1: out.L, Y1: y, X2: out.R, Y2: y, Label: l.label, LX: out.L + 5, LY: y - 5, Anchor: "start", Faint: l.faint}
		if l.faint {
			ln.LX, ln.Anchor = out.R-4, "end"
		}
		out.Lines = append(out.Lines, ln)
	}
	return out
}

// cdfChart draws the engine-added latency's distribution per N, on a log
// axis from 0.1 ms (or lower, when the data go lower) to 50 ms (or the
// largest value). The tail chart shows the same lines from the 90th
// percentile up, where the goal is read.
func cdfChart(s callsSweep, tail bool) svgChart {
	c := chartSpec{
		title:  "Engine-added latency per turn, cumulative distribution",
		xLabel: "engine-added latency, ms (log scale)",
		yLabel: "share of turns",
		w:      1200, h: 440,
		xLog: true, xLo: 0.1, xHi: 50, yLo: 0, yHi: 1,
		yTicks: []float64{0, 0.2, 0.4, 0.6, 0.8, 1},
	}
	if tail {
		c.title = "The tail: the same distributions from the 90th percentile up"
		c.h, c.yLo, c.yTicks = 340, 0.9, []float64{0.9, 0.92, 0.94, 0.96, 0.98, 1}
	}
	minPos, maxV, clamped := math.Inf(1), 0.0, false
	for _, r := range s.Runs {
		for _, v := range r.EngineAdded.Points {
			if finite(v) && v > 0 {
				minPos = math.Min(minPos, v)
			}
			maxV = maxFinite(maxV, v)
		}
	}
	if minPos < c.xLo {
		c.xLo = math.Max(0.01, niceFloor(minPos))
	}
	if maxV > c.xHi {
		c.xHi = niceCeil(maxV)
	}
	i := 0
	for _, r := range s.Runs {
		d := r.EngineAdded
		if d.Count == 0 || len(d.Points) == 0 {
			c.notes = append(c.notes, fmt.Sprintf("N=%d: no turns", r.N))
			continue
		}
		color, dash := seriesStyle(i)
		i++
		ss := seriesSpec{label: fmt.Sprintf("N=%d: p99 %s ms", r.N, num(d.P99)), color: color, dash: dash}
		pts := d.Points
		if len(pts) == 1 {
			pts = []float64{pts[0], pts[0]}
		}
		for j, v := range pts {
			y := float64(j) / float64(len(pts)-1)
			if y < c.yLo {
				continue
			}
			if j > 0 && len(ss.xs) == 0 && y > c.yLo {
				// The tail's line enters at its bottom edge, where the
				// segment from the quantile below crosses it (x on the
				// log scale).
				y0 := float64(j-1) / float64(len(pts)-1)
				ss.xs = append(ss.xs, logLerp(pts[j-1], v, (c.yLo-y0)/(y-y0), c.xLo))
				ss.ys = append(ss.ys, c.yLo)
			}
			if v < c.xLo {
				clamped = true
			}
			ss.xs = append(ss.xs, v)
			ss.ys = append(ss.ys, y)
		}
		c.series = append(c.series, ss)
	}
	if g := s.Goals.EngineAddedP99MS; g > 0 {
		c.vLines = append(c.vLines, lineSpec{v: g, label: "goal: p99 ≤ " + num(g) + " ms"})
	}
	c.hLines = append(c.hLines, lineSpec{v: 0.99, label: "p99", faint: true})
	if tail {
		c.caption = "The top tenth of the chart above, stretched: a line that crosses the dotted p99 line left of the dashed goal meets the goal."
	} else {
		c.caption = "Each line is one run at N concurrent calls: the share of its turns whose engine-added latency (first audio at the caller, less the end of speech, the turn policy's delays and the mock providers' scripted latencies) was at most x. A line that crosses the dotted p99 line left of the dashed goal meets the goal."
	}
	if clamped {
		c.caption += " Turns below " + num(c.xLo) + " ms (at or below 0: within the clocks' resolution) are drawn at its left edge."
	}
	return c.build()
}

// nSeries is one figure of a run against N; ok false leaves the run out.
type nSeries struct {
	label string
	value func(callsRun) (float64, bool)
}

func goalLine(v float64, format string) []lineSpec {
	if v <= 0 {
		return nil
	}
	return []lineSpec{{v: v, label: fmt.Sprintf(format, num(v))}}
}

// perNChart draws figures of the runs against N, from 0.
func perNChart(s callsSweep, title, yLabel, caption string, series []nSeries, goals []lineSpec) svgChart {
	c := chartSpec{title: title, caption: caption, xLabel: "N, concurrent calls", yLabel: yLabel, w: 590, h: 340, hLines: goals}
	runs := slices.Clone(s.Runs)
	slices.SortStableFunc(runs, func(a, b callsRun) int { return a.N - b.N })
	for _, r := range runs {
		// The x axis spans every run's N, drawn or not.
		c.xHi = max(c.xHi, float64(r.N))
		if r.Turns == 0 {
			c.notes = append(c.notes, fmt.Sprintf("N=%d: no turns", r.N))
		}
	}
	c.xHi = niceTop(c.xHi * 1.04)
	for i, f := range series {
		color, dash := seriesStyle(i)
		ss := seriesSpec{label: f.label, color: color, dash: dash, tips: []string{}}
		for _, r := range runs {
			v, ok := f.value(r)
			// A run without turns held no conversation: its costs are
			// not a conversation's (nor, often, measured at all).
			if !ok || !finite(v) || r.Turns == 0 {
				continue
			}
			ss.xs = append(ss.xs, float64(r.N))
			ss.ys = append(ss.ys, v)
			ss.tips = append(ss.tips, fmt.Sprintf("N=%d: %s %s", r.N, num(v), yLabel))
		}
		if len(ss.xs) == 0 {
			ss.label += ": no data"
		}
		c.series = append(c.series, ss)
	}
	return c.build()
}

// Axis helpers.

// logLerp is the point the share f of the way from a to b on a log axis
// (linearly when either is below the axis' least value lo).
func logLerp(a, b, f, lo float64) float64 {
	if a < lo || b < lo {
		return a + f*(b-a)
	}
	return math.Exp(math.Log(a) + f*(math.Log(b)-math.Log(a)))
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func maxFinite(a, v float64) float64 {
	if finite(v) && v > a {
		return v
	}
	return a
}

func clampFinite(v, lo, hi float64) float64 {
	if !finite(v) || v < lo {
		return lo
	}
	return math.Min(v, hi)
}

// px formats a pixel position (clampFinite has kept NaN and infinities
// out of every one).
func px(v float64) string {
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// niceTop is the end of an axis from 0 that holds v: v rounded up to a
// round step of about an eighth of it (2.0001 ends at 2.5, not 5; 624 at
// 700).
func niceTop(v float64) float64 {
	if !finite(v) || v <= 0 {
		return 1
	}
	step := niceCeil(v / 8)
	return step * math.Ceil(v/step-1e-9)
}

// niceCeil is the smallest of 1, 2, 5 times a power of ten that is ≥ v.
func niceCeil(v float64) float64 {
	if !finite(v) || v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// niceFloor is the largest of 1, 2, 5 times a power of ten that is ≤ v.
func niceFloor(v float64) float64 {
	if !finite(v) || v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{5, 2, 1} {
		if m*p <= v*(1+1e-9) {
			return m * p
		}
	}
	return p
}

// linTicks are about six round ticks from lo to hi.
func linTicks(lo, hi float64) []float64 {
	step := niceCeil((hi - lo) / 6)
	var out []float64
	for i := math.Ceil(lo/step - 1e-9); ; i++ {
		t := i * step
		if t > hi*(1+1e-9) || len(out) > 20 {
			break
		}
		out = append(out, t)
	}
	return out
}

// logTicks are 1, 2, 5 times the powers of ten from lo to hi.
func logTicks(lo, hi float64) []float64 {
	var out []float64
	for p := math.Pow(10, math.Floor(math.Log10(lo))); p <= hi*(1+1e-9) && len(out) < 40; p *= 10 {
		for _, m := range []float64{1, 2, 5} {
			if t := m * p; t >= lo*(1-1e-9) && t <= hi*(1+1e-9) {
				out = append(out, t)
			}
		}
	}
	return out
}

// The page. The markup is well-formed XML (every element closed, no named
// entities but XML's own), so encoding/xml can check it.

const svgChartTemplate = `{{define "chart"}}<figure class="chart">
<svg xmlns="http://www.w3.org/2000/svg" width="{{.W}}" height="{{.H}}" viewBox="0 0 {{.W}} {{.H}}" role="img">
<title>{{.Title}}</title>
<text class="title" x="{{px .L}}" y="22">{{.Title}}</text>
<rect class="plot" x="{{px .L}}" y="{{px .T}}" width="{{px (sub .R .L)}}" height="{{px (sub .B .T)}}"/>
{{- $c := .}}
{{- range .XTicks}}
<line class="grid" x1="{{px .Pos}}" y1="{{px $c.T}}" x2="{{px .Pos}}" y2="{{px $c.B}}"/>
<line class="tick" x1="{{px .Pos}}" y1="{{px $c.B}}" x2="{{px .Pos}}" y2="{{px (add $c.B 5)}}"/>
<text class="tick" x="{{px .Pos}}" y="{{px (add $c.B 18)}}" text-anchor="middle">{{.Label}}</text>
{{- end}}
{{- range .YTicks}}
<line class="grid" x1="{{px $c.L}}" y1="{{px .Pos}}" x2="{{px $c.R}}" y2="{{px .Pos}}"/>
<line class="tick" x1="{{px (add $c.L -5)}}" y1="{{px .Pos}}" x2="{{px $c.L}}" y2="{{px .Pos}}"/>
<text class="tick" x="{{px (add $c.L -8)}}" y="{{px (add .Pos 4)}}" text-anchor="end">{{.Label}}</text>
{{- end}}
<text class="axis" x="{{px (mid $c.L $c.R)}}" y="{{px (add $c.B 38)}}" text-anchor="middle">{{.XLabel}}</text>
<text class="axis" transform="translate(16 {{px (mid $c.T $c.B)}}) rotate(-90)" text-anchor="middle">{{.YLabel}}</text>
{{- range .Lines}}
<line class="{{if .Faint}}guide{{else}}goal{{end}}" x1="{{px .X1}}" y1="{{px .Y1}}" x2="{{px .X2}}" y2="{{px .Y2}}"/>
<text class="{{if .Faint}}guide{{else}}goal{{end}}" x="{{px .LX}}" y="{{px .LY}}" text-anchor="{{.Anchor}}">{{.Label}}</text>
{{- end}}
{{- range .Series}}
<polyline class="series" points="{{.Points}}" stroke="{{.Color}}" stroke-dasharray="{{.Dash}}"/>
{{- $s := .}}
{{- range .Marks}}
<circle class="mark" cx="{{px .X}}" cy="{{px .Y}}" r="3.5" fill="{{$s.Color}}"><title>{{.Tip}}</title></circle>
{{- end}}
{{- end}}
{{- range .Legend}}
{{- if .Note}}
<text class="legend note" x="{{px (add $c.R 16)}}" y="{{px (add .Y 4)}}">{{.Label}}</text>
{{- else}}
<line class="legend" x1="{{px (add $c.R 16)}}" y1="{{px .Y}}" x2="{{px (add $c.R 40)}}" y2="{{px .Y}}" stroke="{{.Color}}" stroke-dasharray="{{.Dash}}"/>
<text class="legend" x="{{px (add $c.R 46)}}" y="{{px (add .Y 4)}}">{{.Label}}</text>
{{- end}}
{{- end}}
</svg>
<figcaption>{{.Caption}}</figcaption>
</figure>{{end}}`

const pageCSS = `
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #222; margin: 24px 32px; max-width: 1240px; }
h1 { font-size: 22px; margin: 0 0 8px; }
h2 { font-size: 17px; margin: 28px 0 8px; }
dl.meta { display: grid; grid-template-columns: max-content auto; gap: 2px 16px; margin: 8px 0; }
dl.meta dt { color: #555; }
dl.meta dd { margin: 0; }
code { font: 12.5px ui-monospace, "DejaVu Sans Mono", monospace; background: #f3f3f3; padding: 1px 4px; word-break: break-all; }
p.verdict { font-size: 16px; padding: 10px 14px; background: #eef5fb; border-left: 4px solid #0072B2; }
table.runs { border-collapse: collapse; font-size: 12.5px; }
table.runs th, table.runs td { border: 1px solid #ccc; padding: 3px 6px; text-align: right; }
table.runs th { background: #f3f3f3; font-weight: 600; vertical-align: bottom; }
table.runs td.why { text-align: left; max-width: 260px; }
table.runs td.miss { background: #fbe3d6; color: #8a2e00; font-weight: 600; }
figure.chart { margin: 12px 0 20px; display: inline-block; vertical-align: top; }
figure.chart figcaption { max-width: 560px; font-size: 12.5px; color: #444; margin-top: 2px; }
.wide figure.chart figcaption { max-width: 1100px; }
svg text { font-family: system-ui, sans-serif; fill: #222; }
svg text.title { font-size: 15px; font-weight: 600; }
svg text.tick { font-size: 11px; fill: #444; }
svg text.axis { font-size: 12px; fill: #333; }
svg text.legend { font-size: 12px; }
svg text.note { fill: #666; font-style: italic; }
svg text.goal { font-size: 11.5px; fill: #000; font-weight: 600; }
svg text.guide { font-size: 11px; fill: #777; }
svg rect.plot { fill: #fff; stroke: #999; }
svg line.grid { stroke: #e6e6e6; }
svg line.tick { stroke: #999; }
svg line.goal { stroke: #000; stroke-width: 1.5; stroke-dasharray: 7 4; }
svg line.guide { stroke: #999; stroke-dasharray: 2 3; }
svg line.legend { stroke-width: 2.5; }
svg polyline.series { fill: none; stroke-width: 2; stroke-linejoin: round; }
svg circle.mark { stroke: #fff; stroke-width: 1; }
`

const callsPageTemplate = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8"/>
<meta name="viewport" content="width=device-width, initial-scale=1"/>
<title>{{.Title}}</title>
<style>` + pageCSS + `</style>
</head>
<body>
<h1>{{.Title}}</h1>
<dl class="meta">
<dt>date</dt><dd>{{.S.Date}}</dd>
<dt>machine</dt><dd>{{.S.Machine.Cores}} cores, GOMAXPROCS {{.S.Machine.GOMAXPROCS}}, {{.S.Machine.CPU}}, {{.S.Machine.Go}}</dd>
{{- if .VAD}}
<dt>VAD</dt><dd>{{.VAD}}</dd>
{{- end}}
<dt>command</dt><dd><code>{{.S.Command}}</code></dd>
<dt>goals</dt><dd>{{range $i, $g := .Goals}}{{if $i}}; {{end}}{{$g}}{{end}}</dd>
</dl>
<p class="verdict">{{.Verdict}}</p>
<h2>Runs</h2>
{{- if .Rows}}
<table class="runs">
<thead><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>
{{- range .Rows}}
<tr>{{range $i, $c := .}}<td class="{{if eq $i 15}}why{{end}}{{if $c.Miss}} miss{{end}}">{{$c.Text}}</td>{{end}}</tr>
{{- end}}
</tbody>
</table>
<p>Cells on a red ground missed a goal. Latencies in ms, CPU in percent of one core, memory in KiB per live call; a dash: no samples.</p>
<h2>Checks</h2>
<table class="runs">
<thead><tr>{{range .CheckHead}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>
{{- range .Checks}}
<tr>{{range $i, $c := .}}<td class="{{if eq $i 10}}why{{end}}{{if $c.Miss}} miss{{end}}">{{$c.Text}}</td>{{end}}</tr>
{{- end}}
</tbody>
</table>
<p>What the calls did besides their latencies. Stale frames (bot audio after a clear), tool calls run twice, goroutines left after the calls ended and a misheard turn break an invariant (red). Unjoined turns (no server record matched) and missed barge-ins (no answer was playing) are left out of the latencies above.</p>
{{- else}}
<p>No runs.</p>
{{- end}}
<h2>Charts</h2>
{{- range .Charts}}
<div class="wide">{{template "chart" .}}</div>
{{- end}}
{{- range .Pairs}}
<div>{{range .}}{{template "chart" .}}{{end}}</div>
{{- end}}
</body>
</html>
`

var chartFuncs = template.FuncMap{
	"px":  px,
	"add": func(a, b float64) float64 { return a + b },
	"sub": func(a, b float64) float64 { return a - b },
	"mid": func(a, b float64) float64 { return (a + b) / 2 },
}

var callsPage = template.Must(template.Must(template.New("page").Funcs(chartFuncs).Parse(svgChartTemplate)).Parse(callsPageTemplate))

// staleCell is a run's stale frames: not measured over RTP (no clear
// message tells the callers when the bot's audio should stop).
func staleCell(r callsRun) htmlCell {
	if slices.Contains(r.NotMeasured, "stale_frames") {
		return htmlCell{Text: "not measured"}
	}
	return htmlCell{Text: strconv.Itoa(r.StaleFrames), Miss: r.StaleFrames > 0}
}
