package journal

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

const helperDirEnv = "JOURNAL_KILL_HELPER_DIR"

// helperPayload is what the child appends as entry i of worker w: the
// parent recomputes it to check the bytes.
func helperPayload(w, i int) []byte {
	return []byte(fmt.Sprintf("worker %d entry %d %s", w, i, strings.Repeat("p", (w*31+i*7)%2000)))
}

// TestHelperProcess is the child of TestKill9: it appends from four
// goroutines in a loop, acks every third entry, and writes each seq (and each Ack's start) to
// stdout once its Append (or Ack) has returned, until it is killed.
func TestHelperProcess(t *testing.T) {
	dir := os.Getenv(helperDirEnv)
	if dir == "" {
		t.Skip("the child of TestKill9 (runs only from it)")
	}
	j, err := Open(Config{Dir: dir, SegmentBytes: 64 << 10, Log: zerolog.Nop()})
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		os.Exit(2)
	}
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	report := func(format string, args ...any) {
		mu.Lock()
		fmt.Fprintf(out, format, args...)
		out.Flush() // every line is out before the next call: the parent sees all that returned
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				seq, err := j.Append(byte(1+w), helperPayload(w, i))
				if err != nil {
					fmt.Fprintln(os.Stderr, "append:", err)
					os.Exit(2)
				}
				report("a %d %d %d\n", seq, w, i)
				if i%3 == 0 {
					report("s %d\n", seq) // Ack starts: from here on it may be acked
					if err := j.Ack(seq); err != nil {
						fmt.Fprintln(os.Stderr, "ack:", err)
						os.Exit(2)
					}
					report("k %d\n", seq)
				}
			}
		})
	}
	wg.Wait() // never: the parent kills the process
}

// TestKill9 kills a process appending to a journal (SIGKILL, mid-write
// as likely as not) and reopens the journal: every Append that returned
// before the kill is replayed with its bytes, every Ack that returned is
// not, and at most one entry per worker is replayed that no Append
// returned (in flight at the kill). Catches an Append that returns with
// its frame not written (seen failing with Append's WriteAt writing
// nothing) and an Ack that returns before its ack is written (seen
// failing with writeAck returning first).
//
// A SIGKILL leaves the page cache to the kernel, so this checks the
// process's side (written before Append returns, in order); a power cut
// is what the fdatasync is for, and TestTornTailEveryOffset stands in for
// the torn frame one leaves.
func TestKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	for round := range 3 {
		t.Run(fmt.Sprint("round=", round), func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
			cmd.Env = append(os.Environ(), helperDirEnv+"="+dir)
			cmd.Stderr = os.Stderr
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			type appended struct{ w, i int }
			returned := map[uint64]appended{}
			acked := map[uint64]bool{}
			acking := map[uint64]bool{} // Ack called, maybe not returned
			sc := bufio.NewScanner(stdout)
			killed := false
			// Kill after a number of returned appends that varies by round,
			// so the kill lands at different points of a write.
			killAt := 300 + round*457
			for sc.Scan() {
				f := strings.Fields(sc.Text())
				switch {
				case len(f) == 4 && f[0] == "a":
					seq, _ := strconv.ParseUint(f[1], 10, 64)
					w, _ := strconv.Atoi(f[2])
					i, _ := strconv.Atoi(f[3])
					returned[seq] = appended{w, i}
				case len(f) == 2 && f[0] == "s":
					seq, _ := strconv.ParseUint(f[1], 10, 64)
					acking[seq] = true
				case len(f) == 2 && f[0] == "k":
					seq, _ := strconv.ParseUint(f[1], 10, 64)
					acked[seq] = true
				default:
					t.Fatalf("child wrote %q", sc.Text())
				}
				if !killed && len(returned) >= killAt {
					if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
						t.Fatal(err)
					}
					killed = true
				}
			}
			werr := cmd.Wait()
			if !killed {
				t.Fatalf("the child ended before the kill: %v", werr)
			}
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
				t.Fatalf("the child ended with %v, not by SIGKILL", werr)
			}

			start := time.Now()
			j := openT(t, dir, 64<<10)
			openTook := time.Since(start)
			replayed := map[uint64]bool{}
			if err := j.Replay(func(seq uint64, kind byte, p []byte) error {
				replayed[seq] = true
				if a, ok := returned[seq]; ok {
					if kind != byte(1+a.w) || string(p) != string(helperPayload(a.w, a.i)) {
						t.Errorf("seq %d: kind %d, %d bytes: not what worker %d appended", seq, kind, len(p), a.w)
					}
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			lost, inFlight := 0, 0
			for seq := range replayed {
				if _, ok := returned[seq]; !ok {
					inFlight++ // appended, killed before its Append returned
				}
			}
			for seq := range returned {
				if !acking[seq] && !replayed[seq] {
					lost++
				}
			}
			for seq := range acked {
				if replayed[seq] {
					t.Errorf("seq %d was acked before the kill and replayed", seq)
				}
			}
			st := j.Stats()
			t.Logf("%d appends returned, %d acked; replayed %d (%d of them in flight at the kill); torn_tail %d corrupt %d; segments %d; Open took %v",
				len(returned), len(acked), len(replayed), inFlight, st["torn_tail"], st["corrupt"], st["segments"], openTook)
			if inFlight > 4 {
				t.Errorf("%d entries replayed that no Append returned: more than the 4 workers' one in flight each", inFlight)
			}
			if lost > 0 {
				t.Fatalf("%d entries whose Append returned are gone", lost)
			}
			if st["corrupt"] != 0 {
				t.Fatalf("corrupt %d after a kill: a kill can tear only the last frame", st["corrupt"])
			}
		})
	}
}
