package media

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

const (
	jbFrame = 20 * time.Millisecond
	jbSPF   = 160 // 20 ms at 8 kHz
)

// jbBase is an arbitrary call start; the buffer only compares times.
var jbBase = time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)

// jbPkt is one packet of a synthetic stream: it arrives at base+at.
type jbPkt struct {
	seq    uint16
	ts     uint32
	ssrc   uint32
	pt     uint8
	marker bool
	at     time.Duration
	raw    []byte // sent as is when set
}

// g711Payload is a 160-byte payload whose first two bytes carry seq, so a
// test can tell which packet Pop returned.
func g711Payload(seq uint16) []byte {
	b := make([]byte, jbSPF)
	binary.BigEndian.PutUint16(b, seq)
	return b
}

func (p jbPkt) bytes() []byte {
	if p.raw != nil {
		return p.raw
	}
	ssrc := p.ssrc
	if ssrc == 0 {
		ssrc = 0x5555
	}
	return marshalRTP(rtpSpec{pt: p.pt, seq: p.seq, ts: p.ts, ssrc: ssrc, marker: p.marker, payload: g711Payload(p.seq)})
}

// regular makes n packets from seq0/ts0, one per 20 ms, arriving on time.
func regular(seq0 uint16, ts0 uint32, n int, at0 time.Duration) []jbPkt {
	out := make([]jbPkt, n)
	for i := range out {
		out[i] = jbPkt{seq: seq0 + uint16(i), ts: ts0 + uint32(i*jbSPF), at: at0 + time.Duration(i)*jbFrame}
	}
	return out
}

// runJB pushes each packet when its time has come and pops once per tick
// at base + i*20ms + 10ms, for ticks ticks. It returns one token per tick:
// B buffering, E empty, F<seq> a frame (M<seq> when it has the marker
// bit), L<seq> lost. It checks the counters' invariants after every call,
// and that every L and E tick is counted once (concealed, paused or
// undecided).
func runJB(t *testing.T, jb *JitterBuffer, pkts []jbPkt, ticks int) []string {
	t.Helper()
	pkts = slices.Clone(pkts)
	slices.SortStableFunc(pkts, func(a, b jbPkt) int { return int(a.at - b.at) })
	var out []string
	next := 0
	ticked := tickCount(jb.Stats())
	for i := range ticks {
		now := jbBase.Add(time.Duration(i)*jbFrame + 10*time.Millisecond)
		for next < len(pkts) && !jbBase.Add(pkts[next].at).After(now) {
			_ = jb.Push(pkts[next].bytes(), jbBase.Add(pkts[next].at))
			checkJBInvariants(t, jb)
			next++
		}
		payload, st := jb.Pop(now)
		checkJBInvariants(t, jb)
		switch st.Kind {
		case PopBuffering:
			out = append(out, "B")
		case PopEmpty:
			out = append(out, "E")
			ticked++
		case PopFrame:
			if got := binary.BigEndian.Uint16(payload); got != st.Seq {
				t.Fatalf("tick %d: frame %d carries the payload of %d", i, st.Seq, got)
			}
			kind := "F"
			if st.Marker {
				kind = "M"
			}
			out = append(out, fmt.Sprintf("%s%d", kind, st.Seq))
		case PopLost:
			out = append(out, fmt.Sprintf("L%d", st.Seq))
			ticked++
		}
		if got := tickCount(jb.Stats()); got != ticked {
			t.Fatalf("tick %d: %d lost or empty ticks, counted %d: %+v", i, ticked, got, jb.Stats())
		}
	}
	return out
}

// tickCount is how many PopLost and PopEmpty ticks the counters account
// for.
func tickCount(s JitterStats) uint64 { return s.Concealed + s.Paused + s.Undecided }

// checkJBInvariants: every push lands in one counter, every accepted
// packet is played, dropped or held, and the capacity holds.
func checkJBInvariants(t *testing.T, jb *JitterBuffer) {
	t.Helper()
	s := jb.Stats()
	if in := s.Accepted + s.Duplicates + s.Late + s.BadVersion + s.Malformed + s.BadPayloadType + s.Jumps; in != s.Received {
		t.Fatalf("received %d but accounted %d: %+v", s.Received, in, s)
	}
	if out := s.Played + s.Overflow + s.Discarded + uint64(s.Held); out != s.Accepted {
		t.Fatalf("accepted %d but played+dropped+held %d: %+v", s.Accepted, out, s)
	}
	if s.Held > jb.cfg.Capacity || s.Held < 0 {
		t.Fatalf("holds %d packets, capacity %d", s.Held, jb.cfg.Capacity)
	}
}

// seqTokens renders the expected tokens compactly: "F0-9" is F0..F9,
// "L10x3" is L10 three times, "Bx2" two B.
func seqTokens(spec string) []string {
	var out []string
	for f := range strings.FieldsSeq(spec) {
		kind, rest := f[:1], f[1:]
		if a, b, ok := strings.Cut(rest, "-"); ok {
			var from, to int
			fmt.Sscan(a, &from)
			fmt.Sscan(b, &to)
			for s := from; s <= to; s++ {
				out = append(out, fmt.Sprintf("%s%d", kind, uint16(s)))
			}
			continue
		}
		n := 1
		if a, b, ok := strings.Cut(rest, "x"); ok {
			rest = a
			fmt.Sscan(b, &n)
		}
		for range n {
			out = append(out, kind+rest)
		}
	}
	return out
}

func newTestJB(t *testing.T, cfg JitterConfig) *JitterBuffer {
	t.Helper()
	if cfg.ShrinkAfter == 0 {
		cfg.ShrinkAfter = 1000 // no shrinking unless the test is about it
	}
	if cfg.MaxDelay == 0 {
		cfg.MaxDelay = 8
	}
	if cfg.Capacity == 0 {
		cfg.Capacity = 16
	}
	jb, err := NewJitterBuffer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return jb
}

// without drops packets by sequence number.
func without(pkts []jbPkt, seqs ...uint16) []jbPkt {
	return slices.DeleteFunc(slices.Clone(pkts), func(p jbPkt) bool { return slices.Contains(seqs, p.seq) })
}

// at moves the arrival of packet seq.
func at(pkts []jbPkt, seq uint16, d time.Duration) []jbPkt {
	pkts = slices.Clone(pkts)
	for i := range pkts {
		if pkts[i].seq == seq {
			pkts[i].at = d
		}
	}
	return pkts
}

func TestJitterBufferPlayout(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name  string
		cfg   JitterConfig
		pkts  []jbPkt
		ticks int
		want  string
		stats JitterStats // Jitter is not compared
	}{
		{
			// Mutation: starting at 2 frames, or playing before the start,
			// shifts every token.
			name:  "in order: primes 3 frames, plays each once, conceals the end, then buffers when idle",
			pkts:  regular(0, 1000, 10, 0),
			ticks: 23,
			// The stream ended: nothing tells a pause from a loss yet.
			want:  "Bx2 F0-9 L10x10 B",
			stats: JitterStats{Received: 10, Accepted: 10, Played: 10, Undecided: 10, Delay: 3, TargetDelay: 3, HighestSeq: 9},
		},
		{
			// Mutation: playing in arrival order plays 5 before 4.
			name:  "reordered within the window plays in order",
			pkts:  at(regular(0, 0, 8, 0), 4, 100*ms+1),
			ticks: 10,
			want:  "Bx2 F0-7",
			stats: JitterStats{Received: 8, Accepted: 8, Played: 8, Reordered: 1, Delay: 3, TargetDelay: 3, HighestSeq: 7},
		},
		{
			// Mutation: not recognising a copy plays it twice (or counts
			// the late copy of a played packet as late).
			name: "duplicates dropped, before and after playout",
			pkts: append(regular(0, 0, 6, 0),
				jbPkt{seq: 3, ts: 3 * jbSPF, at: 70 * ms}, jbPkt{seq: 1, ts: jbSPF, at: 150 * ms}),
			ticks: 8,
			want:  "Bx2 F0-5",
			stats: JitterStats{Received: 8, Accepted: 6, Played: 6, Duplicates: 2, Delay: 3, TargetDelay: 3, HighestSeq: 5},
		},
		{
			// Mutation: waiting for the missing packet stalls; not counting
			// it, or reporting it a tick early or late, fails here.
			name:  "gap reported lost at its tick",
			pkts:  without(regular(0, 0, 10, 0), 5),
			ticks: 12,
			want:  "Bx2 F0-4 L5 F6-9",
			stats: JitterStats{Received: 9, Accepted: 9, Played: 9, Lost: 1, Concealed: 1, Delay: 3, TargetDelay: 3, HighestSeq: 9},
		},
		{
			// Mutation: counting the concealed tick lost twice, or not
			// skipping the missing frame once the next one is due.
			name:  "gap at delay 1: concealed as underrun, counted lost when the next arrives",
			cfg:   JitterConfig{InitialDelay: 1},
			pkts:  without(regular(0, 0, 10, 0), 5),
			ticks: 10,
			want:  "F0-4 L5 F6-9",
			stats: JitterStats{Received: 9, Accepted: 9, Played: 9, Lost: 1, Concealed: 1, Delay: 1, TargetDelay: 1, HighestSeq: 9},
		},
		{
			// Mutation: playing a late packet out of order, or counting it
			// a duplicate.
			name:  "late packet dropped and counted; the target grows by its lateness",
			pkts:  at(regular(0, 0, 10, 0), 5, 180*ms),
			ticks: 12,
			want:  "Bx2 F0-4 L5 F6-9",
			stats: JitterStats{Received: 10, Accepted: 9, Played: 9, Lost: 1, Late: 1, Concealed: 1, Delay: 3, TargetDelay: 5, HighestSeq: 9},
		},
		{
			// Mutation: comparing sequence numbers without extension sorts
			// 0 before 65535.
			name:  "sequence wrap 65535 -> 0",
			pkts:  regular(65531, 0, 10, 0),
			ticks: 12,
			want:  "Bx2 F65531-65535 F0-4",
			stats: JitterStats{Received: 10, Accepted: 10, Played: 10, Delay: 3, TargetDelay: 3, HighestSeq: 1<<16 | 4},
		},
		{
			// Mutation: comparing raw 32-bit timestamps makes the frames
			// after the wrap look due long ago (late) or far ahead (pause).
			name:  "timestamp wrap at 2^32",
			pkts:  regular(100, 1<<32-3*jbSPF, 8, 0),
			ticks: 10,
			want:  "Bx2 F100-107",
			stats: JitterStats{Received: 8, Accepted: 8, Played: 8, Delay: 3, TargetDelay: 3, HighestSeq: 107},
		},
		{
			// Mutation: treating the new SSRC's sequence numbers as a jump of
			// the old stream drops them.
			name: "new SSRC resyncs: old packets discarded, the new stream primes again",
			pkts: append(regular(0, 0, 6, 0), func() []jbPkt {
				p := regular(1000, 777777, 6, 120*ms)
				for i := range p {
					p[i].ssrc = 0x6666
				}
				return p
			}()...),
			ticks: 14,
			want:  "Bx2 F0-3 Bx2 F1000-1005",
			stats: JitterStats{Received: 12, Accepted: 12, Played: 10, Discarded: 2, Resyncs: 1, Delay: 3, TargetDelay: 3, HighestSeq: 1005},
		},
		{
			// Mutation: reporting the pause as losses, or playing the resumed
			// stream at once (its timestamps are ahead), fails here; so does
			// counting the underrun ticks concealed (Concealed 8, the bug
			// of jitter_concealed for DTX callers) or the E ticks nowhere.
			name: "sender pause (DTX): timestamps jump, sequence contiguous, resumes on schedule",
			pkts: append(regular(0, 0, 5, 0), func() []jbPkt {
				p := regular(5, 15*jbSPF, 5, 300*ms)
				return p
			}()...),
			ticks: 22,
			want:  "Bx2 F0-4 L5x8 Ex2 F5-9",
			stats: JitterStats{Received: 10, Accepted: 10, Played: 10, Paused: 10, Delay: 3, TargetDelay: 3, HighestSeq: 9},
		},
		{
			// Mutation: reporting the comfort-noise packet's sequence number
			// lost (L5) instead of skipping it.
			name: "other payload type counted and its slot played as a pause",
			pkts: append(without(regular(0, 0, 8, 0), 5),
				jbPkt{seq: 5, ts: 5 * jbSPF, pt: 13, at: 100 * ms},
				jbPkt{seq: 9, ts: 5 * jbSPF, pt: 72, ssrc: 0xABCD, at: 100 * ms}, // RTCP on a muxed port
			),
			ticks: 10,
			want:  "Bx2 F0-4 E F6-7",
			stats: JitterStats{Received: 9, Accepted: 7, Played: 7, Paused: 1, BadPayloadType: 2, Delay: 3, TargetDelay: 3, HighestSeq: 7},
		},
		{
			// Mutation: believing a single stray jump loses the stream.
			name:  "single sequence jump dropped, the stream goes on",
			pkts:  append(regular(0, 0, 8, 0), jbPkt{seq: 20000, ts: 4 * jbSPF, at: 61 * ms}),
			ticks: 10,
			want:  "Bx2 F0-7",
			stats: JitterStats{Received: 9, Accepted: 8, Played: 8, Jumps: 1, Delay: 3, TargetDelay: 3, HighestSeq: 7},
		},
		{
			// Mutation: never believing a jump loses the restarted stream.
			name: "sequence jump confirmed by the next packet resyncs",
			pkts: append(regular(0, 0, 4, 0), func() []jbPkt {
				return regular(30000, 4*jbSPF, 6, 80*ms)
			}()...),
			ticks: 12,
			want:  "Bx2 F0-2 Bx2 F30001-30005",
			stats: JitterStats{Received: 10, Accepted: 9, Played: 8, Discarded: 1, Jumps: 1, Resyncs: 1, Delay: 3, TargetDelay: 3, HighestSeq: 30005},
		},
		{
			// Mutation: no timestamp horizon check drops the rest as late
			// (the timestamps went back by a minute).
			name: "timestamp jump of the same source resyncs",
			pkts: append(regular(0, 8000*60, 5, 0), func() []jbPkt {
				return regular(5, 0, 5, 100*ms)
			}()...),
			ticks: 12,
			want:  "Bx2 F0-2 Bx2 F5-9",
			stats: JitterStats{Received: 10, Accepted: 10, Played: 8, Discarded: 2, Resyncs: 1, Delay: 3, TargetDelay: 3, HighestSeq: 9},
		},
		{
			// Mutation: holding more than the capacity, or dropping the
			// newest instead of the oldest.
			name:  "overflow while nobody pops: the oldest dropped, playout starts at the target",
			cfg:   JitterConfig{MaxDelay: 4, Capacity: 8},
			pkts:  regular(0, 0, 20, -400*ms),
			ticks: 4,
			want:  "F17-19 L20",
			stats: JitterStats{Received: 20, Accepted: 20, Played: 3, Overflow: 12, Discarded: 5, Undecided: 1, Delay: 3, TargetDelay: 3, HighestSeq: 19},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			jb := newTestJB(t, tc.cfg)
			got := runJB(t, jb, tc.pkts, tc.ticks)
			if want := seqTokens(tc.want); !slices.Equal(got, want) {
				t.Errorf("playout\n got %v\nwant %v", got, want)
			}
			st := jb.Stats()
			st.Jitter = 0
			st.Held = 0
			if st != tc.stats {
				t.Errorf("stats\n got %+v\nwant %+v", st, tc.stats)
			}
		})
	}
}

func TestJitterBufferAdaptiveDelayRises(t *testing.T) {
	// A stream at delay 1 with two delay spikes: packets 10-12 and 30-32
	// arrive together 45 ms after 10 was due.
	pkts := regular(0, 0, 40, 0)
	for _, s := range []uint16{10, 11, 12} {
		pkts = at(pkts, s, 245*time.Millisecond)
	}
	for _, s := range []uint16{30, 31, 32} {
		pkts = at(pkts, s, 645*time.Millisecond)
	}
	jb := newTestJB(t, JitterConfig{InitialDelay: 1})
	got := runJB(t, jb, pkts[:25], 25)
	// The first spike finds the delay at 1: two ticks concealed, 10 and 11
	// late; the target rises to the delay plus the lateness of 10.
	// Mutation: growing the target by 1 instead of the lateness leaves it
	// at 2; dropping 12 too (it came in time) loses F12.
	if want := seqTokens("F0-9 L10x2 F12-24"); !slices.Equal(got, want) {
		t.Fatalf("first spike\n got %v\nwant %v", got, want)
	}
	st := jb.Stats()
	if st.Late != 2 || st.Lost != 2 || st.Concealed != 2 || st.TargetDelay != 3 || st.Delay != 1 {
		t.Fatalf("after the first spike: %+v", st)
	}
	// The second spike: the delay follows the target on the two underrun
	// ticks instead of advancing the clock, so nothing is late.
	// Mutation: advancing the clock on underruns although the target asks
	// for more drops 30 and 31 again.
	more := runJBFrom(t, jb, pkts[25:], 25, 15)
	if want := seqTokens("F25-29 L30x2 F30-37"); !slices.Equal(more, want) {
		t.Fatalf("second spike\n got %v\nwant %v", more, want)
	}
	st = jb.Stats()
	if st.Late != 2 || st.Lost != 2 || st.Concealed != 4 || st.TargetDelay != 3 || st.Delay != 3 {
		t.Fatalf("after the second spike: %+v", st)
	}
}

// runJBFrom continues runJB from tick first.
func runJBFrom(t *testing.T, jb *JitterBuffer, pkts []jbPkt, first, ticks int) []string {
	t.Helper()
	var out []string
	next := 0
	ticked := tickCount(jb.Stats())
	for i := first; i < first+ticks; i++ {
		now := jbBase.Add(time.Duration(i)*jbFrame + 10*time.Millisecond)
		for next < len(pkts) && !jbBase.Add(pkts[next].at).After(now) {
			_ = jb.Push(pkts[next].bytes(), jbBase.Add(pkts[next].at))
			checkJBInvariants(t, jb)
			next++
		}
		_, st := jb.Pop(now)
		checkJBInvariants(t, jb)
		switch st.Kind {
		case PopFrame:
			out = append(out, fmt.Sprintf("F%d", st.Seq))
		case PopLost:
			out = append(out, fmt.Sprintf("L%d", st.Seq))
			ticked++
		case PopEmpty:
			out = append(out, "E")
			ticked++
		default:
			out = append(out, "B")
		}
		if got := tickCount(jb.Stats()); got != ticked {
			t.Fatalf("tick %d: %d lost or empty ticks, counted %d: %+v", i, ticked, got, jb.Stats())
		}
	}
	return out
}

func TestJitterBufferAdaptiveDelayFalls(t *testing.T) {
	// A calm stream (no jitter) primed at 4 frames with ShrinkAfter 10:
	// every 10 frames the target steps down and the next tick discards one
	// frame, until MinDelay 1.
	// Mutation: shrinking faster (no reset of the stable count) changes the
	// discarded frames 10, 21 and 32; not discarding leaves the delay at 4.
	jb := newTestJB(t, JitterConfig{InitialDelay: 4, ShrinkAfter: 10})
	got := runJB(t, jb, regular(0, 0, 50, 0), 50)
	want := seqTokens("Bx3 F0-9 F11-20 F22-31 F33-49")
	if !slices.Equal(got, want) {
		t.Fatalf("playout\n got %v\nwant %v", got, want)
	}
	st := jb.Stats()
	if st.Discarded != 3 || st.Delay != 1 || st.TargetDelay != 1 || st.Played != 47 {
		t.Fatalf("stats %+v", st)
	}
}

func TestJitterBufferJitterEstimate(t *testing.T) {
	// Arrivals alternate 0 and 10 ms after their nominal time: every
	// transit difference is 80 units, so the RFC 3550 estimate converges
	// to 80 (10 ms) and asks for 1 + ceil(3*80/160) = 3 frames.
	// Mutation: dividing by 8 instead of 16, or ignoring the sign of the
	// difference, ends elsewhere.
	pkts := regular(0, 0, 200, 0)
	for i := range pkts {
		if i%2 == 1 {
			pkts[i].at += 10 * time.Millisecond
		}
	}
	jb := newTestJB(t, JitterConfig{InitialDelay: 1})
	runJB(t, jb, pkts, 200)
	st := jb.Stats()
	if st.Jitter < 9*time.Millisecond || st.Jitter > 10*time.Millisecond || st.TargetDelay != 3 {
		t.Fatalf("jitter %v target %d", st.Jitter, st.TargetDelay)
	}
}

func TestJitterBufferPushErrors(t *testing.T) {
	jb := newTestJB(t, JitterConfig{MaxPayload: 100})
	tests := []struct {
		name string
		pkt  []byte
		want error
	}{
		{"stun on the media port", []byte{0x00, 0x01, 0x00, 0x00, 0x21, 0x12, 0xA4, 0x42, 0, 0, 0, 0}, ErrRTPVersion},
		{"truncated", []byte{0x80, 0}, ErrRTPShort},
		{"bad padding", func() []byte { b := marshalRTP(rtpSpec{padding: 2, payload: []byte{1}}); b[len(b)-1] = 9; return b }(), ErrRTPPadding},
		{"payload beyond the slot", marshalRTP(rtpSpec{payload: make([]byte, 101)}), ErrRTPPayloadTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := jb.Push(tc.pkt, jbBase); !errors.Is(err, tc.want) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
		})
	}
	st := jb.Stats()
	// Mutation: counting every parse error as a bad version.
	if st.BadVersion != 1 || st.Malformed != 3 || st.Received != 4 || st.Accepted != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestJitterConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  JitterConfig
		ok   bool
	}{
		{"zero value takes the defaults", JitterConfig{}, true},
		{"opus", JitterConfig{ClockRate: 48000, PayloadTypes: []uint8{111}}, true},
		{"min above the default initial", JitterConfig{MinDelay: 5}, true},
		{"negative clock", JitterConfig{ClockRate: -1}, false},
		{"clock too slow for a frame", JitterConfig{ClockRate: 10}, false},
		{"payload type above 127", JitterConfig{PayloadTypes: []uint8{128}}, false},
		{"initial above max", JitterConfig{InitialDelay: 9, MaxDelay: 4}, false},
		{"capacity below max delay", JitterConfig{MaxDelay: 10, Capacity: 5}, false},
		{"capacity too large", JitterConfig{Capacity: 5000}, false},
		{"negative idle", JitterConfig{IdleTimeout: -time.Second}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.ok != (err == nil) || (err != nil && !errors.Is(err, ErrInvalidConfig)) {
				t.Fatalf("Validate() = %v, want ok=%v", err, tc.ok)
			}
			if _, nerr := NewJitterBuffer(tc.cfg); (nerr == nil) != tc.ok {
				t.Fatalf("NewJitterBuffer error %v, want ok=%v", nerr, tc.ok)
			}
		})
	}
}

// steadyStream is a reusable packet whose sequence number and timestamp are
// rewritten in place, so the allocation test and the benchmark build
// nothing per packet.
type steadyStream struct {
	pkt []byte
	seq uint16
	ts  uint32
	at  time.Time
}

func newSteadyStream() *steadyStream {
	return &steadyStream{pkt: marshalRTP(rtpSpec{pt: 0, ssrc: 1, payload: make([]byte, jbSPF)}), seq: 65000, ts: 1<<32 - 100*jbSPF, at: jbBase}
}

func (s *steadyStream) step(t testing.TB, jb *JitterBuffer) {
	binary.BigEndian.PutUint16(s.pkt[2:], s.seq)
	binary.BigEndian.PutUint32(s.pkt[4:], s.ts)
	if err := jb.Push(s.pkt, s.at); err != nil {
		t.Fatal(err)
	}
	if _, st := jb.Pop(s.at); st.Kind != PopFrame && st.Kind != PopBuffering {
		t.Fatalf("steady stream popped %v", st.Kind)
	}
	s.seq++
	s.ts += jbSPF
	s.at = s.at.Add(jbFrame)
}

func TestJitterBufferDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	jb := newTestJB(t, JitterConfig{})
	s := newSteadyStream()
	for range 10 {
		s.step(t, jb)
	}
	// Mutation: allocating the payload copy per packet, or returning the
	// parse result through an interface, allocates here. The run crosses
	// the sequence and timestamp wraps.
	if n := testing.AllocsPerRun(2000, func() { s.step(t, jb) }); n != 0 {
		t.Fatalf("Push+Pop allocates %v times per packet", n)
	}
	if st := jb.Stats(); st.Played < 2000 || st.Lost != 0 || st.Resyncs != 0 {
		t.Fatalf("steady stream did not play through: %+v", st)
	}
}

func BenchmarkJitterBufferPushPop(b *testing.B) {
	jb, err := NewJitterBuffer(JitterConfig{})
	if err != nil {
		b.Fatal(err)
	}
	s := newSteadyStream()
	b.ReportAllocs()
	for b.Loop() {
		s.step(b, jb)
	}
}

func FuzzJitterBuffer(f *testing.F) {
	f.Add([]byte{0, 0, 0, 2, 2, 2, 0, 2, 1, 2, 2})
	f.Add([]byte{0, 1, 0, 3, 2, 0, 5, 2, 4, 2, 0, 200, 2, 2, 2})
	f.Add([]byte{6, 2, 0, 7, 2, 3, 9, 1, 2, 5, 0x80, 0, 0, 0, 2})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2})
	// Talk, ticks into a pause, the spurt after it (late by 7 ms), ticks.
	f.Add([]byte{0, 2, 0, 2, 0, 2, 0, 2, 2, 2, 2, 2, 2, 2, 7, 5, 4, 7, 1, 9, 0, 2, 0, 2, 2, 2, 2, 2})
	// A pause with the first packet after it lost (two jumps), reordered.
	f.Add([]byte{0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 7, 3, 1, 12, 3, 0xff, 2, 2, 2, 2, 2})
	// Found by the fuzzer: the holds of an underrun left behind when a
	// resync counted it concealed.
	f.Add([]byte("0002022220022&10000000000000"))
	f.Fuzz(func(t *testing.T, ops []byte) {
		jb, err := NewJitterBuffer(JitterConfig{MaxDelay: 5, Capacity: 8, ShrinkAfter: 4, MaxPayload: 32})
		if err != nil {
			t.Fatal(err)
		}
		var (
			seq    uint16 = 65530
			ts     uint32 = 1<<32 - 640
			ssrc   uint32 = 1
			now           = jbBase
			frames int
			ticked uint64 // PopLost and PopEmpty ticks
			pkt    = make([]byte, 0, 64)
		)
		next := func() byte {
			if len(ops) == 0 {
				return 0
			}
			b := ops[0]
			ops = ops[1:]
			return b
		}
		for len(ops) > 0 {
			switch op := next(); op % 8 {
			case 0: // the next packet of the stream, arriving now
				seq++
				ts += jbSPF
				pkt = marshalRTPInto(pkt[:0], 0, seq, ts, ssrc, seq)
				_ = jb.Push(pkt, now)
			case 1: // the next packet after a pause (DTX): the timestamp jumps
				seq++
				ts += jbSPF * (2 + uint32(next()%32))
				pkt = marshalRTPInto(pkt[:0], 0, seq, ts, ssrc, seq)
				_ = jb.Push(pkt, now)
			case 2: // a tick
				now = now.Add(jbFrame)
				payload, st := jb.Pop(now)
				if st.Kind == PopLost || st.Kind == PopEmpty {
					ticked++
				}
				if st.Kind == PopFrame {
					frames++
					if len(payload) >= 2 && binary.BigEndian.Uint16(payload) != st.Seq {
						t.Fatalf("frame %d carries the payload of %d", st.Seq, binary.BigEndian.Uint16(payload))
					}
				}
			case 3: // a packet out of order or repeated: seq offset by a signed byte
				d := int8(next())
				pkt = marshalRTPInto(pkt[:0], 0, seq+uint16(d), ts+uint32(int32(d)*jbSPF), ssrc, seq+uint16(d))
				_ = jb.Push(pkt, now)
			case 4: // arrival jitter
				now = now.Add(time.Duration(next()) * time.Millisecond)
			case 5: // raw bytes as a packet
				n := int(next()) % 48
				raw := make([]byte, 0, n)
				for range n {
					raw = append(raw, next())
				}
				_ = jb.Push(raw, now)
			case 6: // a mutated header: payload type, ssrc or a jump
				switch next() % 4 {
				case 0:
					pkt = marshalRTPInto(pkt[:0], next()&0x7f, seq, ts, ssrc, seq)
				case 1:
					ssrc ^= uint32(next()) + 1
					pkt = marshalRTPInto(pkt[:0], 0, seq, ts, ssrc, seq)
				case 2:
					seq += uint16(next()) << 8
					pkt = marshalRTPInto(pkt[:0], 0, seq, ts, ssrc, seq)
				default:
					ts += uint32(next()) << 16
					pkt = marshalRTPInto(pkt[:0], 0, seq, ts, ssrc, seq)
				}
				_ = jb.Push(pkt, now)
			case 7: // a long pause of the reader
				now = now.Add(time.Duration(next()) * jbFrame)
			}
			checkJBInvariants(t, jb)
			if st := jb.Stats(); uint64(frames) != st.Played || st.Played > st.Accepted {
				t.Fatalf("%d frames returned, %+v", frames, st)
			}
			// Every lost or empty tick is counted once, as concealed,
			// paused or undecided; the underrun's holds stay within the
			// room made for them (no allocation), and its advancing
			// ticks end at the playout clock.
			if st := jb.Stats(); tickCount(st) != ticked {
				t.Fatalf("%d lost or empty ticks, counted %d: %+v", ticked, tickCount(st), st)
			}
			if cap(jb.gapHolds) != jb.cfg.MaxDelay || len(jb.gapHolds) > int(jb.gapTicks) {
				t.Fatalf("underrun holds %d of room %d for %d ticks", len(jb.gapHolds), cap(jb.gapHolds), jb.gapTicks)
			}
			if jb.gapTicks > 0 && jb.gapFrom+jb.gapAdv*jb.spf != jb.playTS {
				t.Fatalf("underrun from %d, %d advanced, but the clock is at %d", jb.gapFrom, jb.gapAdv, jb.playTS)
			}
		}
	})
}

// marshalRTPInto writes a header and a 4-byte payload carrying tag into
// dst, for the fuzz loop.
func marshalRTPInto(dst []byte, pt uint8, seq uint16, ts, ssrc uint32, tag uint16) []byte {
	dst = append(dst, 0x80, pt&0x7f)
	dst = binary.BigEndian.AppendUint16(dst, seq)
	dst = binary.BigEndian.AppendUint32(dst, ts)
	dst = binary.BigEndian.AppendUint32(dst, ssrc)
	dst = binary.BigEndian.AppendUint16(dst, tag)
	return append(dst, 0, 0)
}

func TestConcealPCM(t *testing.T) {
	last := []int16{1000, -1000, 32767, -32768}
	tests := []struct {
		name    string
		dstLen  int
		last    []int16
		lostRun int
		want    []int16
	}{
		// Mutation: attenuating by 3 dB (or not at all) on the first lost
		// frame.
		{"first lost frame -6 dB", 4, last, 1, []int16{500, -500, 16383, -16384}},
		{"fifth -30 dB", 4, last, 5, []int16{31, -32, 1023, -1024}},
		// Mutation: fading forever instead of going silent after 5.
		{"sixth is silence", 4, last, 6, []int16{0, 0, 0, 0}},
		{"longer dst repeats last", 6, last, 2, []int16{250, -250, 8191, -8192, 250, -250}},
		{"no last frame is silence", 3, nil, 1, []int16{0, 0, 0}},
		{"run 0 copies", 2, last, 0, []int16{1000, -1000}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dst := make([]int16, tc.dstLen)
			for i := range dst {
				dst[i] = 7 // must be overwritten
			}
			ConcealPCM(dst, tc.last, tc.lostRun)
			if !slices.Equal(dst, tc.want) {
				t.Fatalf("got %v want %v", dst, tc.want)
			}
		})
	}
	if !raceEnabled {
		dst := make([]int16, 160)
		if n := testing.AllocsPerRun(100, func() { ConcealPCM(dst, last, 2) }); n != 0 {
			t.Fatalf("ConcealPCM allocates %v times", n)
		}
	}
}
