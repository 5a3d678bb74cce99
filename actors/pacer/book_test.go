package pacer

import (
	"testing"
	"time"

	"github.com/brisvox/brisvox/messages"
)

const ms = time.Millisecond

// TestBookSettle: an epoch settled at a position keeps the words that
// started before it, and is answered so and refused as stale afterwards,
// also by a new book over the same record (a restarted pacer). (Mutations
// seen failing: a word starting at the position counted; the record kept
// per book, so a restart forgets the settled epochs.)
func TestBookSettle(t *testing.T) {
	tests := []struct {
		name  string
		words []time.Duration
		pos   time.Duration
		want  int
	}{
		{"nothing played", []time.Duration{0, 300 * ms}, 0, 0},
		{"first word started", []time.Duration{0, 300 * ms}, 1, 1},
		{"a word starting at the position is not heard", []time.Duration{0, 300 * ms, 600 * ms}, 300 * ms, 1},
		{"all", []time.Duration{0, 300 * ms}, time.Second, 2},
		{"no words", nil, time.Second, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &record{}
			b := newBook(rec, 20*ms, 0)
			b.begin(3)
			for _, w := range tt.words {
				b.word(w)
			}
			if !b.open() || b.stale(3) {
				t.Fatal("epoch 3 should be open")
			}
			if got := b.settle(tt.pos); got != tt.want {
				t.Errorf("settle(%v) = %d, want %d", tt.pos, got, tt.want)
			}
			restarted := newBook(rec, 20*ms, 0)
			for name, bk := range map[string]*book{"same": b, "restarted": restarted} {
				if got, ok := bk.heardOf(3); !ok || got != tt.want {
					t.Errorf("%s: heardOf(3) = %d %v, want %d", name, got, ok, tt.want)
				}
				if !bk.stale(3) {
					t.Errorf("%s: a settled epoch is not stale", name)
				}
			}
			if b.open() {
				t.Error("a settled epoch is still open")
			}
		})
	}
}

// TestBookStale: which epochs' output is refused. (Mutation seen
// failing: the interrupt's epoch itself refused — the answer to the new
// turn would never play.)
func TestBookStale(t *testing.T) {
	b := newBook(&record{}, 0, 0)
	b.begin(4)
	b.settle(0)
	b.begin(6)
	if !b.interrupt(5) || b.interrupt(5) || b.interrupt(4) {
		t.Fatal("interrupt must take only a newer epoch")
	}
	tests := []struct {
		e     messages.Epoch
		stale bool
	}{
		{3, true}, // older than the interrupt
		{4, true}, // settled
		{5, true}, // older than the epoch being played
		{6, false},
		{7, false},
	}
	for _, tt := range tests {
		if got := b.stale(tt.e); got != tt.stale {
			t.Errorf("stale(%d) = %v, want %v", tt.e, got, tt.stale)
		}
	}
	if _, ok := b.heardOf(9); ok {
		t.Error("an epoch that never played is answered as settled")
	}
	if got, ok := b.heardOf(0); ok || got != 0 {
		t.Error("epoch 0 is never settled")
	}
	fresh := newBook(&record{}, 0, 0)
	fresh.interrupt(5)
	if fresh.stale(5) || !fresh.stale(4) {
		t.Error("after an interrupt to 5, epoch 5 plays and 4 does not")
	}
}

// TestBookHistory: the record keeps the last 8 settled epochs. (Mutation
// seen failing: the ring indexed by epoch instead of by count — epochs
// 1 and 9 share a slot while 2..8 are still wanted.)
func TestBookHistory(t *testing.T) {
	b := newBook(&record{}, 0, 0)
	for e := messages.Epoch(1); e <= 10; e++ {
		b.begin(e * 2)
		b.word(0)
		b.settle(time.Second)
	}
	for e := messages.Epoch(1); e <= 10; e++ {
		_, ok := b.heardOf(e * 2)
		if want := e > 2; ok != want {
			t.Errorf("epoch %d kept %v, want %v", e*2, ok, want)
		}
	}
}

// TestBookCutPos: the heard position of a cut: the lead margin off, never
// below zero, then bounded by what the caller can have played since the
// newest confirmation: the confirmed position plus the time since its
// echo while the frames after it were written in time, never a frame not
// written, and a frame written late played from when it came (its write
// plus the lag the echo showed). (Mutations seen failing: the margin
// added instead of taken off; the confirmation bound ignoring the time
// since its echo; an unconfirmed epoch cut at the clock's position; the
// writes ignored — the confirmed position plus the time since, as before
// the fix: 700 ms in the stall cases; a late frame played from when it
// was due, not from its write — 700, 600 and 800 ms in the backlog cases;
// the lag left out — 650, 600 and 800 ms in the backlog cases.)
func TestBookCutPos(t *testing.T) {
	t0 := time.Unix(1000, 0)
	// grid is when frame off is written in time: 100 ms before it plays,
	// given the echo of 500 ms at t0 (the lag that echo shows: 100 ms).
	grid := func(off time.Duration) time.Time { return t0.Add(off - 600*ms) }
	// upTo: the frames before end written in time, the rest not at all.
	upTo := func(end time.Duration) func(*book) {
		return func(b *book) {
			for off := time.Duration(0); off < end; off += messages.FrameDuration {
				b.out(off, grid(off))
			}
		}
	}
	inTime := upTo(2 * time.Second)
	// lateFrom: the frames before from written in time, the rest of the
	// first second all at once at at (a stall's backlog).
	lateFrom := func(from time.Duration, at time.Time) func(*book) {
		return func(b *book) {
			for off := time.Duration(0); off < time.Second; off += messages.FrameDuration {
				w := grid(off)
				if off >= from {
					w = at
				}
				b.out(off, w)
			}
		}
	}
	tests := []struct {
		name         string
		margin       time.Duration
		confirmEvery time.Duration
		echoes       map[string]time.Time
		writes       func(*book)
		heard        time.Duration
		now          time.Time
		want         time.Duration
		bounded      bool
		stalled      bool
	}{
		{"margin off", 20 * ms, 0, nil, nil, time.Second, t0, 980 * ms, false, false},
		{"never below zero", 20 * ms, 0, nil, nil, 10 * ms, t0, 0, false, false},
		{"no confirmation yet: nothing heard", 20 * ms, 100 * ms, nil, inTime, time.Second, t0, 0, true, false},
		{"confirmed plus the time since", 20 * ms, 100 * ms, map[string]time.Time{"pos-1-500": t0}, inTime, time.Second, t0.Add(200 * ms), 700 * ms, true, false},
		{"confirmation ahead of the clock", 20 * ms, 100 * ms, map[string]time.Time{"pos-1-500": t0}, inTime, 600 * ms, t0.Add(200 * ms), 580 * ms, false, false},
		{"an older echo does not move it back", 0, 100 * ms, map[string]time.Time{"pos-1-500": t0, "pos-1-400": t0.Add(50 * ms)}, inTime, time.Second, t0.Add(100 * ms), 600 * ms, true, false},
		{"nothing written after the confirmation", 20 * ms, 100 * ms, map[string]time.Time{"pos-1-500": t0}, upTo(500 * ms), time.Second, t0.Add(200 * ms), 500 * ms, true, true},
		{"no transport notes at all", 20 * ms, 100 * ms, map[string]time.Time{"pos-1-500": t0}, nil, time.Second, t0.Add(200 * ms), 500 * ms, true, true},
		{"not beyond what was written", 20 * ms, 100 * ms, map[string]time.Time{"pos-1-500": t0}, upTo(560 * ms), time.Second, t0.Add(200 * ms), 560 * ms, true, true},
		{"a stall's backlog plays from when it came", 20 * ms, 100 * ms, map[string]time.Time{"pos-1-500": t0}, lateFrom(500*ms, t0.Add(50*ms)), time.Second, t0.Add(200 * ms), 550 * ms, true, true},
		{"a backlog plays in real time, the lag after its write", 20 * ms, 100 * ms, map[string]time.Time{"pos-1-500": t0}, lateFrom(520*ms, t0.Add(-50*ms)), time.Second, t0.Add(100 * ms), 570 * ms, true, true},
		{"a backlog written before the cut is due plays on", 20 * ms, 100 * ms, map[string]time.Time{"pos-1-500": t0}, lateFrom(520*ms, t0.Add(-50*ms)), time.Second, t0.Add(300 * ms), 770 * ms, true, true},
		{"a frame never written ends the count", 20 * ms, 100 * ms, map[string]time.Time{"pos-1-500": t0}, func(b *book) {
			upTo(520 * ms)(b)
			b.out(540*ms, grid(540*ms))
		}, time.Second, t0.Add(200 * ms), 520 * ms, true, true},
		{"a frame noted twice keeps its first write", 20 * ms, 100 * ms, map[string]time.Time{"pos-1-500": t0}, func(b *book) {
			upTo(2 * time.Second)(b)
			b.out(520*ms, t0.Add(time.Second))
		}, time.Second, t0.Add(200 * ms), 700 * ms, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBook(&record{}, tt.margin, tt.confirmEvery)
			b.begin(1)
			if tt.writes != nil {
				tt.writes(b)
			}
			for _, name := range []string{"pos-1-500", "pos-1-400"} { // in this order
				if at, ok := tt.echoes[name]; ok {
					b.echo(name, at)
				}
			}
			pos, bounded, stalled := b.cutPos(tt.heard, tt.now)
			if pos != tt.want || bounded != tt.bounded || stalled != tt.stalled {
				t.Errorf("cutPos = %v %v %v, want %v %v %v", pos, bounded, stalled, tt.want, tt.bounded, tt.stalled)
			}
		})
	}
}

// TestBookOuts: the write times kept after the newest confirmation stay
// right as the ring compacts, at most maxOuts of them; an echo older
// than the oldest kept counts only its own position, a newer one plays
// on from the writes again; a new epoch starts with none. (Mutations
// seen failing: the index not moved at a compaction — out never returns,
// the test times out; no bound — 251 kept; the let-go frames read as
// following the confirmed one — 1040ms played at 1.5 s.)
func TestBookOuts(t *testing.T) {
	t0 := time.Unix(1000, 0)
	b := newBook(&record{}, 0, 100*ms)
	b.begin(1)
	// 300 frames, each written 40 ms before it is due at the caller.
	due := func(off time.Duration) time.Time { return t0.Add(off) }
	for i := range 300 {
		off := time.Duration(i) * messages.FrameDuration
		b.out(off, due(off).Add(-40*ms))
		if n := len(b.outs) - b.head; n > maxOuts {
			t.Fatalf("%d write times kept, want at most %d", n, maxOuts)
		}
	}
	if b.outFrom != 50*messages.FrameDuration {
		t.Fatalf("outs from %v, want 1s (300 frames, %d kept)", b.outFrom, maxOuts)
	}
	b.echo("pos-1-500", due(500*ms))
	for _, at := range []time.Duration{600 * ms, 1500 * ms} {
		if got := b.playedBy(due(at)); got != 500*ms {
			t.Errorf("after an echo older than the kept writes, at %v: %v, want 500ms", at, got)
		}
	}
	// Echoes walk on every 100 ms while 100 ms more are written each
	// time: the ring trims at the echoes and compacts as it fills.
	next := 300
	for p := 1100 * ms; p <= 5000*ms; p += 100 * ms {
		b.echo(confirmName(1, p), due(p))
		for range 5 {
			off := time.Duration(next) * messages.FrameDuration
			b.out(off, due(off).Add(-40*ms))
			next++
		}
		if n := len(b.outs) - b.head; n > maxOuts {
			t.Fatalf("echo at %v: %d write times kept, want at most %d", p, n, maxOuts)
		}
		for _, since := range []time.Duration{30 * ms, 2 * time.Second} {
			if got := b.playedBy(due(p).Add(since)); got != p+since {
				t.Fatalf("echo at %v: played by %v later %v, want %v", p, since, got, p+since)
			}
		}
	}
	b.begin(2)
	if len(b.outs) != 0 || b.outFrom != 0 {
		t.Fatalf("a new epoch keeps %d write times from %v", len(b.outs), b.outFrom)
	}
}

// TestBookEcho: what each mark echo means to the book. (Mutations seen
// failing: echoes of another epoch taken as confirmations; the end mark
// of a settled epoch told to the actor again.)
func TestBookEcho(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tests := []struct {
		name         string
		confirmEvery time.Duration
		settled      bool
		echoes       []string
		want         echoKind
	}{
		{"no confirmations", 0, false, []string{"pos-2-100"}, echoIgnored},
		{"settled epoch", 100 * ms, true, []string{"end-2"}, echoIgnored},
		{"end mark", 100 * ms, false, []string{"end-2"}, echoEnd},
		{"end mark of another epoch", 100 * ms, false, []string{"end-1"}, echoStale},
		{"position", 100 * ms, false, []string{"pos-2-100"}, echoConfirmed},
		{"first position at zero", 100 * ms, false, []string{"pos-2-0"}, echoConfirmed},
		{"position of another epoch", 100 * ms, false, []string{"pos-1-100"}, echoStale},
		{"garbage", 100 * ms, false, []string{"hello"}, echoStale},
		{"older position", 100 * ms, false, []string{"pos-2-200", "pos-2-100"}, echoOld},
		{"newer position", 100 * ms, false, []string{"pos-2-100", "pos-2-200"}, echoConfirmed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBook(&record{}, 0, tt.confirmEvery)
			b.begin(2)
			if tt.settled {
				b.settle(0)
			}
			var got echoKind
			for _, n := range tt.echoes {
				got = b.echo(n, t0)
			}
			if got != tt.want {
				t.Errorf("echo = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestConfirmNames: a position mark's name reads back as its epoch and
// position, and the names a client could send otherwise are refused.
// Mutation caught: the "pos-" prefix not required (a bare "3-100" is
// read).
func TestConfirmNames(t *testing.T) {
	for _, c := range []struct {
		e   messages.Epoch
		pos time.Duration
	}{{1, 0}, {7, 100 * time.Millisecond}, {1 << 40, time.Hour}} {
		e, pos, ok := parseConfirmName(confirmName(c.e, c.pos))
		if !ok || e != c.e || pos != c.pos {
			t.Errorf("%s read as %d %v %v", confirmName(c.e, c.pos), e, pos, ok)
		}
	}
	for _, bad := range []string{"", "end-3", "3-100", "pos-", "pos-3", "pos-3-", "pos--100", "pos-3--100", "pos-x-1", "pos-3-1e3", "pos-3-99999999999999999999"} {
		if e, pos, ok := parseConfirmName(bad); ok {
			t.Errorf("%q read as %d %v", bad, e, pos)
		}
	}
}

// FuzzConfirmName: a mark name comes back from the client: any string is
// either refused or read as a position that is not negative, and never
// panics.
func FuzzConfirmName(f *testing.F) {
	for _, s := range []string{"pos-1-100", "end-1", "pos-18446744073709551615-9223372036854", "pos-1-9223372036854775807", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if _, pos, ok := parseConfirmName(name); ok && pos < 0 {
			t.Fatalf("%q read as %v", name, pos)
		}
	})
}
