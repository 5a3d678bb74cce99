package media

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// spurts joins talk spurts of a sender that pauses between them (Opus DTX,
// silence suppression): each spurt continues the sequence numbers, while
// its timestamps and arrivals start where the sender's clock stands after
// the pause (RFC 3550 5.1). A spurt of n packets starting at frame f
// arrives on time: packet i at (f+i)*20ms.
func spurts(seq0 uint16, spans ...[2]int) []jbPkt {
	var out []jbPkt
	seq := seq0
	for _, sp := range spans {
		f, n := sp[0], sp[1]
		out = append(out, regular(seq, uint32(f*jbSPF), n, time.Duration(f)*jbFrame)...)
		seq += uint16(n)
	}
	return out
}

// marked sets the marker bit on packet seq (RFC 3551 4.1: the first packet
// of a talk spurt).
func marked(pkts []jbPkt, seq uint16) []jbPkt {
	pkts = slices.Clone(pkts)
	for i := range pkts {
		if pkts[i].seq == seq {
			pkts[i].marker = true
		}
	}
	return pkts
}

// TestJitterBufferPauseOrLoss: an underrun (nothing held) is reported
// PopLost at once, since a pause and a loss look alike until the next
// packet; that packet tells them apart. A pause is a timestamp jump with
// no sequence number missing: its ticks count Paused, never Concealed;
// sequence numbers missing count Concealed at their slots (placed just
// before the packet that shows them, as Pop places them), and so does the
// slot of a packet that came after it. runJB checks at every tick that
// each L and E tick is counted once.
func TestJitterBufferPauseOrLoss(t *testing.T) {
	ms := time.Millisecond
	// Five frames of talk, a pause of ten frames, five frames of talk: the
	// second spurt is seq 5-9 at frames 15-19.
	pause := spurts(0, [2]int{0, 5}, [2]int{15, 5})
	tests := []struct {
		name  string
		cfg   JitterConfig
		pkts  []jbPkt
		ticks int
		want  string
		stats JitterStats // Jitter is not compared
	}{
		{
			// Mutation: settle counting no sequence number missing (the
			// three underrun ticks paused) fails here.
			name:  "a loss: the underrun ticks at the missing packets' slots are concealed",
			cfg:   JitterConfig{InitialDelay: 1},
			pkts:  without(regular(0, 0, 12, 0), 5, 6, 7),
			ticks: 12,
			want:  "F0-4 L5x3 F8-11",
			stats: JitterStats{Received: 9, Accepted: 9, Played: 9, Lost: 3, Concealed: 3, Delay: 1, TargetDelay: 1, HighestSeq: 11},
		},
		{
			// The bug: the eight underrun ticks of the pause counted
			// concealed (jitter_concealed of a DTX caller). Mutation:
			// counting an underrun tick Concealed at once, as before.
			name:  "a DTX pause: the underrun and the empty ticks are paused",
			pkts:  pause,
			ticks: 22,
			want:  "Bx2 F0-4 L5x8 Ex2 F5-9",
			stats: JitterStats{Received: 10, Accepted: 10, Played: 10, Paused: 10, Delay: 3, TargetDelay: 3, HighestSeq: 9},
		},
		{
			// Mutation: placing the missing sequence numbers at the start
			// of the underrun (just after the last packet) instead of just
			// before the packet that shows them: 5 concealed twice.
			name:  "a pause followed by a loss: the first packet after the pause lost, concealed at its own slot",
			pkts:  without(pause, 5),
			ticks: 22,
			want:  "Bx2 F0-4 L5x9 E L5 F6-9",
			stats: JitterStats{Received: 9, Accepted: 9, Played: 9, Lost: 1, Concealed: 1, Paused: 10, Delay: 3, TargetDelay: 3, HighestSeq: 9},
		},
		{
			// The last packet before the pause (a DTX packet, say) lost:
			// nothing tells where in the gap it lay, so it is placed
			// before the next packet, as Pop places it, and concealed once.
			// Mutation: the placement at the start of the underrun, as
			// above (concealed twice).
			name:  "a loss before the pause: concealed once, the rest paused",
			pkts:  without(spurts(0, [2]int{0, 6}, [2]int{15, 5}), 5),
			ticks: 22,
			want:  "Bx2 F0-4 L5x8 E L5 F6-10",
			stats: JitterStats{Received: 10, Accepted: 10, Played: 10, Lost: 1, Concealed: 1, Paused: 9, Delay: 3, TargetDelay: 3, HighestSeq: 10},
		},
		{
			// Mutation: the placement at the start of the underrun takes
			// 5, missing when 6 comes, for a loss at the pause's first
			// tick.
			name:  "reordering after the pause: 6 before 5, nothing lost",
			pkts:  at(pause, 5, 321*ms),
			ticks: 22,
			want:  "Bx2 F0-4 L5x9 E F5-9",
			stats: JitterStats{Received: 10, Accepted: 10, Played: 10, Reordered: 1, Paused: 10, Delay: 3, TargetDelay: 3, HighestSeq: 9},
		},
		{
			// The last packet before the pause comes after its slot, in
			// the pause: its slot was a loss; the ticks after it stay
			// undecided until the spurt after the pause shows them paused
			// (four of them held the clock: the late packet raised the
			// target). Mutations: settling every undecided tick on the
			// late packet (Concealed 4), or counting a tick that held the
			// clock concealed whatever its slot (Paused 10, Concealed 5).
			name:  "reordering before the pause: the last packet late, in the pause",
			pkts:  at(pause, 4, 200*ms),
			ticks: 26,
			want:  "Bx2 F0-3 L4x4 L5x5 Ex6 F5-9",
			stats: JitterStats{Received: 10, Accepted: 9, Played: 9, Late: 1, Lost: 1, Concealed: 1, Paused: 14, Delay: 7, TargetDelay: 7, HighestSeq: 9},
		},
		{
			// 3 lost, 4 late: both slots concealed when 4 comes; 3 is not
			// concealed again before the next spurt. Mutation: Pop not
			// knowing that 3's slot went by (no passedESN) plays L3 again
			// before F5.
			name:  "a loss and a late packet before the pause",
			pkts:  at(without(pause, 3), 4, 200*ms),
			ticks: 26,
			want:  "Bx2 F0-2 L3x10 Ex6 F5-9",
			stats: JitterStats{Received: 9, Accepted: 8, Played: 8, Late: 1, Lost: 2, Concealed: 2, Paused: 14, Delay: 7, TargetDelay: 7, HighestSeq: 9},
		},
		{
			// The same at a fixed delay of one frame, where the next spurt
			// comes just as the clock reaches it: 3 was settled with 4,
			// and the ticks since 4 are the pause. Mutation: settle
			// counting 3 missing again when 5 comes (from next rather
			// than after 4: the tick before 5 concealed).
			name:  "a loss and a late packet before the pause, at delay 1",
			cfg:   JitterConfig{InitialDelay: 1, MaxDelay: 1, IdleTimeout: time.Second},
			pkts:  at(without(pause, 3), 4, 110*ms),
			ticks: 20,
			want:  "F0-2 L3x12 F5-9",
			stats: JitterStats{Received: 9, Accepted: 8, Played: 8, Late: 1, Lost: 2, Concealed: 2, Paused: 10, Delay: 1, TargetDelay: 1, HighestSeq: 9},
		},
		{
			// RFC 3551 4.1: a sender with silence suppression SHOULD set
			// the marker bit on a spurt's first packet. It is reported
			// with the frame (M5) and changes no count: the timestamps
			// already show the pause.
			name:  "the marker bit on the first packet after the pause",
			pkts:  marked(pause, 5),
			ticks: 22,
			want:  "Bx2 F0-4 L5x8 Ex2 M5 F6-9",
			stats: JitterStats{Received: 10, Accepted: 10, Played: 10, Paused: 10, Delay: 3, TargetDelay: 3, HighestSeq: 9},
		},
		{
			// A marker bit does not make a pause where the timestamps
			// show none: 5 (marked) and 6 come late, after both their
			// slots, and tell those two ticks losses. Mutation: taking a
			// marked packet for the end of a pause (the undecided ticks
			// before it paused) fails here.
			name:  "the marker bit on a late packet without a timestamp jump",
			cfg:   JitterConfig{InitialDelay: 1},
			pkts:  at(at(marked(regular(0, 0, 10, 0), 5), 5, 135*ms), 6, 136*ms),
			ticks: 10,
			want:  "F0-4 L5x2 F7-9",
			stats: JitterStats{Received: 10, Accepted: 8, Played: 8, Late: 2, Lost: 2, Concealed: 2, Delay: 1, TargetDelay: 3, HighestSeq: 9},
		},
		{
			// Mutation: deciding the undecided ticks when the buffer goes
			// idle (as concealed) fails here.
			name:  "a pause longer than IdleTimeout: the ticks before the buffer idles are paused",
			pkts:  spurts(0, [2]int{0, 5}, [2]int{60, 5}),
			ticks: 68,
			want:  "Bx2 F0-4 L5x10 Bx45 F5-9 L10",
			stats: JitterStats{Received: 10, Accepted: 10, Played: 10, Paused: 10, Undecided: 1, Delay: 3, TargetDelay: 3, HighestSeq: 9},
		},
		{
			// A new SSRC has no sequence relation to the old stream:
			// nothing shows a pause. Mutation: the resync leaving them
			// undecided.
			name: "a new source after an underrun: the ticks count concealed",
			pkts: append(regular(0, 0, 5, 0), func() []jbPkt {
				p := regular(100, 5000, 5, 200*ms)
				for i := range p {
					p[i].ssrc = 0x6666
				}
				return p
			}()...),
			ticks: 16,
			want:  "Bx2 F0-4 L5x3 Bx2 F100-103",
			stats: JitterStats{Received: 10, Accepted: 10, Played: 9, Concealed: 3, Resyncs: 1, Delay: 3, TargetDelay: 3, HighestSeq: 104},
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

// TestJitterBufferDTXStreamsCountLossesOnly: seeded streams of talk spurts
// and pauses (shorter than IdleTimeout, so the buffer never idles), every
// packet on time, some lost inside or at the edges of a spurt. However the
// pauses fall, every lost packet is concealed exactly once and no pause
// tick is: Concealed equals Lost, and without losses both are 0.
// Mutation caught: counting underrun ticks concealed at once (Concealed
// grows with the pauses).
func TestJitterBufferDTXStreamsCountLossesOnly(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 3))
	for run := range 200 {
		lossy := run%2 == 1
		var spans [][2]int
		frame := 0
		for range 2 + rng.IntN(6) {
			n := 3 + rng.IntN(20)
			spans = append(spans, [2]int{frame, n})
			frame += n + rng.IntN(12) // a pause of 0-11 frames
		}
		// A last spurt that loses nothing tells the last pause apart.
		spans = append(spans, [2]int{frame, 5})
		pkts := spurts(uint16(rng.Uint32()), spans...)
		dropped := 0
		if lossy {
			// Never the first three packets (playout primes on them) nor
			// the last spurt.
			for i := 3; i < len(pkts)-5; i++ {
				if rng.IntN(6) == 0 {
					pkts[i].at = -1 // dropped below
					dropped++
				}
			}
			pkts = slices.DeleteFunc(pkts, func(p jbPkt) bool { return p.at < 0 })
		}
		jb := newTestJB(t, JitterConfig{})
		runJB(t, jb, pkts, frame+10)
		st := jb.Stats()
		if st.Lost != uint64(dropped) || st.Concealed != st.Lost || st.Late != 0 {
			t.Fatalf("run %d (spans %v): %d dropped, %+v", run, spans, dropped, st)
		}
		if !lossy && st.Paused == 0 && len(spans) > 1 && spans[1][0] > spans[0][0]+spans[0][1]+3 {
			t.Fatalf("run %d (spans %v): a pause longer than the delay and nothing paused: %+v", run, spans, st)
		}
	}
}
