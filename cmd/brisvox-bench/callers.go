package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/brisvox/brisvox/media/webrtc/webrtctest"
)

// callersReport is what the callers' process prints (one JSON line).
type callersReport struct {
	Calls     int     `json:"calls"`
	Connected int     `json:"connected"`
	Packets   int     `json:"packets"`
	Gaps      int     `json:"gaps"`
	P50MS     float64 `json:"jitter_p50_ms"`
	P99MS     float64 `json:"jitter_p99_ms"`
	MaxMS     float64 `json:"jitter_max_ms"`
	// Short counts calls that received fewer than 90% of the packets the
	// hold should bring (a stalled call).
	Short int `json:"short_calls"`
	// CPU is the callers' process's user+system time over the hold, in
	// percent of one core.
	CPU   float64 `json:"callers_cpu_pct_of_core"`
	Error string  `json:"error,omitempty"`
}

// webrtcCallers places the calls, holds them, and reports the jitter of
// what they received between the warm-up's end and the hold's end.
func webrtcCallers(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("webrtc-callers", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", "", "the server's WebRTC signaling base URL")
	calls := fs.Int("calls", 60, "calls to place")
	warmup := fs.Duration("warmup", 5*time.Second, "time after the last call connected before measuring")
	hold := fs.Duration("hold", 30*time.Second, "the measured time")
	if err := fs.Parse(args); err != nil || *url == "" || *calls <= 0 {
		return 2
	}
	rep := callersReport{Calls: *calls}
	out := func() int {
		b, _ := json.Marshal(rep)
		fmt.Fprintln(stdout, string(b))
		if rep.Error != "" {
			return 1
		}
		return 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), *warmup+*hold+2*time.Minute)
	defer cancel()
	cs := make([]*webrtctest.Caller, *calls)
	errs := make([]error, *calls)
	var wg sync.WaitGroup
	for i := range cs {
		wg.Go(func() {
			c, err := webrtctest.Dial(ctx, *url, webrtctest.Options{ArrivalsOnly: true, KernelTimestamps: true})
			if err == nil {
				err = c.WaitConnected(ctx)
			}
			cs[i], errs[i] = c, err
		})
		time.Sleep(20 * time.Millisecond) // a ramp, not a thundering herd
	}
	wg.Wait()
	defer func() {
		for _, c := range cs {
			if c != nil {
				_ = c.Close()
			}
		}
	}()
	for i, err := range errs {
		if err != nil {
			rep.Error = fmt.Sprintf("call %d: %v", i, err)
			return out()
		}
		rep.Connected++
	}
	time.Sleep(*warmup)
	from, cpu0 := time.Now(), cpuTime()
	fmt.Fprintln(stdout, "hold-start")
	time.Sleep(*hold)
	to, cpu1 := time.Now(), cpuTime()
	fmt.Fprintln(stdout, "hold-end")
	rep.CPU = 100 * float64(cpu1-cpu0) / float64(to.Sub(from))
	streams := make([][]time.Time, len(cs))
	for i, c := range cs {
		streams[i] = c.Arrivals()
	}
	g := measureGaps(streams, from, to, int(*hold/(20*time.Millisecond)))
	rep.Packets, rep.Short, rep.Gaps = g.packets, g.short, g.gaps
	if g.gaps == 0 {
		rep.Error = "no packets received during the hold"
		return out()
	}
	rep.P50MS, rep.P99MS, rep.MaxMS = g.p50, g.p99, g.max
	return out()
}

// gapFigures are the arrival gaps of a hold: packets received in it,
// streams short of 90% of the packets the hold should bring, and
// |gap - 20 ms| between consecutive packets of a stream (ms).
type gapFigures struct {
	packets, short, gaps int
	p50, p99, max        float64
}

// measureGaps computes the figures of the arrivals between from and to;
// want is the packets a stream should bring.
func measureGaps(streams [][]time.Time, from, to time.Time, want int) gapFigures {
	var f gapFigures
	var gaps []time.Duration
	for _, arrivals := range streams {
		var prev time.Time
		n := 0
		for _, at := range arrivals {
			if at.Before(from) || at.After(to) {
				continue
			}
			n++
			if !prev.IsZero() {
				d := at.Sub(prev) - 20*time.Millisecond
				gaps = append(gaps, max(d, -d))
			}
			prev = at
		}
		f.packets += n
		if n < want*9/10 {
			f.short++
		}
	}
	if len(gaps) == 0 {
		return f
	}
	slices.Sort(gaps)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	f.gaps = len(gaps)
	f.p50, f.p99, f.max = ms(gaps[len(gaps)/2]), ms(gaps[len(gaps)*99/100]), ms(gaps[len(gaps)-1])
	return f
}
