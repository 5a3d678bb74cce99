package recording

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brisvox/brisvox/cmd/internal/records"
	"github.com/brisvox/brisvox/media"
	"github.com/rs/zerolog"
)

// Defaults of Config.
const (
	// DefaultQueue is how many frames a call buffers for its writer before
	// the tap drops: 250 frames, 5 s of one channel.
	DefaultQueue = 250
	// FormatWAV is a stereo PCM16 WAV file.
	FormatWAV = "wav"
	// FormatOgg is stereo Opus in Ogg (RFC 7845), in a build with cgo
	// (libopus).
	FormatOgg = "ogg"
)

// Config sets up a Recorder.
type Config struct {
	// Dir is the recordings directory (created 0700 if missing); files are
	// <Dir>/<yyyy>/<mm>/<dd>/<call id>.<format>, by the call's start in
	// UTC.
	Dir string
	// Format is "wav" (the default: stereo PCM16, 64 kB a second at
	// 16 kHz) or "ogg" (stereo Opus at 64 kbit/s, 8 kB a second; needs a
	// build with cgo).
	Format string
	// Queue is how many frames a call buffers for its writer before its
	// tap drops (both channels share it). Default 250.
	Queue int
	// S3 puts finished recordings in an S3-compatible bucket; Dir is then
	// the spool they are written to and uploaded from. Nil: they stay in
	// Dir.
	S3  *S3Config
	Log zerolog.Logger
}

// WithDefaults fills zero fields.
func (c Config) WithDefaults() Config {
	if c.Format == "" {
		c.Format = FormatWAV
	}
	if c.Queue == 0 {
		c.Queue = DefaultQueue
	}
	return c
}

// Validate checks a config after defaults.
func (c Config) Validate() error {
	switch {
	case c.Dir == "":
		return fmt.Errorf("%w: no recordings directory: set one", ErrInvalidConfig)
	case c.Format == FormatOgg && !oggBuilt:
		return fmt.Errorf("%w: the ogg (Opus) format needs a build with cgo (libopus): use wav, or build with CGO_ENABLED=1", ErrInvalidConfig)
	case c.Format != FormatWAV && c.Format != FormatOgg:
		return fmt.Errorf("%w: format %q: use wav or ogg", ErrInvalidConfig, c.Format)
	case c.Queue < 1 || c.Queue > 1<<16:
		return fmt.Errorf("%w: queue of %d frames: use 1 to 65536 (default 250)", ErrInvalidConfig, c.Queue)
	}
	return nil
}

// Option adjusts a Recorder beyond its Config.
type Option func(*Recorder)

// WithWriter puts wrap around each recording file's streaming writes (not
// the header's final rewrite): a test blocks it to play a slow disk.
func WithWriter(wrap func(io.Writer) io.Writer) Option {
	return func(r *Recorder) { r.wrap = wrap }
}

// Recorder records calls into one directory.
type Recorder struct {
	cfg  Config
	log  zerolog.Logger
	root *os.Root
	wrap func(io.Writer) io.Writer
	s3   *bucket        // nil: the directory backend
	wg   sync.WaitGroup // the calls' writers

	mu     sync.Mutex
	calls  map[string]*Call
	pools  map[int]*sync.Pool // frame buffers by sample rate
	closed bool

	begun, finished, frames, dropped, late, bytes, writeErrors atomic.Uint64
}

// New opens (or creates) the recordings directory.
func New(cfg Config, opts ...Option) (*Recorder, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("%w: recordings directory: %w", ErrInvalidConfig, err)
	}
	root, err := os.OpenRoot(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("%w: recordings directory: %w", ErrInvalidConfig, err)
	}
	r := &Recorder{cfg: cfg, log: cfg.Log, root: root, calls: map[string]*Call{}, pools: map[int]*sync.Pool{}}
	if cfg.S3 != nil {
		if r.s3, err = newBucket(r, *cfg.S3); err != nil {
			root.Close()
			return nil, err
		}
	}
	for _, o := range opts {
		o(r)
	}
	return r, nil
}

// Begin starts recording a call whose caller's audio is at inRate and the
// bot's at outRate. The file's rate is the higher of the two; the other
// channel is resampled to it. The returned Call is the call's tap
// (session.Config.Tap); Close it when the call ends.
func (r *Recorder) Begin(callID string, inRate, outRate int) (*Call, error) {
	name, err := fileName(callID)
	if err != nil {
		return nil, err
	}
	for _, rate := range []int{inRate, outRate} {
		if rate <= 0 || rate%50 != 0 || rate > 192000 {
			return nil, fmt.Errorf("%w: sample rate %d Hz is not a whole number of samples per 20 ms frame", ErrInvalidCall, rate)
		}
	}
	fileRate := max(inRate, outRate)
	var res [2]*media.Resampler
	for ch, rate := range []int{inRate, outRate} {
		if rate == fileRate {
			continue
		}
		if res[ch], err = media.NewResampler(rate, fileRate, media.ResamplerConfig{}); err != nil {
			return nil, fmt.Errorf("%w: %d Hz and %d Hz channels: %w", ErrInvalidCall, inRate, outRate, err)
		}
	}
	box, err := r.container(callID, fileRate)
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	day := t0.UTC().Format("2006/01/02")
	key := day + "/" + name + "." + r.cfg.Format

	// The id is held (nil) while the files are made, outside the lock:
	// Pause and Begin of other calls do not wait for this one's disk.
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, ErrClosed
	}
	if _, live := r.calls[callID]; live {
		r.mu.Unlock()
		return nil, fmt.Errorf("%w: it is being recorded", ErrExists)
	}
	r.calls[callID] = nil
	r.mu.Unlock()
	f, err := r.create(day, key)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err == nil && r.closed {
		f.Close()
		r.root.Remove(key + ".part")
		err = ErrClosed
	}
	if err != nil {
		delete(r.calls, callID)
		return nil, err
	}
	c := newCall(r, callID, key, t0, f, box, [2]int{inRate, outRate}, fileRate, res,
		[2]*sync.Pool{r.poolLocked(inRate), r.poolLocked(outRate)})
	r.calls[callID] = c
	r.begun.Add(1)
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		c.w.run()
	}()
	return c, nil
}

// create makes the call's .part file (0600) in its day's directory
// (0700), unless its recording exists.
func (r *Recorder) create(day, key string) (*os.File, error) {
	if _, err := r.root.Stat(key); err == nil {
		return nil, fmt.Errorf("%w: %s exists", ErrExists, key)
	}
	if err := r.root.MkdirAll(day, 0o700); err != nil {
		return nil, fmt.Errorf("recording: making the day's directory: %w", err)
	}
	f, err := r.root.OpenFile(key+".part", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("recording: creating the call's file: %w", err)
	}
	return f, nil
}

// container makes the call's file format.
func (r *Recorder) container(callID string, fileRate int) (container, error) {
	if r.cfg.Format == FormatOgg {
		return newOgg(callID, fileRate)
	}
	return newWAV(fileRate), nil
}

// poolLocked returns the buffer pool of frames at rate.
func (r *Recorder) poolLocked(rate int) *sync.Pool {
	p := r.pools[rate]
	if p == nil {
		n := rate / 50
		p = &sync.Pool{New: func() any { b := make([]int16, n); return &b }}
		r.pools[rate] = p
	}
	return p
}

// Dir is the recordings directory.
func (r *Recorder) Dir() string { return r.cfg.Dir }

// Pause records silence on the live call's both channels until Resume
// (the caller reads a card number).
func (r *Recorder) Pause(callID string) error {
	c, err := r.live(callID)
	if err == nil {
		c.Pause()
	}
	return err
}

// Resume ends the live call's pause.
func (r *Recorder) Resume(callID string) error {
	c, err := r.live(callID)
	if err == nil {
		c.Resume()
	}
	return err
}

func (r *Recorder) live(callID string) (*Call, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c := r.calls[callID]; c != nil {
		return c, nil
	}
	return nil, ErrNoCall // or its files are being made
}

// ended forgets a call whose recording was closed.
func (r *Recorder) ended(c *Call, dropped int) {
	r.mu.Lock()
	if r.calls[c.id] == c {
		delete(r.calls, c.id)
	}
	r.mu.Unlock()
	r.finished.Add(1)
	r.dropped.Add(uint64(dropped))
	if r.s3 != nil && c.result != nil {
		r.s3.enqueue(c.result.Key)
	}
}

// Open opens a finished recording by its key (records.Recording.Key) for
// reading (the operator API's player).
func (r *Recorder) Open(key string) (io.ReadSeekCloser, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	if r.s3 != nil {
		return r.s3.open(key)
	}
	f, err := r.root.Open(key)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: no recording %s", records.ErrNotFound, key)
	}
	if err != nil {
		return nil, fmt.Errorf("recording: opening %s: %w", key, err)
	}
	return f, nil
}

// Remove deletes a recording's file (erasure, retention) and the day's,
// month's and year's directories once they are empty. A file already gone
// is not an error: the erasure is done.
func (r *Recorder) Remove(rec records.Recording) error {
	if err := checkKey(rec.Key); err != nil {
		return err
	}
	if r.s3 != nil {
		return r.s3.remove(rec.Key)
	}
	if err := r.root.Remove(rec.Key); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("recording: removing %s: %w", rec.Key, err)
	}
	removeEmptyDirs(r, rec.Key)
	return nil
}

// Close finishes every live recording (as its Call.Close would) and
// waits for every writer.
func (r *Recorder) Close() error {
	r.mu.Lock()
	r.closed = true
	live := make([]*Call, 0, len(r.calls))
	for _, c := range r.calls {
		if c != nil {
			live = append(live, c)
		}
	}
	r.mu.Unlock()
	for _, c := range live {
		c.Close()
	}
	r.wg.Wait()
	if r.s3 != nil {
		r.s3.close()
	}
	return r.root.Close()
}

// Stats are the recorder's counts: calls begun and ended, frames written,
// frames dropped (the queue full) and late (past the writer's window),
// bytes written, write errors; with a bucket, uploads landed, upload
// failures (the recorder closed before one landed: it waits in the spool
// for the next start), failed attempts retried, uploads pending.
func (r *Recorder) Stats() map[string]uint64 {
	r.mu.Lock()
	var live uint64
	for _, c := range r.calls {
		if c != nil {
			live++
		}
	}
	r.mu.Unlock()
	m := map[string]uint64{
		"calls_begun": r.begun.Load(), "calls_ended": r.finished.Load(), "calls_live": live,
		"frames": r.frames.Load(), "dropped_frames": r.dropped.Load(), "late_frames": r.late.Load(),
		"bytes": r.bytes.Load(), "write_errors": r.writeErrors.Load(),
	}
	if r.s3 != nil {
		r.s3.stats(m)
	}
	return m
}

// fileName makes a call id a file name: letters, digits, '-', '_' and
// '.' are kept (a '.' not first), every other byte is %XX (a SIP Call-ID
// holds '@'), so two ids never share a name.
func fileName(id string) (string, error) {
	if id == "" || len(id) > 160 {
		return "", fmt.Errorf("%w: a call id of %d bytes (1 to 160)", ErrInvalidCall, len(id))
	}
	var b strings.Builder
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.' && i > 0:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String(), nil
}

// checkKey accepts only what Begin makes: yyyy/mm/dd/<name>.wav or .ogg.
func checkKey(key string) error {
	parts := strings.Split(key, "/")
	ext := path.Ext(parts[len(parts)-1])
	if len(parts) != 4 || (ext != ".wav" && ext != ".ogg") || len(parts[3]) <= len(ext) ||
		!digits(parts[0], 4) || !digits(parts[1], 2) || !digits(parts[2], 2) ||
		strings.HasPrefix(parts[3], ".") || strings.ContainsAny(parts[3], `\`) {
		return fmt.Errorf("%w: %q is not yyyy/mm/dd/<call>.wav or .ogg", ErrInvalidKey, key)
	}
	return nil
}

func digits(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < n; i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
