package main

import (
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// sipMediaReport is what the media peer prints (one JSON line).
type sipMediaReport struct {
	Streams int     `json:"streams"`
	Packets int     `json:"packets"`
	Gaps    int     `json:"gaps"`
	P50MS   float64 `json:"jitter_p50_ms"`
	P99MS   float64 `json:"jitter_p99_ms"`
	MaxMS   float64 `json:"jitter_max_ms"`
	// Short counts streams that received fewer than 90% of the packets
	// the hold should bring.
	Short int     `json:"short_streams"`
	Sent  uint64  `json:"packets_sent"`
	CPU   float64 `json:"media_peer_cpu_pct_of_core"`
	Error string  `json:"error,omitempty"`
}

// sipStream is one call's RTP as the media peer sees it: the server's
// port it comes from (one per call) and its arrivals.
type sipStream struct {
	from     netip.AddrPort
	arrivals []time.Time
	seq      uint16
	ts       uint32
	ssrc     uint32
}

// sipMedia is the far end of every load call's media: sipp signals, and
// its SDP names this process's one UDP socket. It answers each call's
// stream (the server's RTP port, learned from its first packet) with
// 20 ms of mu-law silence every 20 ms from the signalled address, so the
// server's strict latch locks and its media timeout never fires, and it
// records the kernel's receive time of every packet (SO_TIMESTAMPNS). When
// calls streams are up it waits warmup, prints hold-start, holds, prints
// hold-end and the report.
func sipMedia(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sip-media", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.3:40000", "the UDP address the load calls' SDP names")
	calls := fs.Int("calls", 500, "streams to wait for before the hold")
	warmup := fs.Duration("warmup", 5*time.Second, "time after the last stream started before measuring")
	hold := fs.Duration("hold", 60*time.Second, "the measured time")
	wait := fs.Duration("wait", 2*time.Minute, "how long to wait for the streams")
	if err := fs.Parse(args); err != nil || *calls <= 0 {
		return 2
	}
	rep := sipMediaReport{}
	out := func() int {
		b, _ := json.Marshal(rep)
		fmt.Fprintln(stdout, string(b))
		if rep.Error != "" {
			return 1
		}
		return 0
	}
	conn, err := net.ListenPacket("udp", *addr)
	if err != nil {
		rep.Error = err.Error()
		return out()
	}
	u := conn.(*net.UDPConn)
	defer u.Close()
	if raw, err := u.SyscallConn(); err == nil {
		_ = raw.Control(func(fd uintptr) {
			_ = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
			// 25 000 packets a second at 500 calls: a buffer the
			// kernel's default cap (rmem_max, about 200 KB) would let a
			// descheduled peer overflow, which the gaps would count as the
			// server's. FORCE needs CAP_NET_ADMIN; without it, the capped
			// size (the report's drops say when that mattered).
			if unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 32<<20) != nil {
				_ = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, 32<<20)
			}
		})
	}
	var (
		mu      sync.Mutex
		streams = map[netip.AddrPort]*sipStream{}
		order   []*sipStream
		recvErr error
	)
	var wg sync.WaitGroup
	wg.Go(func() {
		buf := make([]byte, 2048)
		oob := make([]byte, 128)
		for {
			n, oobn, _, from, err := u.ReadMsgUDPAddrPort(buf, oob)
			if err != nil {
				mu.Lock()
				recvErr = err
				mu.Unlock()
				return
			}
			if n < 12 || buf[0]&0xC0 != 0x80 || (buf[1] >= 192 && buf[1] <= 223) {
				continue // RTCP or not RTP
			}
			at, ok := kernelStampOf(oob[:oobn])
			if !ok {
				at = time.Now()
			}
			mu.Lock()
			s := streams[from]
			if s == nil {
				s = &sipStream{from: from, ssrc: uint32(len(order) + 1), seq: uint16(len(order) * 7), ts: uint32(len(order)) * 160}
				streams[from] = s
				order = append(order, s)
			}
			s.arrivals = append(s.arrivals, at)
			mu.Unlock()
		}
	})
	stopSend := make(chan struct{})
	var sent uint64
	wg.Go(func() {
		// One tick sends every stream's next packet: 12 bytes of header
		// and 160 of mu-law silence (0xFF).
		pkt := make([]byte, 12+160)
		for i := 12; i < len(pkt); i++ {
			pkt[i] = 0xFF
		}
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		var targets []*sipStream
		for {
			select {
			case <-stopSend:
				return
			case <-tick.C:
			}
			mu.Lock()
			targets = append(targets[:0], order...)
			mu.Unlock()
			for _, s := range targets {
				pkt[0], pkt[1] = 0x80, 0 // PCMU
				binary.BigEndian.PutUint16(pkt[2:], s.seq)
				binary.BigEndian.PutUint32(pkt[4:], s.ts)
				binary.BigEndian.PutUint32(pkt[8:], s.ssrc)
				s.seq++
				s.ts += 160
				if _, err := u.WriteToUDPAddrPort(pkt, s.from); err == nil {
					sent++
				}
			}
		}
	})
	finish := func() {
		close(stopSend)
		_ = u.Close()
		wg.Wait()
	}
	deadline := time.Now().Add(*wait)
	for {
		mu.Lock()
		n, err := len(order), recvErr
		mu.Unlock()
		if n >= *calls {
			break
		}
		if err != nil || time.Now().After(deadline) {
			finish()
			rep.Streams = n
			rep.Error = fmt.Sprintf("%d of %d streams started (%v)", n, *calls, err)
			return out()
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(*warmup)
	from, cpu0 := time.Now(), cpuTime()
	fmt.Fprintln(stdout, "hold-start")
	time.Sleep(*hold)
	to, cpu1 := time.Now(), cpuTime()
	fmt.Fprintln(stdout, "hold-end")
	finish()
	rep.CPU = 100 * float64(cpu1-cpu0) / float64(to.Sub(from))
	rep.Sent = sent
	rep.Streams = len(order)
	arrivals := make([][]time.Time, len(order))
	for i, st := range order {
		arrivals[i] = st.arrivals
	}
	g := measureGaps(arrivals, from, to, int(*hold/(20*time.Millisecond)))
	rep.Packets, rep.Short, rep.Gaps = g.packets, g.short, g.gaps
	if g.gaps == 0 {
		rep.Error = "no packets received during the hold"
		return out()
	}
	rep.P50MS, rep.P99MS, rep.MaxMS = g.p50, g.p99, g.max
	return out()
}

// kernelStampOf reads SCM_TIMESTAMPNS from a datagram's control messages.
func kernelStampOf(oob []byte) (time.Time, bool) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return time.Time{}, false
	}
	for _, m := range msgs {
		if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SCM_TIMESTAMPNS && len(m.Data) >= 16 {
			sec := int64(binary.NativeEndian.Uint64(m.Data[0:8]))
			nsec := int64(binary.NativeEndian.Uint64(m.Data[8:16]))
			return time.Unix(sec, nsec), true
		}
	}
	return time.Time{}, false
}
