package endofturn

import (
	"errors"
	"math"
	"testing"
	"time"
)

// ms is a time on the test's clock, in milliseconds after base.
var base = time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)

func ms(n int) time.Time { return base.Add(time.Duration(n) * time.Millisecond) }

type evKind int

const (
	evStop     evKind = iota // VAD stop at at, with the next probability
	evEstimate               // a new estimate at at, the next probability
	evSpeech                 // speech resumed
	evDue                    // the timer fired at at
)

type step struct {
	kind evKind
	at   int // ms
	// want after the step: the decision (end/recheck in ms, -1 for none) or
	// Due's result.
	waiting   bool
	endAt     int
	recheckAt int
	due       bool
}

// TestPolicyScenarios drives the policy through scripted events, the
// estimates taken from probs in order (the last one repeating). Mutations caught (each seen failing): interpolating by (1-p)
// instead of (Threshold-p)/Threshold (unsure_half, just_below), NaN taken
// as confident (nan_waits_max), Due firing twice (confident_ends_at_stop),
// OnSpeech not cancelling (speech_cancels), OnEstimate allowed to set an end
// in the past (estimate_never_in_past), a recheck planned past the end
// (recheck_*). threshold_exact pins the continuity at the threshold (so
// ">=" and ">" agree there by design).
func TestPolicyScenarios(t *testing.T) {
	def := PolicyConfig{}
	cases := []struct {
		name  string
		cfg   PolicyConfig
		probs []float32
		steps []step
	}{
		{"confident_ends_at_stop", def, []float32{0.9}, []step{
			{kind: evStop, at: 1000, waiting: true, endAt: 1000, recheckAt: -1},
			{kind: evDue, at: 1000, due: true},
			{kind: evDue, at: 1001, due: false},
		}},
		{"threshold_exact", def, []float32{0.5}, []step{
			{kind: evStop, at: 0, waiting: true, endAt: 0, recheckAt: -1},
		}},
		{"unsure_half", def, []float32{0.25}, []step{
			{kind: evStop, at: 1000, waiting: true, endAt: 1750, recheckAt: -1},
			{kind: evDue, at: 1749, due: false},
			{kind: evDue, at: 1750, due: true},
		}},
		{"just_below", def, []float32{0.49}, []step{
			{kind: evStop, at: 0, waiting: true, endAt: 30, recheckAt: -1},
		}},
		{"zero_waits_max", def, []float32{0}, []step{
			{kind: evStop, at: 500, waiting: true, endAt: 2000, recheckAt: -1},
		}},
		{"nan_waits_max", def, []float32{float32(math.NaN())}, []step{
			{kind: evStop, at: 0, waiting: true, endAt: 1500, recheckAt: -1},
		}},
		{"negative_waits_max", def, []float32{-0.3}, []step{
			{kind: evStop, at: 0, waiting: true, endAt: 1500, recheckAt: -1},
		}},
		{"above_one_is_confident", def, []float32{1.7}, []step{
			{kind: evStop, at: 0, waiting: true, endAt: 0, recheckAt: -1},
		}},
		{"speech_cancels", def, []float32{0.1}, []step{
			{kind: evStop, at: 1000, waiting: true, endAt: 2200, recheckAt: -1},
			{kind: evSpeech, at: 1200},
			{kind: evDue, at: 3000, due: false},
		}},
		{"min_delay_and_interpolation", PolicyConfig{MinDelay: 200 * time.Millisecond, MaxDelay: 1200 * time.Millisecond, Threshold: 0.6},
			[]float32{0.8, 0.3}, []step{
				{kind: evStop, at: 0, waiting: true, endAt: 200, recheckAt: -1},
				{kind: evSpeech, at: 100},
				// 200 + 1000 * (0.6-0.3)/0.6 = 700
				{kind: evStop, at: 1000, waiting: true, endAt: 1700, recheckAt: -1},
				{kind: evDue, at: 1700, due: true},
			}},
		{"recheck_confident_later", PolicyConfig{Recheck: 300 * time.Millisecond}, []float32{0.1, 0.9}, []step{
			{kind: evStop, at: 0, waiting: true, endAt: 1200, recheckAt: 300},
			{kind: evEstimate, at: 300, waiting: true, endAt: 300, recheckAt: -1},
			{kind: evDue, at: 300, due: true},
		}},
		{"recheck_less_sure_extends", PolicyConfig{Recheck: 300 * time.Millisecond}, []float32{0.3, 0.1, 0.1}, []step{
			{kind: evStop, at: 0, waiting: true, endAt: 600, recheckAt: 300},
			{kind: evEstimate, at: 300, waiting: true, endAt: 1200, recheckAt: 600},
			{kind: evEstimate, at: 600, waiting: true, endAt: 1200, recheckAt: 900},
			{kind: evDue, at: 1199, due: false},
			{kind: evDue, at: 1200, due: true},
		}},
		{"estimate_never_in_past", PolicyConfig{Recheck: 100 * time.Millisecond}, []float32{0.2, 0.45}, []step{
			{kind: evStop, at: 0, waiting: true, endAt: 900, recheckAt: 100},
			// 0.45 earns 150 ms after the stop, but the estimate comes at 400.
			{kind: evEstimate, at: 400, waiting: true, endAt: 400, recheckAt: -1},
		}},
		{"estimate_after_speech_ignored", PolicyConfig{Recheck: 100 * time.Millisecond}, []float32{0.2, 0.9}, []step{
			{kind: evStop, at: 0, waiting: true, endAt: 900, recheckAt: 100},
			{kind: evSpeech, at: 50},
			{kind: evEstimate, at: 100, waiting: false},
			{kind: evDue, at: 2000, due: false},
		}},
		{"new_stop_replaces_old", def, []float32{0, 0.9}, []step{
			{kind: evStop, at: 0, waiting: true, endAt: 1500, recheckAt: -1},
			{kind: evStop, at: 700, waiting: true, endAt: 700, recheckAt: -1},
			{kind: evDue, at: 700, due: true},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pol, err := NewPolicy(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			next := 0
			for i, s := range tc.steps {
				var d Decision
				switch s.kind {
				case evStop, evEstimate:
					p := tc.probs[min(next, len(tc.probs)-1)]
					next++
					if s.kind == evStop {
						d = pol.OnStop(ms(s.at), p)
					} else {
						d = pol.OnEstimate(ms(s.at), p)
					}
				case evSpeech:
					pol.OnSpeech()
					continue
				case evDue:
					if got := pol.Due(ms(s.at)); got != s.due {
						t.Fatalf("step %d: Due(%d ms) = %v, want %v", i, s.at, got, s.due)
					}
					continue
				}
				want := Decision{Waiting: s.waiting}
				if s.waiting {
					want.EndAt = ms(s.endAt)
					if s.recheckAt >= 0 {
						want.RecheckAt = ms(s.recheckAt)
					}
				}
				if d != want || pol.Decision() != want {
					t.Fatalf("step %d: decision %s, want %s", i, show(d), show(want))
				}
			}
		})
	}
}

func show(d Decision) string {
	f := func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.Sub(base).String()
	}
	if !d.Waiting {
		return "{idle}"
	}
	return "{end " + f(d.EndAt) + ", recheck " + f(d.RecheckAt) + "}"
}

// TestPolicyConfig checks defaults and validation. Mutations caught: a
// default MaxDelay below a larger MinDelay (min_above_default_max), NaN
// thresholds accepted.
func TestPolicyConfig(t *testing.T) {
	cases := []struct {
		name string
		cfg  PolicyConfig
		want PolicyConfig // after defaults; zero when invalid
		ok   bool
	}{
		{"zero_is_defaults", PolicyConfig{}, PolicyConfig{MaxDelay: 1500 * time.Millisecond, Threshold: 0.5}, true},
		{"min_above_default_max", PolicyConfig{MinDelay: 2 * time.Second},
			PolicyConfig{MinDelay: 2 * time.Second, MaxDelay: 2 * time.Second, Threshold: 0.5}, true},
		{"threshold_one", PolicyConfig{Threshold: 1}, PolicyConfig{MaxDelay: 1500 * time.Millisecond, Threshold: 1}, true},
		{"negative_min", PolicyConfig{MinDelay: -1}, PolicyConfig{}, false},
		{"max_below_min", PolicyConfig{MinDelay: time.Second, MaxDelay: 500 * time.Millisecond}, PolicyConfig{}, false},
		{"threshold_above_one", PolicyConfig{Threshold: 1.01}, PolicyConfig{}, false},
		{"threshold_negative", PolicyConfig{Threshold: -0.5}, PolicyConfig{}, false},
		{"threshold_nan", PolicyConfig{Threshold: float32(math.NaN())}, PolicyConfig{}, false},
		{"negative_recheck", PolicyConfig{Recheck: -time.Millisecond}, PolicyConfig{}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewPolicy(tc.cfg)
			if !tc.ok {
				if !errors.Is(err, ErrInvalidConfig) {
					t.Fatalf("err %v, want ErrInvalidConfig", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Config(); got != tc.want {
				t.Fatalf("config %+v, want %+v", got, tc.want)
			}
		})
	}
}

// FuzzPolicy: any sequence of events keeps the end within [stop+MinDelay,
// stop+MaxDelay] or at the estimate's time, rechecks before the end, and
// Due true at most once per stop.
func FuzzPolicy(f *testing.F) {
	f.Add([]byte{0, 10, 128, 3, 20, 1, 40, 200, 3, 50})
	f.Add([]byte{0, 0, 255, 2, 1, 0, 3, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		pol, err := NewPolicy(PolicyConfig{MinDelay: 100 * time.Millisecond, MaxDelay: time.Second, Recheck: 250 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		now, stopAt, fired, waiting := 0, 0, false, false
		for i := 0; i+2 < len(b); i += 3 {
			now += int(b[i+1])
			p := float32(b[i+2])/200 - 0.1 // a little outside [0, 1] too
			var d Decision
			switch b[i] % 4 {
			case 0:
				d, stopAt, fired, waiting = pol.OnStop(ms(now), p), now, false, true
			case 1:
				d = pol.OnEstimate(ms(now), p)
			case 2:
				pol.OnSpeech()
				waiting = false
				continue
			case 3:
				if pol.Due(ms(now)) {
					if fired || !waiting {
						t.Fatalf("Due fired twice or without a stop")
					}
					fired, waiting = true, false
				}
				continue
			}
			if d.Waiting != waiting {
				t.Fatalf("waiting %v, want %v", d.Waiting, waiting)
			}
			if !d.Waiting {
				continue
			}
			lo, hi := ms(stopAt+100), ms(max(stopAt+1000, now))
			if d.EndAt.Before(lo) && d.EndAt.Before(ms(now)) || d.EndAt.After(hi) {
				t.Fatalf("end %v outside [%v, %v]", d.EndAt.Sub(base), lo.Sub(base), hi.Sub(base))
			}
			if !d.RecheckAt.IsZero() && !d.RecheckAt.Before(d.EndAt) {
				t.Fatalf("recheck %v not before end %v", d.RecheckAt, d.EndAt)
			}
		}
	})
}
