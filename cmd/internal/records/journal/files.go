package journal

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

const (
	walExt   = ".wal"
	ackExt   = ".ack"
	lockName = "LOCK"
)

// segName is a segment's file name: its first seq, 20 digits.
func segName(first uint64) string { return fmt.Sprintf("%020d", first) }

// parseSegName reads the first seq out of a file name with the given
// extension; ok false for any other file.
func parseSegName(name, ext string) (uint64, bool) {
	base, found := strings.CutSuffix(name, ext)
	if !found || len(base) != 20 {
		return 0, false
	}
	n, err := strconv.ParseUint(base, 10, 64)
	if err != nil || n == 0 {
		return 0, false
	}
	return n, true
}

// datasync flushes f's data (and the size that reads it) to the disk.
func datasync(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		for {
			serr = unix.Fdatasync(int(fd))
			if serr != unix.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	return serr
}

// syncDir makes the directory's entries (files created or removed) durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// lockDir takes the directory's lock file (flock, exclusive): two
// journals on one directory would interleave their frames. The kernel
// drops the lock when the process dies, so a crash leaves none behind.
func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("journal: open the lock file %s: %w", path, err)
	}
	rc, err := f.SyscallConn()
	if err == nil {
		var ferr error
		err = rc.Control(func(fd uintptr) { ferr = unix.Flock(int(fd), unix.LOCK_EX|unix.LOCK_NB) })
		if err == nil {
			err = ferr
		}
	}
	if err != nil {
		f.Close()
		if err == unix.EWOULDBLOCK {
			return nil, fmt.Errorf("%w: %s is open in another journal (another brisvox process, or a second Open in this one); give each journal its own directory", ErrLocked, dir)
		}
		return nil, fmt.Errorf("journal: lock %s: %w", path, err)
	}
	return f, nil
}
