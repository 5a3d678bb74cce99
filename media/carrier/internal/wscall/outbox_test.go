package wscall

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/messages"
	"github.com/coder/websocket"
)

func outboxCounters() *Counters {
	return NewCounters("out_full", "stale_frames", "cleared_frames", "marks", "mark_echoes",
		"marks_cleared", "marks_unechoed", "unexpected_mark_echoes")
}

func text(s string) func([]byte) []byte {
	return func(dst []byte) []byte { return append(dst, s...) }
}

// popAll empties the outbox, returning the messages' texts.
func popAll(o *Outbox) []string {
	var out []string
	var spare []byte
	for {
		it, ok := o.Pop(spare)
		if !ok {
			return out
		}
		out = append(out, string(it.Buf))
		spare = it.Buf
	}
}

// TestOutboxClear: a clear drops the queued audio of older epochs and the
// queued marks, goes out ahead of the newer audio kept, and later audio
// of an older epoch is refused as stale. Mutations caught: appending the
// clear at the tail (it would throw the kept audio away at the peer),
// keeping queued marks (their echo would come at once and read as
// played), no minEpoch check (stale audio after the clear).
func TestOutboxClear(t *testing.T) {
	st := outboxCounters()
	o := NewOutbox(8, 8, st)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	bin := websocket.MessageBinary
	must(o.Audio(bin, 1, text("a1")))
	must(o.Mark("end-1", text("m1")))
	must(o.Audio(bin, 2, text("b2")))
	must(o.Audio(bin, 1, text("a1'")))
	must(o.Clear(2, text("clear")))
	if err := o.Audio(bin, 1, text("late")); !errors.Is(err, ErrStale) {
		t.Fatalf("audio of epoch 1 after Clear(2): %v, want ErrStale", err)
	}
	must(o.Audio(bin, 2, text("b2'")))
	if got, want := popAll(o), []string{"clear", "b2", "b2'"}; !slices.Equal(got, want) {
		t.Fatalf("wire order %q, want %q", got, want)
	}
	if st.Get("cleared_frames") != 2 || st.Get("marks_cleared") != 1 || st.Get("stale_frames") != 1 || o.Pending() != 0 {
		t.Fatalf("counters %v, pending %d", st.Snapshot(), o.Pending())
	}
}

// TestOutboxEchoes: only the echo of a mark that was sent and not cleared
// confirms playback; echoes of cleared, unsent and unknown marks are
// swallowed and counted. Mutations caught: flagging only marks still
// queued as cleared (the sent mark's echo after a clear would confirm),
// matching echoes of marks not yet sent.
func TestOutboxEchoes(t *testing.T) {
	st := outboxCounters()
	o := NewOutbox(8, 8, st)
	_ = o.Mark("end-1", text("m1"))
	_ = o.Mark("end-2", text("m2"))
	if o.Echo("end-2") {
		t.Fatal("echo of a mark not yet sent confirmed playback")
	}
	popAll(o)
	if !o.Echo("end-1") {
		t.Fatal("echo of a sent mark did not confirm playback")
	}
	_ = o.Clear(3, text("clear"))
	popAll(o)
	if o.Echo("end-2") {
		t.Fatal("echo of a mark sent before the clear confirmed playback")
	}
	if o.Echo("nobody") {
		t.Fatal("echo of an unknown mark confirmed playback")
	}
	_ = o.Mark("end-3", text("m3"))
	popAll(o)
	if !o.Echo("end-3") {
		t.Fatal("echo of a mark sent after the clear did not confirm playback")
	}
	want := map[string]uint64{"marks": 3, "mark_echoes": 2, "marks_cleared": 1, "unexpected_mark_echoes": 2}
	for k, v := range want {
		if got := st.Get(k); got != v {
			t.Errorf("%s = %d, want %d", k, got, v)
		}
	}
}

// TestOutboxBounds: a full queue refuses with ErrQueueFull, the mark book
// forgets the oldest beyond its bound, and a closed outbox refuses with
// conn.ErrClosed. Mutation caught: a pending list without bound.
func TestOutboxBounds(t *testing.T) {
	st := outboxCounters()
	o := NewOutbox(2, 2, st)
	_ = o.Audio(websocket.MessageBinary, 1, text("a"))
	_ = o.Audio(websocket.MessageBinary, 1, text("b"))
	if err := o.Audio(websocket.MessageBinary, 1, text("c")); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("third message in a queue of 2: %v", err)
	}
	popAll(o)
	for _, n := range []string{"x", "y", "z"} {
		_ = o.Mark(n, text(n))
		popAll(o)
	}
	if o.Pending() != 2 || st.Get("marks_unechoed") != 1 || o.Echo("x") {
		t.Fatalf("pending %d, unechoed %d", o.Pending(), st.Get("marks_unechoed"))
	}
	o.Close()
	if err := o.Mark("w", text("w")); !errors.Is(err, conn.ErrClosed) {
		t.Fatalf("Mark after Close: %v", err)
	}
	if err := o.Clear(5, text("c")); !errors.Is(err, conn.ErrClosed) {
		t.Fatalf("Clear after Close: %v", err)
	}
}

// TestOutboxSteadyStateAllocs: queueing and popping reuses the slots'
// buffers. Mutation caught: Pop not handing the spare back (a fresh
// buffer per message).
func TestOutboxSteadyStateAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	o := NewOutbox(4, 4, outboxCounters())
	payload := make([]byte, 400)
	enc := func(dst []byte) []byte { return append(dst, payload...) }
	var spare []byte
	step := func() {
		_ = o.Audio(websocket.MessageText, messages.Epoch(1), enc)
		it, _ := o.Pop(spare)
		spare = it.Buf
	}
	for range 8 {
		step()
	}
	if a := testing.AllocsPerRun(100, step); a != 0 {
		t.Fatalf("%v allocs per message, want 0", a)
	}
}

// TestAppendJSONString: the output is a JSON string that decodes to the
// input (invalid UTF-8 as U+FFFD, as encoding/json does).
func TestAppendJSONString(t *testing.T) {
	for _, s := range []string{"", "end-1", `quo"te\back`, "ctl\x00\x1f\n", "caf\xc3\xa9", "bad\xff", "\u2028"} {
		checkJSONString(t, s)
	}
}

func checkJSONString(t *testing.T, s string) {
	t.Helper()
	enc := AppendJSONString(nil, s)
	var got string
	if err := json.Unmarshal(enc, &got); err != nil {
		t.Fatalf("%q encodes to invalid JSON %q: %v", s, enc, err)
	}
	want, _ := json.Marshal(s)
	var wantS string
	_ = json.Unmarshal(want, &wantS)
	if got != wantS {
		t.Fatalf("%q round-trips to %q, want %q", s, got, wantS)
	}
}

// FuzzAppendJSONString: every string encodes to JSON that decodes as
// encoding/json's own encoding does.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "end-1", `"\`, "\x00", "\xff\xfe", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkJSONString(t, s) })
}

// TestOutboxHoldsBuffersOnlyForQueuedMessages: a call whose writer keeps
// up (one message queued at a time) cycles through every slot of its
// ring but holds two buffers (the queued one's and the writer's), not one
// per slot. Mutation caught: the slot keeping its buffer after Pop (the
// old swap) -> 100 buffers held, 64 KiB a call of 640-byte frames.
func TestOutboxHoldsBuffersOnlyForQueuedMessages(t *testing.T) {
	o := NewOutbox(100, 4, outboxCounters())
	payload := make([]byte, 640)
	enc := func(dst []byte) []byte { return append(dst, payload...) }
	var spare []byte
	for range 300 {
		if err := o.Audio(websocket.MessageBinary, 1, enc); err != nil {
			t.Fatal(err)
		}
		it, _ := o.Pop(spare)
		spare = it.Buf
	}
	// A clear drops queued audio: its buffers go back too.
	for range 5 {
		_ = o.Audio(websocket.MessageBinary, 1, enc)
	}
	if err := o.Clear(2, text("clear")); err != nil {
		t.Fatal(err)
	}
	popAll(o)
	held := len(o.free)
	for _, it := range o.slots {
		if cap(it.Buf) > 0 {
			held++
		}
	}
	if held > 7 {
		t.Errorf("%d buffers held by an empty outbox, want at most the 6 ever queued at once and the writer's", held)
	}
}
