package sim

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/messages"
)

// lbScenario is 5 frames of speech, then 5 of silence.
func lbScenario() *Scenario {
	return NewScenario("x").Speak("hi", 100*time.Millisecond).Silence(100 * time.Millisecond)
}

// lbOp is one thing a test does to a loopback, at an offset from the
// bubble's start.
type lbOp struct {
	at time.Duration
	do func(t *testing.T, l *Loopback)
}

func lbWrite(at time.Duration, epoch messages.Epoch, offset time.Duration) lbOp {
	return lbOp{at: at, do: func(t *testing.T, l *Loopback) {
		if err := l.WriteFrame(&messages.OutputAudio{Epoch: epoch, Offset: offset, Rate: 16000}); err != nil {
			t.Errorf("WriteFrame: %v", err)
		}
	}}
}

func lbClear(at time.Duration, epoch messages.Epoch) lbOp {
	return lbOp{at: at, do: func(t *testing.T, l *Loopback) {
		if err := l.Clear(epoch); err != nil {
			t.Errorf("Clear: %v", err)
		}
	}}
}

func lbMark(at time.Duration, name string) lbOp {
	return lbOp{at: at, do: func(t *testing.T, l *Loopback) {
		if err := l.Mark(name); err != nil {
			t.Errorf("Mark: %v", err)
		}
	}}
}

// lbRun performs ops in order, each at its offset from t0 (offsets must not
// decrease). before is called with an op's index before it runs, and with
// -1 once it returned.
func lbRun(t *testing.T, l *Loopback, t0 time.Time, ops []lbOp, before func(int)) {
	t.Helper()
	for i, op := range ops {
		time.Sleep(time.Until(t0.Add(op.at)))
		if before != nil {
			before(i)
		}
		op.do(t, l)
		if before != nil {
			before(-1)
		}
	}
}

// lbRecord is a Record with its time as an offset from the bubble's start.
type lbRecord struct {
	at     time.Duration
	kind   RecordKind
	epoch  messages.Epoch
	offset time.Duration
	name   string
}

func lbRecords(t0 time.Time, rs []Record) []lbRecord {
	out := make([]lbRecord, 0, len(rs))
	for _, r := range rs {
		out = append(out, lbRecord{at: r.At.Sub(t0), kind: r.Kind, epoch: r.Epoch, offset: r.Offset, name: r.Name})
	}
	return out
}

func lbAudio(at time.Duration, epoch messages.Epoch, offset time.Duration) lbRecord {
	return lbRecord{at: at, kind: RecordAudio, epoch: epoch, offset: offset}
}

func lbCleared(at time.Duration, epoch messages.Epoch) lbRecord {
	return lbRecord{at: at, kind: RecordClear, epoch: epoch}
}

func lbMarked(at time.Duration, name string) lbRecord {
	return lbRecord{at: at, kind: RecordMark, name: name}
}

func lbCheckRecords(t *testing.T, got, want []lbRecord) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("records:\n got  %+v\n want %+v", got, want)
	}
}

// TestLoopbackReadFrame checks the caller's side: frame i arrives exactly
// at start+(i+1)*20ms (or at once when that is past), stamped and numbered,
// with the scenario's samples, and silence after the scenario ends.
//
// Mutations it catches (each seen failing): the due time being f.Start
// instead of the frame's end (every case); the frame index not advancing
// (Seq stays 0); silence after the script not clearing the buffer (stale
// samples remain).
func TestLoopbackReadFrame(t *testing.T) {
	tests := []struct {
		name     string
		rate     int
		wantRate int
		start    time.Duration // the call's start, relative to the bubble's
	}{
		{name: "16 kHz", rate: 16000, wantRate: 16000},
		{name: "8 kHz", rate: 8000, wantRate: 8000},
		{name: "default rate", rate: 0, wantRate: 16000},
		{name: "start in the future", rate: 16000, wantRate: 16000, start: 35 * time.Millisecond},
		{name: "start in the past", rate: 16000, wantRate: 16000, start: -50 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				t0 := time.Now()
				start := t0.Add(tt.start)
				scen := lbScenario()
				l := NewLoopback(LoopbackConfig{Rate: tt.rate}, scen, start)
				defer l.Close()
				if l.InputRate() != tt.wantRate || l.OutputRate() != tt.wantRate {
					t.Fatalf("rates %d/%d, want %d", l.InputRate(), l.OutputRate(), tt.wantRate)
				}
				n := scen.FrameCount()
				if n != 10 {
					t.Fatalf("scenario has %d frames, want 10", n)
				}
				want := make([]int16, tt.wantRate/50)
				for i := range n + 4 {
					f := &messages.AudioFrame{PCM: make([]int16, tt.wantRate/50)}
					for j := range f.PCM {
						f.PCM[j] = 7 // stale samples that must be overwritten
					}
					if err := l.ReadFrame(context.Background(), f); err != nil {
						t.Fatalf("frame %d: %v", i, err)
					}
					due := start.Add(time.Duration(i+1) * messages.FrameDuration)
					if due.Before(t0) {
						due = t0
					}
					if now := time.Now(); !now.Equal(due) {
						t.Errorf("frame %d delivered at %v, want %v", i, now.Sub(t0), due.Sub(t0))
					}
					if wantStart := start.Add(time.Duration(i) * messages.FrameDuration); !f.Start.Equal(wantStart) {
						t.Errorf("frame %d: Start %v, want %v", i, f.Start.Sub(t0), wantStart.Sub(t0))
					}
					if f.Seq != uint64(i) || f.Rate != tt.wantRate {
						t.Errorf("frame %d: Seq %d, Rate %d; want %d, %d", i, f.Seq, f.Rate, i, tt.wantRate)
					}
					speech := scen.FillFrame(i, tt.wantRate, want)
					if speech != (i < 5) {
						t.Fatalf("frame %d: scenario says speech=%v", i, speech)
					}
					if !slices.Equal(f.PCM, want) {
						t.Errorf("frame %d: PCM differs from the scenario's", i)
					}
					for j, s := range f.PCM {
						if speech && s == 0 || !speech && s != 0 {
							t.Errorf("frame %d (speech=%v): sample %d is %d", i, speech, j, s)
							break
						}
					}
				}
			})
		})
	}
}

// TestLoopbackReadFrameEnds checks that a waiting ReadFrame ends at once
// when its context ends or the caller hangs up, and that the next read then
// delivers the same frame (context) or fails again (hang-up).
//
// Mutations it catches (each seen failing): ReadFrame not watching ctx
// (it returns the frame at 20 ms instead); not checking the hang-up when
// the frame is already due ("hang up before a due frame" delivers it).
func TestLoopbackReadFrameEnds(t *testing.T) {
	tests := []struct {
		name    string
		start   time.Duration
		ctx     func(context.Context) (context.Context, context.CancelFunc)
		act     func(l *Loopback, cancel context.CancelFunc) // at the bubble's start
		wantErr error
		wantAt  time.Duration
	}{
		{
			name: "ctx cancelled while waiting",
			ctx:  context.WithCancel,
			act: func(_ *Loopback, cancel context.CancelFunc) {
				time.AfterFunc(7*time.Millisecond, cancel)
			},
			wantErr: context.Canceled, wantAt: 7 * time.Millisecond,
		},
		{
			name: "ctx deadline while waiting",
			ctx: func(ctx context.Context) (context.Context, context.CancelFunc) {
				return context.WithTimeout(ctx, 13*time.Millisecond)
			},
			wantErr: context.DeadlineExceeded, wantAt: 13 * time.Millisecond,
		},
		{
			name:    "ctx cancelled before",
			ctx:     context.WithCancel,
			act:     func(_ *Loopback, cancel context.CancelFunc) { cancel() },
			wantErr: context.Canceled,
		},
		{
			name: "hang up while waiting",
			act: func(l *Loopback, _ context.CancelFunc) {
				time.AfterFunc(5*time.Millisecond, l.HangUp)
			},
			wantErr: conn.ErrClosed, wantAt: 5 * time.Millisecond,
		},
		{
			name: "close while waiting",
			act: func(l *Loopback, _ context.CancelFunc) {
				time.AfterFunc(5*time.Millisecond, func() { l.Close() })
			},
			wantErr: conn.ErrClosed, wantAt: 5 * time.Millisecond,
		},
		{
			name:    "hang up before",
			act:     func(l *Loopback, _ context.CancelFunc) { l.HangUp() },
			wantErr: conn.ErrClosed,
		},
		{
			name:    "hang up before a due frame",
			start:   -time.Second,
			act:     func(l *Loopback, _ context.CancelFunc) { l.HangUp() },
			wantErr: conn.ErrClosed,
		},
		{
			name:    "hang up twice",
			act:     func(l *Loopback, _ context.CancelFunc) { l.HangUp(); l.HangUp() },
			wantErr: conn.ErrClosed,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				t0 := time.Now()
				l := NewLoopback(LoopbackConfig{}, lbScenario(), t0.Add(tt.start))
				defer l.Close()
				ctx, cancel := context.Background(), context.CancelFunc(func() {})
				if tt.ctx != nil {
					ctx, cancel = tt.ctx(ctx)
				}
				defer cancel()
				if tt.act != nil {
					tt.act(l, cancel)
				}
				f := &messages.AudioFrame{PCM: make([]int16, 320)}
				err := l.ReadFrame(ctx, f)
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("ReadFrame: %v, want %v", err, tt.wantErr)
				}
				if got := time.Since(t0); got != tt.wantAt {
					t.Errorf("ReadFrame returned at %v, want %v", got, tt.wantAt)
				}
				if ctx.Err() != nil && err != ctx.Err() {
					t.Errorf("ReadFrame: %v, want ctx.Err() %v", err, ctx.Err())
				}

				// The next read, with a live context.
				at := time.Now()
				err = l.ReadFrame(context.Background(), f)
				if errors.Is(tt.wantErr, conn.ErrClosed) {
					if !errors.Is(err, conn.ErrClosed) {
						t.Errorf("ReadFrame after hang-up: %v, want %v", err, conn.ErrClosed)
					}
					if !time.Now().Equal(at) {
						t.Errorf("ReadFrame after hang-up waited %v", time.Since(at))
					}
					return
				}
				if err != nil {
					t.Fatalf("ReadFrame after ctx ended: %v", err)
				}
				if f.Seq != 0 || time.Since(t0) != tt.start+messages.FrameDuration {
					t.Errorf("ReadFrame after ctx ended: Seq %d at %v, want 0 at %v", f.Seq, time.Since(t0), tt.start+messages.FrameDuration)
				}
			})
		})
	}
}

// TestLoopbackRecords checks what a client without read delay records:
// each write, clear and mark at the moment it was made, in wire order.
//
// Mutations it catches (each seen failing): WriteFrame stamping the record
// with the call's start instead of time.Now ("audio", "barge-in"); Records
// returning its internal slice instead of a copy (the copy check).
func TestLoopbackRecords(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name string
		ops  []lbOp
		want []lbRecord
	}{
		{name: "nothing"},
		{
			name: "audio",
			ops:  []lbOp{lbWrite(0, 1, 0), lbWrite(20*ms, 1, 20*ms), lbWrite(45*ms, 1, 40*ms)},
			want: []lbRecord{lbAudio(0, 1, 0), lbAudio(20*ms, 1, 20*ms), lbAudio(45*ms, 1, 40*ms)},
		},
		{
			name: "clear",
			ops:  []lbOp{lbClear(10*ms, 3)},
			want: []lbRecord{lbCleared(10*ms, 3)},
		},
		{
			name: "mark",
			ops:  []lbOp{lbMark(15*ms, "m1")},
			want: []lbRecord{lbMarked(15*ms, "m1")},
		},
		{
			name: "wire order at one instant",
			ops:  []lbOp{lbWrite(5*ms, 1, 0), lbMark(5*ms, "a"), lbClear(5*ms, 2), lbWrite(5*ms, 2, 0), lbMark(5*ms, "b")},
			want: []lbRecord{lbAudio(5*ms, 1, 0), lbMarked(5*ms, "a"), lbCleared(5*ms, 2), lbAudio(5*ms, 2, 0), lbMarked(5*ms, "b")},
		},
		{
			name: "barge-in",
			ops: []lbOp{
				lbWrite(0, 1, 0), lbWrite(20*ms, 1, 20*ms), lbMark(25*ms, "end-1"),
				lbClear(30*ms, 2), lbWrite(40*ms, 2, 0), lbWrite(60*ms, 2, 20*ms),
			},
			want: []lbRecord{
				lbAudio(0, 1, 0), lbAudio(20*ms, 1, 20*ms), lbMarked(25*ms, "end-1"),
				lbCleared(30*ms, 2), lbAudio(40*ms, 2, 0), lbAudio(60*ms, 2, 20*ms),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				t0 := time.Now()
				l := NewLoopback(LoopbackConfig{MarkAcks: MarkNever}, lbScenario(), t0.Add(-time.Hour))
				defer l.Close()
				lbRun(t, l, t0, tt.ops, nil)
				got, dropped := l.Records()
				lbCheckRecords(t, lbRecords(t0, got), tt.want)
				if dropped != 0 {
					t.Errorf("dropped %d, want 0", dropped)
				}
				if len(got) == 0 {
					return
				}
				// The result is a copy: changing it changes nothing inside.
				got[0].Kind, got[0].Epoch, got[0].Name = 99, 99, "changed"
				again, _ := l.Records()
				lbCheckRecords(t, lbRecords(t0, again), tt.want)
			})
		})
	}
}

// lbEcho is one call of the echo handler: the mark's name, when, and
// during which op (-1: between ops, from a timer).
type lbEcho struct {
	name   string
	at     time.Duration
	during int
}

// TestLoopbackMarkEchoes checks the three ways of answering marks, and
// that unregistering the handler makes echoes do nothing.
//
// Mutations it catches (each seen failing): MarkAuto with MarkDelay 0
// echoing from a timer instead of at once ("auto at once": during -1);
// MarkAuto ignoring MarkDelay ("auto after a delay"); EchoMark answering
// the newest mark instead of the oldest ("manual in order"); echo calling
// a nil handler (panic in "... unregistered").
func TestLoopbackMarkEchoes(t *testing.T) {
	ms := time.Millisecond
	echo := func(at time.Duration, want bool) lbOp {
		return lbOp{at: at, do: func(t *testing.T, l *Loopback) {
			if got := l.EchoMark(); got != want {
				t.Errorf("EchoMark at %v = %v, want %v", at, got, want)
			}
		}}
	}
	unregister := func(at time.Duration) lbOp {
		return lbOp{at: at, do: func(_ *testing.T, l *Loopback) { l.OnMarkEcho(nil) }}
	}
	tests := []struct {
		name  string
		cfg   LoopbackConfig
		ops   []lbOp
		marks int // marks made
		want  []lbEcho
	}{
		{
			name:  "auto at once",
			marks: 2,
			cfg:   LoopbackConfig{MarkAcks: MarkAuto},
			ops:   []lbOp{lbMark(0, "a"), lbMark(10*ms, "b")},
			want:  []lbEcho{{"a", 0, 0}, {"b", 10 * ms, 1}},
		},
		{
			name:  "auto after a delay",
			marks: 2,
			cfg:   LoopbackConfig{MarkAcks: MarkAuto, MarkDelay: 30 * ms},
			ops:   []lbOp{lbMark(0, "a"), lbMark(10*ms, "b")},
			want:  []lbEcho{{"a", 30 * ms, -1}, {"b", 40 * ms, -1}},
		},
		{
			name:  "auto: EchoMark has nothing to answer",
			marks: 1,
			cfg:   LoopbackConfig{MarkAcks: MarkAuto},
			ops:   []lbOp{lbMark(0, "a"), echo(5*ms, false)},
			want:  []lbEcho{{"a", 0, 0}},
		},
		{
			name:  "manual in order",
			marks: 3,
			cfg:   LoopbackConfig{MarkAcks: MarkManual},
			ops: []lbOp{
				echo(0, false), lbMark(10*ms, "a"), lbMark(20*ms, "b"), lbMark(30*ms, "c"),
				echo(50*ms, true), echo(60*ms, true), echo(70*ms, true), echo(80*ms, false),
			},
			want: []lbEcho{{"a", 50 * ms, 4}, {"b", 60 * ms, 5}, {"c", 70 * ms, 6}},
		},
		{
			name:  "manual interleaved",
			marks: 2,
			cfg:   LoopbackConfig{MarkAcks: MarkManual},
			ops:   []lbOp{lbMark(0, "a"), echo(10*ms, true), lbMark(20*ms, "b"), echo(30*ms, true), echo(40*ms, false)},
			want:  []lbEcho{{"a", 10 * ms, 1}, {"b", 30 * ms, 3}},
		},
		{
			name:  "never",
			marks: 2,
			cfg:   LoopbackConfig{MarkAcks: MarkNever},
			ops:   []lbOp{lbMark(0, "a"), lbMark(10*ms, "b"), echo(20*ms, false)},
		},
		{
			name:  "auto at once, unregistered",
			marks: 2,
			cfg:   LoopbackConfig{MarkAcks: MarkAuto},
			ops:   []lbOp{lbMark(0, "a"), unregister(5 * ms), lbMark(10*ms, "b")},
			want:  []lbEcho{{"a", 0, 0}},
		},
		{
			name:  "auto after a delay, unregistered before it fires",
			marks: 1,
			cfg:   LoopbackConfig{MarkAcks: MarkAuto, MarkDelay: 30 * ms},
			ops:   []lbOp{lbMark(0, "a"), unregister(10 * ms)},
		},
		{
			name:  "manual, unregistered",
			marks: 2,
			cfg:   LoopbackConfig{MarkAcks: MarkManual},
			ops:   []lbOp{lbMark(0, "a"), lbMark(0, "b"), echo(10*ms, true), unregister(20 * ms), echo(30*ms, true), echo(40*ms, false)},
			want:  []lbEcho{{"a", 10 * ms, 2}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				t0 := time.Now()
				l := NewLoopback(tt.cfg, lbScenario(), t0)
				defer l.Close()
				var (
					mu      sync.Mutex
					current = -1
					got     []lbEcho
				)
				l.OnMarkEcho(func(name string) {
					mu.Lock()
					defer mu.Unlock()
					got = append(got, lbEcho{name: name, at: time.Since(t0), during: current})
				})
				lbRun(t, l, t0, tt.ops, func(i int) {
					mu.Lock()
					current = i
					mu.Unlock()
				})
				time.Sleep(time.Second) // any delayed echo is due by now
				mu.Lock()
				defer mu.Unlock()
				if !slices.Equal(got, tt.want) {
					t.Errorf("echoes:\n got  %+v\n want %+v", got, tt.want)
				}
				// Marks are recorded however they are answered.
				recs, _ := l.Records()
				var marks int
				for _, r := range recs {
					if r.Kind == RecordMark {
						marks++
					}
				}
				if marks != tt.marks {
					t.Errorf("%d marks recorded, want %d", marks, tt.marks)
				}
			})
		})
	}
}

// TestLoopbackSlowReader checks the client that takes ReadDelay per audio
// frame: frames written in a burst are recorded ReadDelay apart, a clear
// drops queued frames of older epochs but keeps newer ones, and Close ends
// the reader (the bubble ending proves it exited) with the rest unrecorded.
//
// Mutations it catches (each seen failing): the reader not waiting
// ReadDelay ("back to back"); the reader stamping records with the call's
// start; Clear keeping every queued frame ("clear drops older epochs");
// Clear dropping the clearing epoch's frames too (r.Epoch > epoch: "clear
// keeps newer epochs"); the idle reader not watching the hang-up (Close
// waits forever: "deadlock: all goroutines in bubble are blocked").
func TestLoopbackSlowReader(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name    string
		ops     []lbOp
		closeAt time.Duration
		want    []lbRecord
	}{
		{
			name:    "idle",
			closeAt: 50 * ms,
		},
		{
			name:    "back to back",
			ops:     []lbOp{lbWrite(0, 1, 0), lbWrite(0, 1, 20*ms), lbWrite(0, 1, 40*ms), lbWrite(0, 1, 60*ms)},
			closeAt: time.Second,
			want:    []lbRecord{lbAudio(0, 1, 0), lbAudio(30*ms, 1, 20*ms), lbAudio(60*ms, 1, 40*ms), lbAudio(90*ms, 1, 60*ms)},
		},
		{
			name:    "paced slower than the reader",
			ops:     []lbOp{lbWrite(0, 1, 0), lbWrite(50*ms, 1, 20*ms), lbWrite(100*ms, 1, 40*ms)},
			closeAt: time.Second,
			want:    []lbRecord{lbAudio(0, 1, 0), lbAudio(50*ms, 1, 20*ms), lbAudio(100*ms, 1, 40*ms)},
		},
		{
			name: "clear drops older epochs",
			ops: []lbOp{
				lbWrite(0, 1, 0), lbWrite(0, 1, 20*ms), lbWrite(0, 1, 40*ms),
				lbClear(10*ms, 2), lbWrite(10*ms, 2, 0),
			},
			closeAt: time.Second,
			want:    []lbRecord{lbAudio(0, 1, 0), lbCleared(10*ms, 2), lbAudio(30*ms, 2, 0)},
		},
		{
			name: "clear keeps newer epochs",
			ops: []lbOp{
				lbWrite(0, 1, 0), lbWrite(0, 1, 20*ms), lbWrite(0, 2, 0), lbWrite(0, 3, 0), lbWrite(0, 1, 40*ms),
				lbClear(10*ms, 2),
			},
			closeAt: time.Second,
			want:    []lbRecord{lbAudio(0, 1, 0), lbCleared(10*ms, 2), lbAudio(30*ms, 2, 0), lbAudio(60*ms, 3, 0)},
		},
		{
			name:    "clear and mark are not delayed",
			ops:     []lbOp{lbWrite(0, 1, 0), lbWrite(0, 1, 20*ms), lbMark(5*ms, "m"), lbClear(5*ms, 1)},
			closeAt: time.Second,
			want:    []lbRecord{lbAudio(0, 1, 0), lbMarked(5*ms, "m"), lbCleared(5*ms, 1), lbAudio(30*ms, 1, 20*ms)},
		},
		{
			name:    "close with frames queued",
			ops:     []lbOp{lbWrite(0, 1, 0), lbWrite(0, 1, 20*ms), lbWrite(0, 1, 40*ms)},
			closeAt: 40 * ms,
			want:    []lbRecord{lbAudio(0, 1, 0), lbAudio(30*ms, 1, 20*ms)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				t0 := time.Now()
				l := NewLoopback(LoopbackConfig{ReadDelay: 30 * ms, MarkAcks: MarkNever}, lbScenario(), t0)
				lbRun(t, l, t0, tt.ops, nil)
				time.Sleep(time.Until(t0.Add(tt.closeAt)))
				if err := l.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
				if got := time.Since(t0); got != tt.closeAt {
					t.Errorf("Close returned at %v, want %v", got, tt.closeAt)
				}
				got, _ := l.Records()
				lbCheckRecords(t, lbRecords(t0, got), tt.want)
				// Nothing is recorded after Close.
				time.Sleep(time.Second)
				synctest.Wait()
				later, _ := l.Records()
				lbCheckRecords(t, lbRecords(t0, later), tt.want)
			})
		})
	}
}

// TestLoopbackRecordLimit checks that records past RecordLimit are counted,
// not kept, on both the direct and the slow-reader path.
//
// Mutation it catches (seen failing): the limit test being > instead of >=
// (one record too many is kept).
func TestLoopbackRecordLimit(t *testing.T) {
	ms := time.Millisecond
	burst := []lbOp{lbWrite(0, 1, 0), lbWrite(0, 1, 20*ms), lbMark(0, "a"), lbClear(0, 2), lbWrite(0, 2, 0), lbWrite(0, 2, 20*ms)}
	tests := []struct {
		name        string
		cfg         LoopbackConfig
		ops         []lbOp
		want        []lbRecord
		wantDropped int
	}{
		{
			name: "default limit",
			cfg:  LoopbackConfig{},
			ops:  burst,
			want: []lbRecord{lbAudio(0, 1, 0), lbAudio(0, 1, 20*ms), lbMarked(0, "a"), lbCleared(0, 2), lbAudio(0, 2, 0), lbAudio(0, 2, 20*ms)},
		},
		{
			name: "exactly at the limit",
			cfg:  LoopbackConfig{RecordLimit: 6},
			ops:  burst,
			want: []lbRecord{lbAudio(0, 1, 0), lbAudio(0, 1, 20*ms), lbMarked(0, "a"), lbCleared(0, 2), lbAudio(0, 2, 0), lbAudio(0, 2, 20*ms)},
		},
		{
			name:        "past the limit",
			cfg:         LoopbackConfig{RecordLimit: 3},
			ops:         burst,
			want:        []lbRecord{lbAudio(0, 1, 0), lbAudio(0, 1, 20*ms), lbMarked(0, "a")},
			wantDropped: 3,
		},
		{
			name:        "limit of one",
			cfg:         LoopbackConfig{RecordLimit: 1},
			ops:         burst,
			want:        []lbRecord{lbAudio(0, 1, 0)},
			wantDropped: 5,
		},
		{
			name:        "slow reader past the limit",
			cfg:         LoopbackConfig{RecordLimit: 2, ReadDelay: 10 * ms},
			ops:         []lbOp{lbWrite(0, 1, 0), lbWrite(0, 1, 20*ms), lbWrite(0, 1, 40*ms), lbMark(5*ms, "a")},
			want:        []lbRecord{lbAudio(0, 1, 0), lbMarked(5*ms, "a")},
			wantDropped: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				t0 := time.Now()
				tt.cfg.MarkAcks = MarkNever
				l := NewLoopback(tt.cfg, lbScenario(), t0)
				lbRun(t, l, t0, tt.ops, nil)
				time.Sleep(time.Second) // the slow reader has taken everything
				if err := l.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
				got, dropped := l.Records()
				lbCheckRecords(t, lbRecords(t0, got), tt.want)
				if dropped != tt.wantDropped {
					t.Errorf("dropped %d, want %d", dropped, tt.wantDropped)
				}
			})
		})
	}
}

// TestLoopbackAfterClose: a delayed echo still due at Close never fires,
// and a frame written after the hang-up is refused, not queued. (Mutations
// seen failing: Close not stopping the echo timers; WriteFrame not checking
// the hang-up.)
func TestLoopbackAfterClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewScenario("close").Silence(100 * time.Millisecond)
		l := NewLoopback(LoopbackConfig{MarkDelay: 30 * time.Millisecond, ReadDelay: 30 * time.Millisecond}, s, time.Now())
		echoed := 0
		l.OnMarkEcho(func(string) { echoed++ })
		if err := l.Mark("end-1"); err != nil {
			t.Fatal(err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
		if echoed != 0 {
			t.Errorf("%d echoes after Close, want 0", echoed)
		}
		err := l.WriteFrame(&messages.OutputAudio{Epoch: 1, Rate: 16000})
		if !errors.Is(err, conn.ErrClosed) {
			t.Errorf("WriteFrame after Close: %v, want ErrClosed", err)
		}
		if recs, _ := l.Records(); len(recs) != 1 || recs[0].Kind != RecordMark {
			t.Errorf("records %+v, want only the mark", recs)
		}
	})
}
