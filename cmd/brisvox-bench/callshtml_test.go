package main

import (
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// xmlNode is an element of the report read back with encoding/xml.
type xmlNode struct {
	Name  string
	Attr  map[string]string
	Kids  []*xmlNode
	Text  string // the character data directly inside, concatenated
	Outer *xmlNode
}

// parseReport reads b as strict XML (the report is written to be): a
// tag left open, a named entity of HTML's or an unescaped < fails here.
func parseReport(t *testing.T, b []byte) *xmlNode {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(b))
	d.Strict = true
	root := &xmlNode{Name: "#document"}
	cur := root
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the report is not well-formed: %v\n%s", err, b)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			n := &xmlNode{Name: tok.Name.Local, Attr: map[string]string{}, Outer: cur}
			for _, a := range tok.Attr {
				n.Attr[a.Name.Local] = a.Value
			}
			cur.Kids = append(cur.Kids, n)
			cur = n
		case xml.EndElement:
			cur = cur.Outer
		case xml.CharData:
			cur.Text += string(tok)
		}
	}
	if cur != root {
		t.Fatalf("the report ends inside <%s>", cur.Name)
	}
	return root
}

// all is every element under n (n included) named name, in document order.
func (n *xmlNode) all(name string) []*xmlNode {
	var out []*xmlNode
	var walk func(*xmlNode)
	walk = func(m *xmlNode) {
		if m.Name == name {
			out = append(out, m)
		}
		for _, k := range m.Kids {
			walk(k)
		}
	}
	walk(n)
	return out
}

// text is all character data under n.
func (n *xmlNode) text() string {
	var b strings.Builder
	var walk func(*xmlNode)
	walk = func(m *xmlNode) {
		b.WriteString(m.Text)
		for _, k := range m.Kids {
			walk(k)
		}
	}
	walk(n)
	return b.String()
}

func (n *xmlNode) hasClass(c string) bool { return slices.Contains(strings.Fields(n.Attr["class"]), c) }

// chartTitled is the svg whose <title> is title.
func chartTitled(t *testing.T, doc *xmlNode, prefix string) *xmlNode {
	t.Helper()
	for _, s := range doc.all("svg") {
		if ts := s.all("title"); len(ts) > 0 && strings.HasPrefix(ts[0].Text, prefix) {
			return s
		}
	}
	t.Fatalf("no chart titled %q", prefix)
	return nil
}

// sampleSweep is a sweep of clearly synthetic numbers (seeded).
func sampleSweep(ns ...int) callsSweep {
	r := rand.New(rand.NewPCG(18, 1))
	s := callsSweep{
		Date:    "2026-12-03T09:00:00Z",
		Machine: callsHost{Cores: 2, GOMAXPROCS: 2, CPU: "test CPU", Go: "go1.26"},
		Goals:   callsGoals{EngineAddedP99MS: 5, BargeInP99MS: 40, JitterP99MS: 5, HeapPerCallKiB: 256},
		Command: "brisvox-bench calls --sweep 50,100",
	}
	for i, n := range ns {
		var xs []float64
		for range 300 {
			xs = append(xs, math.Exp(r.NormFloat64())*0.5*float64(i+1))
		}
		s.Runs = append(s.Runs, callsRun{N: n, Turns: 300, Answered: 300, BargeIns: 20,
			EngineAdded: newCallsDist(xs), BargeIn: callsDist{Count: 20, P99: 20 + float64(i)},
			Jitter: callsDist{Count: 1000, P99: 1 + float64(i)}, CPUPerCallPct: 0.4, RSSPerCallKiB: 300,
			HeapPerCallKiB: 200, GoroutinesPerCall: 11, Met: true})
		s.Largest = n
	}
	return s
}

func render(t *testing.T, s callsSweep) ([]byte, *xmlNode) {
	t.Helper()
	var b bytes.Buffer
	if err := writeCallsHTML(&b, s); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), parseReport(t, b.Bytes())
}

// numericAttrs are the SVG attributes that must hold a finite number.
var numericAttrs = []string{"x", "y", "x1", "y1", "x2", "y2", "cx", "cy", "r", "width", "height"}

// checkFinite fails on any NaN or infinity in the SVG's numbers or in the
// text.
func checkFinite(t *testing.T, doc *xmlNode) {
	t.Helper()
	for _, svg := range doc.all("svg") {
		var walk func(*xmlNode)
		walk = func(n *xmlNode) {
			for _, a := range numericAttrs {
				if v, ok := n.Attr[a]; ok && n.Name != "svg" {
					if f, err := strconv.ParseFloat(v, 64); err != nil || !finite(f) {
						t.Errorf("<%s %s=%q>: not a finite number", n.Name, a, v)
					}
				}
			}
			if p, ok := n.Attr["points"]; ok {
				for _, xy := range strings.Fields(p) {
					for _, v := range strings.Split(xy, ",") {
						if f, err := strconv.ParseFloat(v, 64); err != nil || !finite(f) {
							t.Errorf("polyline point %q: not a finite number", xy)
						}
					}
				}
			}
			for _, k := range n.Kids {
				walk(k)
			}
		}
		walk(svg)
	}
	txt := doc.text()
	for _, bad := range []string{"NaN", "+Inf", "-Inf"} {
		if strings.Contains(txt, bad) {
			t.Errorf("the report's text has %s", bad)
		}
	}
}

// TestCallsHTMLShapes renders the shapes a sweep can take and checks each
// is well-formed with only finite numbers. Mutations caught: a template
// tag left unclosed (<meta> without its slash) or an HTML entity such as
// &nbsp; fails the strict parse; dropping the finite guard of clampFinite or of num
// lets the NaN and infinite runs through as "NaN".
func TestCallsHTMLShapes(t *testing.T) {
	zeroTurns := sampleSweep(50)
	zeroTurns.Runs[0] = callsRun{N: 50, Why: []string{"no turns"}}
	zeroTurns.Largest = 0
	nonFinite := sampleSweep(50, 100)
	nonFinite.Runs[0].CPUPerCallPct = math.NaN()
	nonFinite.Runs[0].RSSPerCallKiB = math.Inf(1)
	nonFinite.Runs[1].Jitter.P99 = math.Inf(1)
	nonFinite.Runs[1].EngineAdded.Points[3] = math.NaN()
	nonFinite.Runs[1].EngineAdded.P99 = math.NaN()
	negative := sampleSweep(50)
	negative.Runs[0].EngineAdded.Points[0] = -0.3 // engine-added can come out below 0
	for _, tc := range []struct {
		name  string
		s     callsSweep
		lines int // polylines in the CDF chart
	}{
		{"empty", callsSweep{}, 0},
		{"one run", sampleSweep(100), 1},
		{"five runs", sampleSweep(50, 100, 200, 400, 600), 5},
		{"zero turns", zeroTurns, 0},
		{"non-finite values", nonFinite, 2},
		{"a negative latency", negative, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, doc := render(t, tc.s)
			checkFinite(t, doc)
			if n := len(chartTitled(t, doc, "Engine-added latency").all("polyline")); n != tc.lines {
				t.Errorf("%d lines in the CDF chart, want %d", n, tc.lines)
			}
			if n := len(doc.all("svg")); n != 6 {
				t.Errorf("%d charts, want 6", n)
			}
			for _, tb := range doc.all("tbody") { // the runs and the checks
				if rows := len(tb.all("tr")); rows != len(tc.s.Runs) {
					t.Errorf("%d table rows, want %d", rows, len(tc.s.Runs))
				}
			}
		})
	}
}

// TestCallsHTMLEscapes puts markup in every string that comes from outside
// and checks it comes out as text, not elements. Mutation caught: the
// page written with text/template (or a string passed as template.HTML)
// puts a <script> element into the report.
func TestCallsHTMLEscapes(t *testing.T) {
	s := sampleSweep(50, 100)
	s.Command = `brisvox-bench calls --report "x.html" <script>alert(1)</script>`
	s.Machine.CPU = `"><img src=x onerror=alert(2)>`
	s.Runs[1].Met = false
	s.Runs[1].Why = []string{"<b>lost</b> & found"}
	raw, doc := render(t, s)
	for _, el := range []string{"script", "img", "b"} {
		if n := len(doc.all(el)); n != 0 {
			t.Errorf("%d <%s> elements: a string was not escaped", n, el)
		}
	}
	txt := doc.text()
	for _, want := range []string{s.Command, s.Machine.CPU, "<b>lost</b> & found"} {
		if !strings.Contains(txt, want) {
			t.Errorf("the report does not show %q as text", want)
		}
	}
	if bytes.Contains(raw, []byte("<script")) {
		t.Error("the raw report has <script")
	}
}

// TestCallsHTMLCDFChart checks the CDF chart's structure: one line per
// run with turns, in the runs' order, each from (its smallest, 0) to (its
// largest, 1) with y never falling; the goal a vertical line at 5 ms on
// the log axis, between the 2 and 10 ms ticks; a legend entry per N, the
// run without turns named as such; the tail chart's lines from its bottom
// edge to its top. Mutations caught: skipping a run's line or the goal
// line, the y of a point inverted (SVG's y grows downwards), the goal
// drawn at a linear instead of a log position, the tail's line starting at
// the first quantile above p90 (a gap under it).
func TestCallsHTMLCDFChart(t *testing.T) {
	s := sampleSweep(50, 100, 200)
	s.Runs = append(s.Runs, callsRun{N: 400})
	_, doc := render(t, s)
	svg := chartTitled(t, doc, "Engine-added latency")
	lines := svg.all("polyline")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3", len(lines))
	}
	var plot *xmlNode
	for _, r := range svg.all("rect") {
		if r.hasClass("plot") {
			plot = r
		}
	}
	f := func(n *xmlNode, a string) float64 {
		v, _ := strconv.ParseFloat(n.Attr[a], 64)
		return v
	}
	top, bottom := f(plot, "y"), f(plot, "y")+f(plot, "height")
	for i, l := range lines {
		pts := strings.Fields(l.Attr["points"])
		if len(pts) != len(s.Runs[i].EngineAdded.Points) {
			t.Errorf("line %d: %d points, want %d", i, len(pts), len(s.Runs[i].EngineAdded.Points))
		}
		prevY := math.Inf(1)
		for _, p := range pts {
			xy := strings.Split(p, ",")
			y, _ := strconv.ParseFloat(xy[1], 64)
			if y > prevY {
				t.Errorf("line %d falls at %s", i, p)
				break
			}
			prevY = y
		}
		first, last := strings.Split(pts[0], ","), strings.Split(pts[len(pts)-1], ",")
		if first[1] != px(bottom) || last[1] != px(top) {
			t.Errorf("line %d runs from y %s to %s, want %s to %s", i, first[1], last[1], px(bottom), px(top))
		}
	}
	// The tail chart's lines enter at its bottom edge (p90, interpolated
	// between the quantiles either side) and end at its top.
	tail := chartTitled(t, doc, "The tail")
	for _, r := range tail.all("rect") {
		if r.hasClass("plot") {
			top, bottom = f(r, "y"), f(r, "y")+f(r, "height")
		}
	}
	for i, l := range tail.all("polyline") {
		pts := strings.Fields(l.Attr["points"])
		first, last := strings.Split(pts[0], ","), strings.Split(pts[len(pts)-1], ",")
		if first[1] != px(bottom) || last[1] != px(top) {
			t.Errorf("tail line %d runs from y %s to %s, want %s to %s", i, first[1], last[1], px(bottom), px(top))
		}
	}
	tick := map[string]float64{}
	for _, tx := range svg.all("text") {
		if tx.hasClass("tick") && tx.Attr["text-anchor"] == "middle" {
			tick[tx.Text] = f(tx, "x")
		}
	}
	var goal *xmlNode
	for _, l := range svg.all("line") {
		if l.hasClass("goal") {
			goal = l
		}
	}
	if goal == nil {
		t.Fatal("no goal line")
	}
	// On a log axis 5 sits at log10(5/2)/log10(10/2) = 0.57 of the way
	// from 2 to 10; on a linear one at 3/8.
	x, x2, x10 := f(goal, "x1"), tick["2"], tick["10"]
	if x != f(goal, "x2") || math.Abs((x-x2)/(x10-x2)-math.Log10(2.5)/math.Log10(5)) > 0.01 {
		t.Errorf("goal line at x %v..%v, ticks 2 at %v and 10 at %v: not 5 ms on a log axis", x, f(goal, "x2"), x2, x10)
	}
	legend := svg.text()
	for _, want := range []string{"N=50: p99", "N=100: p99", "N=200: p99", "N=400: no turns", "goal: p99 ≤ 5 ms"} {
		if !strings.Contains(legend, want) {
			t.Errorf("the chart does not say %q", want)
		}
	}
}

// TestCallsHTMLPerNCharts checks the charts against N: a point per run
// with turns in the order of N even when the sweep lists them out of
// order (the run without turns named in the legend, its N on the axis but
// its zeros not drawn), markers whose tooltips give the value, and the
// goal as a horizontal line at its value. Mutations caught: the runs left
// unsorted (the line doubles back), a run without turns drawn at 0, the
// goal line left out, a marker's tooltip naming another run.
func TestCallsHTMLPerNCharts(t *testing.T) {
	s := sampleSweep(200, 50, 100)
	s.Runs[0].Jitter.P99 = 7
	s.Runs = append(s.Runs, callsRun{N: 400, Why: []string{"no turns"}}) // nothing measured: not drawn
	_, doc := render(t, s)
	for _, tc := range []struct {
		title string
		goal  bool
		tips  []string
	}{
		{"CPU per call", false, []string{"N=50: 0.4", "N=100: 0.4", "N=200: 0.4"}},
		{"Memory per call", true, []string{"N=50: 300", "N=100: 300", "N=200: 300", "N=50: 200", "N=100: 200", "N=200: 200"}},
		{"Output jitter p99", true, []string{"N=50: 2 ms", "N=100: 3 ms", "N=200: 7 ms"}},
		{"Barge-in to silence p99", true, []string{"N=50: 21 ms", "N=100: 22 ms", "N=200: 20 ms"}},
	} {
		t.Run(tc.title, func(t *testing.T) {
			svg := chartTitled(t, doc, tc.title)
			for _, l := range svg.all("polyline") {
				prev := math.Inf(-1)
				for _, p := range strings.Fields(l.Attr["points"]) {
					x, _ := strconv.ParseFloat(strings.Split(p, ",")[0], 64)
					if x <= prev {
						t.Errorf("the line goes back at %s", p)
					}
					prev = x
				}
				if n := len(strings.Fields(l.Attr["points"])); n != 3 {
					t.Errorf("%d points, want 3", n)
				}
			}
			var tips []string
			for _, c := range svg.all("circle") {
				tips = append(tips, c.text())
			}
			if len(tips) != len(tc.tips) {
				t.Fatalf("tooltips %q, want %q", tips, tc.tips)
			}
			for i := range tips {
				if !strings.HasPrefix(tips[i], tc.tips[i]) {
					t.Errorf("tooltip %d: %q, want %q...", i, tips[i], tc.tips[i])
				}
			}
			if !strings.Contains(svg.text(), "N=400: no turns") {
				t.Errorf("the run without turns is not named")
			}
			xMax := 0.0
			for _, tx := range svg.all("text") {
				if tx.hasClass("tick") && tx.Attr["text-anchor"] == "middle" {
					v, _ := strconv.ParseFloat(tx.Text, 64)
					xMax = max(xMax, v)
				}
			}
			if xMax < 400 {
				t.Errorf("the x axis ends at %v: N=400 is off it", xMax)
			}
			goals := 0
			for _, l := range svg.all("line") {
				if l.hasClass("goal") {
					goals++
					if l.Attr["y1"] != l.Attr["y2"] {
						t.Errorf("goal line not horizontal: %v", l.Attr)
					}
				}
			}
			if want := map[bool]int{false: 0, true: 1}[tc.goal]; goals != want {
				t.Errorf("%d goal lines, want %d", goals, want)
			}
		})
	}
}

// TestCallsHTMLTable checks the runs table marks exactly the missed goals:
// a lost turn, a p99 over its goal (one at the goal meets it: the goals
// say ≤), heap per call over its goal, a run without turns, and the
// verdict cell with its reasons. Mutations caught: > turned into >= in
// over (the run at exactly 5 ms is marked), a miss flag dropped.
func TestCallsHTMLTable(t *testing.T) {
	s := sampleSweep(50, 100, 200)
	s.Runs[0].EngineAdded.P99 = 5 // at the goal: met
	s.Runs[1].EngineAdded.P99 = 5.01
	s.Runs[1].Lost, s.Runs[1].Met, s.Runs[1].Why = 2, false, []string{"engine-added p99 5.01 ms > 5 ms", "2 lost turns"}
	s.Runs[2].HeapPerCallKiB, s.Runs[2].Met, s.Runs[2].Why = 300, false, []string{"heap per call 300 KiB > 256 KiB"}
	s.Runs[2].BargeIn.P99 = 41
	s.Runs[2].EngineAdded.P99 = 4
	s.Largest = 50
	_, doc := render(t, s)
	rows := doc.all("tbody")[0].all("tr")
	head := doc.all("thead")[0].all("th")
	want := [][]string{nil, {"lost", "p99 ms", "goals"}, {"barge-in p99 ms", "heap per call KiB", "goals"}}
	for i, r := range rows {
		var missed []string
		for j, c := range r.all("td") {
			if c.hasClass("miss") {
				missed = append(missed, head[j].Text)
			}
		}
		if !slices.Equal(missed, want[i]) {
			t.Errorf("row %d (N=%d): missed %q, want %q", i, s.Runs[i].N, missed, want[i])
		}
	}
	if got := rows[1].all("td")[15].Text; got != "missed: engine-added p99 5.01 ms > 5 ms; 2 lost turns" {
		t.Errorf("verdict cell %q", got)
	}
}

// TestCallsHTMLChecks checks the checks table: a row per run, the
// invariants broken marked (stale audio, a tool run twice, goroutines
// left, a misheard turn, a run's error), the counts that are not
// invariants not, and the VAD named in the header. Mutations caught: a
// miss flag dropped, the checks' rows built from another run.
func TestCallsHTMLChecks(t *testing.T) {
	s := sampleSweep(50, 100, 200)
	for i := range s.Runs {
		s.Runs[i].VAD = "silero"
		s.Runs[i].Unjoined, s.Runs[i].BargeMissed = 1, 2 // not invariants
	}
	s.Runs[1].StaleFrames, s.Runs[1].ToolRepeats = 3, 1
	s.Runs[2].GoroutinesLeft, s.Runs[2].Misheard, s.Runs[2].Error = 12, 1, "the callers' process exited"
	_, doc := render(t, s)
	tables := doc.all("table")
	if len(tables) != 2 {
		t.Fatalf("%d tables, want the runs and the checks", len(tables))
	}
	head := tables[1].all("th")
	want := [][]string{nil, {"stale frames", "tool repeats"}, {"misheard turns", "goroutines left", "error"}}
	for i, r := range tables[1].all("tbody")[0].all("tr") {
		cells := r.all("td")
		if cells[0].Text != strconv.Itoa(s.Runs[i].N) {
			t.Errorf("row %d is N=%s, want %d", i, cells[0].Text, s.Runs[i].N)
		}
		var missed []string
		for j, c := range cells {
			if c.hasClass("miss") {
				missed = append(missed, head[j].Text)
			}
		}
		if !slices.Equal(missed, want[i]) {
			t.Errorf("row %d: marked %q, want %q", i, missed, want[i])
		}
	}
	if !strings.Contains(doc.all("dl")[0].text(), "silero") {
		t.Error("the header does not name the VAD")
	}
}

// TestVerdictWords checks the verdict sentence. Mutation caught: the
// calls per core divided by GOMAXPROCS or left out.
func TestVerdictWords(t *testing.T) {
	met := sampleSweep(200, 600)
	met.Machine.GOMAXPROCS = 1
	none := sampleSweep(50)
	none.Largest, none.Runs[0].Met, none.Runs[0].Why = 0, false, []string{"jitter p99 6 ms > 5 ms"}
	for _, tc := range []struct {
		name string
		s    callsSweep
		want string
	}{
		{"met", met, "The largest N that met every goal is 600 concurrent calls: 300 calls per core on 2 cores."},
		{"none", none, "No run met every goal. Missed: N=50 (jitter p99 6 ms > 5 ms)."},
		{"empty", callsSweep{}, "No runs: nothing was measured."},
	} {
		if got := verdictWords(tc.s); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestAxisTicks checks the tick helpers. Mutations caught: a -0 tick (the
// first of linTicks from 0), float noise in a label (0.30000000000000004),
// a log tick outside the range, niceTop as niceCeil (a time axis of 2.0001
// minutes drawn to 5).
func TestAxisTicks(t *testing.T) {
	var labels []string
	for _, v := range linTicks(0, 0.5) {
		labels = append(labels, tickLabel(v))
	}
	if want := []string{"0", "0.1", "0.2", "0.3", "0.4", "0.5"}; !slices.Equal(labels, want) {
		t.Errorf("linTicks(0, 0.5): %q, want %q", labels, want)
	}
	labels = nil
	for _, v := range logTicks(0.1, 50) {
		labels = append(labels, tickLabel(v))
	}
	if want := []string{"0.1", "0.2", "0.5", "1", "2", "5", "10", "20", "50"}; !slices.Equal(labels, want) {
		t.Errorf("logTicks(0.1, 50): %q, want %q", labels, want)
	}
	labels = nil
	for _, v := range logTicks(0.2, 30) {
		labels = append(labels, tickLabel(v))
	}
	if want := []string{"0.2", "0.5", "1", "2", "5", "10", "20"}; !slices.Equal(labels, want) {
		t.Errorf("logTicks(0.2, 30): %q, want %q", labels, want)
	}
	for _, tc := range []struct{ v, top float64 }{{2.0001, 2.5}, {1.0001, 1.2}, {624, 700}, {0.432, 0.5}, {0, 1}} {
		if got := niceTop(tc.v); math.Abs(got-tc.top) > 1e-12 {
			t.Errorf("niceTop(%v) = %v, want %v", tc.v, got, tc.top)
		}
	}
	for _, tc := range []struct{ v, ceil, floor float64 }{{0.37, 0.5, 0.2}, {5, 5, 5}, {51, 100, 50}, {0, 1, 1}} {
		if c, f := niceCeil(tc.v), niceFloor(tc.v); c != tc.ceil || f != tc.floor {
			t.Errorf("nice(%v): ceil %v floor %v, want %v %v", tc.v, c, f, tc.ceil, tc.floor)
		}
	}
}
