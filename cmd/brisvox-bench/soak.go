package main

import (
	"errors"
	"fmt"
	"html/template"
	"io"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The soak's sampler and verdict (`brisvox-bench calls --soak`): while the
// calls churn, one goroutine samples this process every so often
// (goroutines, live heap, RSS, open file descriptors and sockets, and the
// live calls the caller counts); at the end a straight line is fitted to
// the last two thirds of each series, and a series that rose along it by
// more than its floors "grows without bound". The first third is left out
// so the warm-up (pools filling, the first calls' allocations, the heap
// finding its goal) does not count as growth.

// errSoakTooShort: fewer samples than a fit can judge. (A sentinel of the
// calls command; errors.go is another helper's file.)
var errSoakTooShort = errors.New("soak: too few samples")

// minSoakSamples is the fewest samples a verdict is given for: a fit over
// the last two thirds of 6 has 4 points.
const minSoakSamples = 6

// soakSample is one look at the process.
type soakSample struct {
	ElapsedS   float64 `json:"elapsed_s"`
	Goroutines int     `json:"goroutines"`
	// HeapLiveBytes is runtime/metrics' /gc/heap/live:bytes: the heap
	// marked live by the last GC, so the garbage between cycles does not
	// show as growth.
	HeapLiveBytes uint64 `json:"heap_live_bytes"`
	// RSSBytes is /proc/self/statm's resident pages.
	RSSBytes uint64 `json:"rss_bytes"`
	// FDs counts /proc/self/fd (less the one reading it); Sockets those
	// of them that are sockets (socket:[inode]).
	FDs       int `json:"fds"`
	Sockets   int `json:"sockets"`
	LiveCalls int `json:"live_calls"`
	// PoolWorkers is how many workers the call trees' dispatcher runs
	// (serve.Server.DispatcherWorkers): they start on demand up to its
	// Max and then stay parked, so a burst steps Goroutines up for good,
	// within that bound. The goroutines series is judged without them.
	PoolWorkers int `json:"pool_workers"`
}

// soakLimit is when one series counts as grown: its fitted growth over
// the window is above MinGrowth (in Unit) and above MinShare of its mean
// level over the window, and the fit explains the data (r² ≥ the
// report's MinR2).
type soakLimit struct {
	Series    string  `json:"series"`
	Unit      string  `json:"unit"`
	MinGrowth float64 `json:"min_growth"`
	MinShare  float64 `json:"min_share"`
}

// soakMinR2 is the share of a series' variance the line must explain: a
// GC sawtooth or a level that wanders with the live calls fits a line
// badly, a leak fits it well.
const soakMinR2 = 0.5

// soakLimits are the floors. A healthy churn must not trip them:
//   - goroutines (less the dispatcher's workers, which stay once started)
//     +20 and +2%: a call's tree and its transport are about a
//     dozen goroutines and the live calls wander by a few, so one or two
//     calls more at the end of the window must not count; 20 leaked a
//     window is a leak;
//   - heap +8 MiB and +5%: the live heap moves with the calls' buffers
//     (the goal is 256 KiB a call, so 8 MiB is some 30 calls' worth);
//   - RSS +16 MiB and +5%: the runtime returns freed pages lazily (the
//     scavenger), so RSS moves in larger steps than the heap;
//   - file descriptors and sockets +10: a call holds one socket, so ten
//     more at the end is not the wander of a steady churn.
func soakLimits() []soakLimit {
	return []soakLimit{
		{Series: "goroutines", Unit: "goroutines", MinGrowth: 20, MinShare: 0.02},
		{Series: "heap_live", Unit: "MiB", MinGrowth: 8, MinShare: 0.05},
		{Series: "rss", Unit: "MiB", MinGrowth: 16, MinShare: 0.05},
		{Series: "fds", Unit: "fds", MinGrowth: 10},
		{Series: "sockets", Unit: "sockets", MinGrowth: 10},
	}
}

// soakValue reads a series from a sample, in its limit's unit.
func soakValue(series string, s soakSample) float64 {
	switch series {
	case "goroutines":
		return float64(s.Goroutines - s.PoolWorkers)
	case "heap_live":
		return float64(s.HeapLiveBytes) / (1 << 20)
	case "rss":
		return float64(s.RSSBytes) / (1 << 20)
	case "fds":
		return float64(s.FDs)
	case "sockets":
		return float64(s.Sockets)
	case "live_calls":
		return float64(s.LiveCalls)
	}
	return 0
}

// soakSeries is the fit of one series over the window.
type soakSeries struct {
	soakLimit
	SlopePerMin float64 `json:"slope_per_min"`
	// Growth is the fitted rise over the window (slope × its length);
	// Level the series' mean over it; Share = Growth / Level.
	Growth float64 `json:"growth"`
	Level  float64 `json:"level"`
	Share  float64 `json:"growth_share"`
	R2     float64 `json:"r2"`
	// Intercept is the fitted value at the window's first sample.
	Intercept float64 `json:"fit_at_window_start"`
	Grew      bool    `json:"grew"`
}

// soakReport is the soak's result.
type soakReport struct {
	Samples []soakSample `json:"samples"`
	// WindowFrom is the index of the first sample of the fits (the last
	// two thirds); WindowS their length in seconds.
	WindowFrom int          `json:"window_from"`
	WindowS    float64      `json:"window_s"`
	MinR2      float64      `json:"min_r2"`
	Series     []soakSeries `json:"series"`
	Grew       []string     `json:"grew"`
	OK         bool         `json:"ok"`
	Verdict    string       `json:"verdict"`
	Error      string       `json:"error,omitempty"`
}

// soakVerdict fits each series over the last two thirds of samples.
func soakVerdict(samples []soakSample) soakReport {
	r := soakReport{Samples: samples, MinR2: soakMinR2, Grew: []string{}}
	if len(samples) < minSoakSamples {
		r.Error = fmt.Sprintf("%v: %d, want at least %d", errSoakTooShort, len(samples), minSoakSamples)
		r.Verdict = "no verdict: " + r.Error
		return r
	}
	r.WindowFrom = len(samples) / 3
	win := samples[r.WindowFrom:]
	first, last := win[0].ElapsedS, win[len(win)-1].ElapsedS
	r.WindowS = last - first
	if !(r.WindowS > 0) {
		r.Error = fmt.Sprintf("%v: the window's samples span no time", errSoakTooShort)
		r.Verdict = "no verdict: " + r.Error
		return r
	}
	xs := make([]float64, len(win))
	ys := make([]float64, len(win))
	for i, s := range win {
		xs[i] = (s.ElapsedS - first) / 60
	}
	for _, lim := range soakLimits() {
		for i, s := range win {
			ys[i] = soakValue(lim.Series, s)
		}
		slope, icept, r2, mean := fitLine(xs, ys)
		ss := soakSeries{soakLimit: lim, SlopePerMin: slope, Growth: slope * r.WindowS / 60, Level: mean, R2: r2, Intercept: icept}
		if mean > 0 {
			ss.Share = ss.Growth / mean
		}
		ss.Grew = ss.Growth > lim.MinGrowth && ss.Growth > lim.MinShare*mean && r2 >= soakMinR2
		if ss.Grew {
			r.Grew = append(r.Grew, lim.Series)
		}
		r.Series = append(r.Series, ss)
	}
	r.OK = len(r.Grew) == 0
	span := time.Duration(r.WindowS * float64(time.Second)).Round(time.Second)
	if r.OK {
		r.Verdict = fmt.Sprintf("OK: nothing grew over the last %v (%d samples)", span, len(win))
	} else {
		var why []string
		for _, s := range r.Series {
			if s.Grew {
				why = append(why, fmt.Sprintf("%s +%s %s (%s%%, r² %s)", s.Series, num(s.Growth), s.Unit, num(100*s.Share), num(s.R2)))
			}
		}
		r.Verdict = fmt.Sprintf("FAIL: grew without bound over the last %v: %s", span, strings.Join(why, "; "))
	}
	return r
}

// fitLine is the least-squares line through (xs, ys): its slope, its
// value at xs[0], r² (0 when ys are all equal: there is nothing to
// explain) and the mean of ys.
func fitLine(xs, ys []float64) (slope, atFirst, r2, mean float64) {
	n := float64(len(xs))
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx, my = mx/n, my/n
	var sxx, sxy, syy float64
	for i := range xs {
		dx, dy := xs[i]-mx, ys[i]-my
		sxx += dx * dx
		sxy += dx * dy
		syy += dy * dy
	}
	if sxx == 0 {
		return 0, my, 0, my
	}
	slope = sxy / sxx
	if syy > 0 {
		r2 = sxy * sxy / (sxx * syy)
	}
	return slope, my + slope*(xs[0]-mx), r2, my
}

// soakSampler samples this process every so often from one goroutine,
// until Stop.
type soakSampler struct {
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
	samples []soakSample // the goroutine's until done is closed
	err     error        // the first read that failed
	workers func() int   // the dispatcher's workers, or nil
}

// startSoakSampler takes a sample now and one at every tick of every
// (which must be positive, as for time.NewTicker); live gives the live
// calls and is called from the sampler's goroutine, so it must be safe to
// call concurrently with the churn (an atomic counter).
func startSoakSampler(every time.Duration, live func() int) *soakSampler {
	return startSoakSamplerFor(every, 0, live, nil)
}

// startSoakSamplerFor is startSoakSampler taking samples only before
// span has passed (0: until Stop), so a churn's wind-down (its calls
// hanging up at the end) is not judged: falling counts at the end pull
// the fitted line down and would hide a leak (a 2-minute soak of 20
// calls sampled through the callers' exit fitted goroutines at -92 over
// the window). Stop is still needed: it waits for the goroutine and
// judges the samples.
//
// workers, when not nil, reads the dispatcher's workers into each sample
// (PoolWorkers).
func startSoakSamplerFor(every, span time.Duration, live, workers func() int) *soakSampler {
	s := &soakSampler{stop: make(chan struct{}), done: make(chan struct{}), workers: workers}
	go s.run(every, span, live)
	return s
}

func (s *soakSampler) run(every, span time.Duration, live func() int) {
	defer close(s.done)
	start := time.Now()
	t := time.NewTicker(every)
	defer t.Stop()
	s.sample(0, live)
	for {
		select {
		case <-s.stop:
			return
		case now := <-t.C:
			elapsed := now.Sub(start)
			if span > 0 && elapsed >= span {
				return
			}
			s.sample(elapsed, live)
		}
	}
}

func (s *soakSampler) sample(elapsed time.Duration, live func() int) {
	smp, err := readSoakSample()
	if err != nil && s.err == nil {
		s.err = err
	}
	smp.ElapsedS = elapsed.Seconds()
	smp.LiveCalls = live()
	if s.workers != nil {
		smp.PoolWorkers = s.workers()
	}
	s.samples = append(s.samples, smp)
}

// Stop stops the sampler, waits for its goroutine and judges the samples.
// A failed read of /proc fails the verdict: zeros would pass as flat.
func (s *soakSampler) Stop() soakReport {
	s.once.Do(func() { close(s.stop) })
	<-s.done
	r := soakVerdict(s.samples)
	if s.err != nil {
		r.OK = false
		r.Error = strings.TrimPrefix(r.Error+"; ", "; ") + s.err.Error()
		r.Verdict = "no verdict: " + r.Error
	}
	return r
}

// readSoakSample reads the process's figures (not ElapsedS and LiveCalls).
func readSoakSample() (soakSample, error) {
	s := soakSample{Goroutines: runtime.NumGoroutine()}
	m := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(m)
	if m[0].Value.Kind() == metrics.KindUint64 {
		s.HeapLiveBytes = m[0].Value.Uint64()
	}
	var errs []error
	statm, err := os.ReadFile("/proc/self/statm")
	if err == nil {
		f := strings.Fields(string(statm))
		var pages uint64
		if len(f) < 2 {
			err = fmt.Errorf("soak: /proc/self/statm: %q", statm)
		} else if pages, err = strconv.ParseUint(f[1], 10, 64); err == nil {
			s.RSSBytes = pages * uint64(os.Getpagesize())
		}
	}
	errs = append(errs, err)
	s.FDs, s.Sockets, err = countFDs()
	errs = append(errs, err)
	return s, errors.Join(errs...)
}

// countFDs counts this process's open file descriptors and, of them, the
// sockets, leaving out the descriptor that reads the directory.
func countFDs() (fds, sockets int, err error) {
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return 0, 0, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return 0, 0, err
	}
	self := strconv.Itoa(int(d.Fd()))
	for _, n := range names {
		if n == self {
			continue
		}
		fds++
		// A descriptor closed since the listing has no link: not counted
		// as a socket, which is what it no longer is.
		if l, err := os.Readlink("/proc/self/fd/" + n); err == nil && strings.HasPrefix(l, "socket:[") {
			sockets++
		}
	}
	return fds, sockets, nil
}

// The soak's HTML report: the verdict, the fits and a chart per series.

type soakPageData struct {
	R      soakReport
	Rows   [][]htmlCell
	Charts [][]svgChart
}

// soakTitles name the series in the report.
var soakTitles = map[string]string{
	"goroutines": "Goroutines (less the dispatcher's parked workers)",
	"heap_live":  "Live heap (after the last GC)",
	"rss":        "Resident set (RSS)",
	"fds":        "Open file descriptors",
	"sockets":    "Open sockets",
	"live_calls": "Live calls",
}

// writeSoakHTML writes r as a self-contained HTML page.
func writeSoakHTML(w io.Writer, r soakReport) error {
	p := soakPageData{R: r}
	for _, s := range r.Series {
		verdict := "bounded"
		if s.Grew {
			verdict = "grew"
		}
		p.Rows = append(p.Rows, []htmlCell{
			{Text: s.Series},
			{Text: num(s.Level) + " " + s.Unit},
			{Text: num(s.SlopePerMin)},
			{Text: num(s.Growth), Miss: s.Growth > s.MinGrowth},
			{Text: num(100 * s.Share), Miss: s.MinShare > 0 && s.Growth > s.MinShare*s.Level},
			{Text: num(s.R2), Miss: s.R2 >= r.MinR2},
			{Text: floorWords(s.soakLimit)},
			{Text: verdict, Miss: s.Grew},
		})
	}
	var charts []svgChart
	for _, s := range r.Series {
		charts = append(charts, soakChart(r, s.Series, s.Unit, &s))
	}
	charts = append(charts, soakChart(r, "live_calls", "calls", nil))
	for i := 0; i < len(charts); i += 2 {
		p.Charts = append(p.Charts, charts[i:min(i+2, len(charts))])
	}
	return soakPage.Execute(w, p)
}

// floorWords is a series' floors: "+20 goroutines and +2%", or "+10
// sockets" without a share.
func floorWords(l soakLimit) string {
	if l.MinShare == 0 {
		return "+" + num(l.MinGrowth) + " " + l.Unit
	}
	return "+" + num(l.MinGrowth) + " " + l.Unit + " and +" + num(100*l.MinShare) + "%"
}

// soakChart draws one series over time and, when fit is given, its line
// over the window.
func soakChart(r soakReport, series, unit string, fit *soakSeries) svgChart {
	c := chartSpec{title: soakTitles[series], xLabel: "time, minutes", yLabel: unit, w: 590, h: 300, yFit: true}
	data := seriesSpec{label: "sampled", color: palette[0]}
	if len(r.Samples) <= 60 {
		data.tips = []string{}
	}
	for _, s := range r.Samples {
		v := soakValue(series, s)
		data.xs = append(data.xs, s.ElapsedS/60)
		data.ys = append(data.ys, v)
		if data.tips != nil {
			data.tips = append(data.tips, fmt.Sprintf("%s min: %s %s", num(s.ElapsedS/60), num(v), unit))
		}
	}
	c.series = append(c.series, data)
	if fit == nil {
		c.caption = "The live calls the churn kept, for reading the other charts against."
		return c.build()
	}
	if len(r.Samples) > r.WindowFrom && r.WindowS > 0 {
		x0 := r.Samples[r.WindowFrom].ElapsedS / 60
		c.series = append(c.series, seriesSpec{label: "fit, last two thirds", color: palette[3], dash: "6 3",
			xs: []float64{x0, x0 + r.WindowS/60}, ys: []float64{fit.Intercept, fit.Intercept + fit.Growth}})
		c.vLines = append(c.vLines, lineSpec{v: x0, label: "fit from here", faint: true})
	}
	c.yMinSpan = 3 * max(fit.MinGrowth, fit.MinShare*fit.Level)
	verdict := "bounded"
	if fit.Grew {
		verdict = "grew without bound"
	}
	c.caption = fmt.Sprintf("%s: the fitted line rises %s %s over the window (%s/min, %s%% of its level %s), r² %s: %s (the floors: %s, with r² ≥ %s). The y axis spans the data (at least three times the larger floor), not from 0.",
		soakTitles[series], num(fit.Growth), unit, num(fit.SlopePerMin), num(100*fit.Share), num(fit.Level), num(fit.R2), verdict,
		floorWords(fit.soakLimit), num(r.MinR2))
	return c.build()
}

const soakPageTemplate = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8"/>
<meta name="viewport" content="width=device-width, initial-scale=1"/>
<title>brisvox soak</title>
<style>` + pageCSS + `</style>
</head>
<body>
<h1>brisvox soak: does anything grow while the calls churn?</h1>
<p class="verdict">{{.R.Verdict}}</p>
<p>{{len .R.Samples}} samples. Each series is fitted with a straight line over the last two thirds of them (the first third is the warm-up); a series grew without bound when the line rises by more than both its floors and explains the data (r² ≥ {{.R.MinR2}}). Marked cells are over their floor.</p>
{{- if .Rows}}
<table class="runs">
<thead><tr><th>series</th><th>level</th><th>slope per min</th><th>growth over the window</th><th>growth, % of level</th><th>r²</th><th>floors</th><th>verdict</th></tr></thead>
<tbody>
{{- range .Rows}}
<tr>{{range .}}<td class="{{if .Miss}}miss{{end}}">{{.Text}}</td>{{end}}</tr>
{{- end}}
</tbody>
</table>
{{- end}}
{{- range .Charts}}
<div>{{range .}}{{template "chart" .}}{{end}}</div>
{{- end}}
</body>
</html>
`

var soakPage = template.Must(template.Must(template.New("soak").Funcs(chartFuncs).Parse(svgChartTemplate)).Parse(soakPageTemplate))
