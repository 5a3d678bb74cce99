package recording

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"strings"

	"github.com/brisvox/brisvox/cmd/internal/records"
)

// Recover finishes the recordings a crash left as .part files (the node
// died mid-call: kill -9): a WAV gets its header's sizes from what is on
// disk, an Ogg stream keeps its whole pages (it lacks only the end of
// stream mark, which readers do without); each is renamed to its key.
// It returns their accounts by call id, for the records of the calls
// that were live (records.Service.Recover). Call it once at start-up,
// before Begin. With a bucket, it then uploads every finished file of the
// spool (one there is one not yet in the bucket).
func (r *Recorder) Recover() (map[string]records.Recording, error) {
	found := map[string]records.Recording{}
	var errs []error
	err := fs.WalkDir(r.root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			errs = append(errs, err)
			return nil
		}
		if d.IsDir() || !strings.HasSuffix(p, ".part") {
			return nil
		}
		key := strings.TrimSuffix(p, ".part")
		if checkKey(key) != nil {
			return nil
		}
		id, err := url.PathUnescape(strings.TrimSuffix(path.Base(key), path.Ext(key)))
		if err != nil {
			return nil
		}
		rec, err := r.recoverPart(key)
		if err != nil {
			errs = append(errs, err)
			return nil
		}
		found[id] = rec
		return nil
	})
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		r.log.Warn().Err(errors.Join(errs...)).Int("recovered", len(found)).Msg("recording: some recordings left by a crash could not be finished")
	}
	if r.s3 != nil {
		r.s3.queueSpool() // these and the uploads a stop or crash cut short
	}
	return found, errors.Join(errs...)
}

// recoverPart finishes one .part file.
func (r *Recorder) recoverPart(key string) (records.Recording, error) {
	f, err := r.root.OpenFile(key+".part", os.O_RDWR, 0)
	if err != nil {
		return records.Recording{}, fmt.Errorf("recording: recovering %s: %w", key, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return records.Recording{}, fmt.Errorf("recording: recovering %s: %w", key, err)
	}
	format := strings.TrimPrefix(path.Ext(key), ".")
	var size int64
	var durMS float64
	switch format {
	case FormatWAV:
		var h [wavHeader]byte
		if _, err := f.ReadAt(h[:], 0); err != nil || string(h[0:4]) != "RIFF" {
			return records.Recording{}, fmt.Errorf("recording: recovering %s: no WAV header (%v)", key, err)
		}
		rate := int(uint32(h[24]) | uint32(h[25])<<8 | uint32(h[26])<<16 | uint32(h[27])<<24)
		if rate <= 0 {
			return records.Recording{}, fmt.Errorf("recording: recovering %s: sample rate %d in its header", key, rate)
		}
		var ok bool
		size, durMS, ok, err = newWAV(rate).finish(f, st.Size(), 0)
		if !ok {
			err = fmt.Errorf("recording: recovering %s: shorter than its header", key)
		}
	case FormatOgg:
		size, durMS = st.Size(), oggDuration(f, st.Size())
	}
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = r.root.Rename(key+".part", key)
	}
	if err != nil {
		return records.Recording{}, fmt.Errorf("recording: recovering %s: %w", key, err)
	}
	return records.Recording{Format: format, Key: key, Bytes: size, DurationMS: durMS}, nil
}

// oggDuration reads the granule of the last page within the file's last
// 64 kB (pages are about 8 kB): the stream's length after the pre-skip.
func oggDuration(f *os.File, size int64) float64 {
	n := min(size, 64<<10)
	b := make([]byte, n)
	if _, err := f.ReadAt(b, size-n); err != nil {
		return 0
	}
	for i := bytes.LastIndex(b, []byte("OggS")); i >= 0; i = bytes.LastIndex(b[:i], []byte("OggS")) {
		if i+14 > len(b) {
			continue
		}
		g := int64(binary.LittleEndian.Uint64(b[i+6:]))
		if g > oggPreSkip {
			return float64(g-oggPreSkip) / 48
		}
		return 0
	}
	return 0
}
