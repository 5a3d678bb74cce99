package journal

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"
)

const fsizeDirEnv = "JOURNAL_FSIZE_HELPER_DIR"

// TestHelperFileSize is the child of TestWriteFails: with its files
// capped at 10 000 bytes (RLIMIT_FSIZE, SIGXFSZ ignored, so a write past
// it is short and then fails as a full disk would), it appends 1 KiB
// entries until one fails, checks the failure is ErrWrite and that a
// small entry still fits after it, and prints how many were appended.
func TestHelperFileSize(t *testing.T) {
	dir := os.Getenv(fsizeDirEnv)
	if dir == "" {
		t.Skip("the child of TestWriteFails (runs only from it)")
	}
	fail := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, format+"\n", args...)
		os.Exit(2)
	}
	j, err := Open(Config{Dir: dir, Log: zerolog.Nop()})
	if err != nil {
		fail("open: %v", err)
	}
	signal.Ignore(syscall.SIGXFSZ)
	if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: 10000, Max: 10000}); err != nil {
		fail("setrlimit: %v", err)
	}
	n := 0
	for {
		_, err := j.Append(1, make([]byte, 1024))
		if err == nil {
			n++
			continue
		}
		if !errors.Is(err, ErrWrite) {
			fail("append %d: %v, want ErrWrite", n, err)
		}
		break
	}
	// The failed frame was cut off: a small one fits where it began.
	if _, err := j.Append(2, []byte("small")); err != nil {
		fail("small append after the failure: %v", err)
	}
	if err := j.Close(); err != nil {
		fail("close: %v", err)
	}
	fmt.Printf("appended %d\n", n)
	os.Exit(0)
}

// A write that fails part way (a full disk) leaves nothing of its frame:
// Append reports ErrWrite, the journal goes on, and a reopen finds every
// entry that was appended, no torn tail, nothing corrupt. Catches the
// partial frame left in the segment: seen failing with Append's Truncate
// after a failed write removed (the rest of the partial frame stays
// behind the next entry: a torn tail at the reopen).
func TestWriteFails(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperFileSize$", "-test.count=1")
	cmd.Env = append(os.Environ(), fsizeDirEnv+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v", err)
	}
	var n int
	for _, line := range strings.Split(string(out), "\n") {
		if s, ok := strings.CutPrefix(line, "appended "); ok {
			n, _ = strconv.Atoi(s)
		}
	}
	if n != 10000/(headerSize+1024) {
		t.Fatalf("child appended %d before the failure, want %d", n, 10000/(headerSize+1024))
	}
	j := openT(t, dir, 0)
	g := replayAll(t, j)
	if len(g) != n+1 || g[n].payload != "small" || g[n].seq != uint64(n+1) {
		t.Fatalf("replayed %d entries (last %+v), want %d and the small one as seq %d", len(g), g[len(g)-1], n+1, n+1)
	}
	if st := j.Stats(); st["torn_tail"] != 0 || st["corrupt"] != 0 {
		t.Fatalf("torn_tail %d corrupt %d, want none", st["torn_tail"], st["corrupt"])
	}
}
