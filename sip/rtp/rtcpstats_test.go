package rtp

import (
	"testing"
	"time"

	"github.com/pion/rtcp"
)

// TestReceiveStats checks the RFC 3550 A.3 figures on explicit streams:
// loss over the interval and in total, sequence wrap, duplicates.
func TestReceiveStats(t *testing.T) {
	tests := []struct {
		name         string
		seqs         []uint16
		wantExpected uint64
		wantLost     int64
		wantFraction uint8
		wantExtMax   uint32
	}{
		{name: "no loss", seqs: seqRange(10, 20), wantExpected: 20, wantExtMax: 29},
		{name: "a quarter lost", seqs: every(seqRange(0, 100), func(i int) bool { return i%4 != 1 }), wantExpected: 99 + 1 - 0, wantLost: 25, wantFraction: 64, wantExtMax: 99},
		{name: "wrap", seqs: seqRange(65530, 12), wantExpected: 12, wantExtMax: 1<<16 + 5},
		{name: "duplicates make the loss negative", seqs: append(seqRange(0, 10), 5, 6), wantExpected: 10, wantLost: -2, wantExtMax: 9},
		{name: "reordered is not lost", seqs: []uint16{1, 2, 4, 3, 5}, wantExpected: 5, wantExtMax: 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var r receiveStats
			r.reset(8000)
			now := time.Unix(100, 0)
			for _, s := range tc.seqs {
				r.update(9, s, uint32(s)*160, now)
				now = now.Add(20 * time.Millisecond)
			}
			if r.expected() != tc.wantExpected || r.cumulativeLost() != tc.wantLost || r.extendedMax() != tc.wantExtMax {
				t.Fatalf("expected %d lost %d extmax %d; want %d %d %d", r.expected(), r.cumulativeLost(), r.extendedMax(), tc.wantExpected, tc.wantLost, tc.wantExtMax)
			}
			rr, ok := r.report(now)
			if !ok || rr.FractionLost != tc.wantFraction || rr.SSRC != 9 || rr.TotalLost != uint32(max(tc.wantLost, 0)) {
				t.Fatalf("report %+v", rr)
			}
			// The next interval starts from here: no new loss, fraction 0.
			r.update(9, tc.seqs[len(tc.seqs)-1]+1, 0, now)
			if rr, _ := r.report(now); rr.FractionLost != 0 {
				t.Fatalf("second interval fraction %d", rr.FractionLost)
			}
		})
	}
}

func seqRange(from uint16, n int) []uint16 {
	out := make([]uint16, n)
	for i := range out {
		out[i] = from + uint16(i)
	}
	return out
}

func every(s []uint16, keep func(int) bool) []uint16 {
	var out []uint16
	for i, v := range s {
		if keep(i) {
			out = append(out, v)
		}
	}
	return out
}

// TestReceiveStatsJitter: arrivals exactly on the timestamp clock give no
// jitter; arrivals alternating 10 ms early and late converge to the RFC
// 3550 estimate of that spread (D = 20 ms each packet, J -> 20 ms).
// Mutation caught: the transit difference taken without its absolute
// value (the estimate would go negative and cancel).
func TestReceiveStatsJitter(t *testing.T) {
	var r receiveStats
	r.reset(8000)
	t0 := time.Unix(100, 0)
	for i := range 100 {
		r.update(1, uint16(i), uint32(i*160), t0.Add(time.Duration(i)*20*time.Millisecond))
	}
	if j := r.jitterDuration(); j != 0 {
		t.Fatalf("steady stream jitter %v", j)
	}
	r.reset(8000)
	for i := range 400 {
		off := 10 * time.Millisecond
		if i%2 == 1 {
			off = -off
		}
		r.update(1, uint16(i), uint32(i*160), t0.Add(time.Duration(i)*20*time.Millisecond+off))
	}
	if j := r.jitterDuration(); j < 19*time.Millisecond || j > 21*time.Millisecond {
		t.Fatalf("jitter %v, want 20 ms", j)
	}
}

// TestRemoteViewRTT: RTT from the remote's LSR and DLSR (RFC 3550 6.4.1).
func TestRemoteViewRTT(t *testing.T) {
	sent := time.Unix(1700000000, 0)
	lsr := ntpMiddle(sent)
	// The remote held our SR 500 ms, the path is 40 ms each way.
	now := sent.Add(580 * time.Millisecond)
	var v remoteView
	v.fromReport(rtcp.ReceptionReport{SSRC: 1, FractionLost: 32, TotalLost: 7, Jitter: 160, LastSenderReport: lsr, Delay: 65536 / 2}, now, 8000)
	if v.rtt < 79*time.Millisecond || v.rtt > 81*time.Millisecond {
		t.Fatalf("rtt %v, want 80 ms", v.rtt)
	}
	if v.fractionLost != 0.125 || v.totalLost != 7 || v.jitter != 20*time.Millisecond {
		t.Fatalf("view %+v", v)
	}
}
