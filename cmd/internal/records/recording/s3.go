package recording

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brisvox/brisvox/cmd/internal/records"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// S3Config puts finished recordings in an S3-compatible bucket. The call's
// file is still written to Config.Dir as the call goes on (the spool: the
// call's audio never waits on the network); once the call ends it is
// uploaded, retried with backoff while the recorder runs, and the local
// copy is deleted once the bucket has it.
type S3Config struct {
	// Endpoint is the server's host[:port], without a scheme
	// ("s3.eu-west-1.amazonaws.com", "127.0.0.1:9000").
	Endpoint string
	// Bucket must exist; the recorder does not create it.
	Bucket string
	// Prefix is put before every key: the object of the recording
	// yyyy/mm/dd/<call>.wav is <Prefix>yyyy/mm/dd/<call>.wav. Empty, or
	// ending in '/'.
	Prefix string
	// Region is the bucket's region; empty, the server is asked.
	Region string
	// AccessKey and SecretKey are the credentials (the caller reads them
	// from the environment). The secret is never logged.
	AccessKey, SecretKey string
	// Secure is HTTPS.
	Secure bool
}

// validate checks an S3 config.
func (c *S3Config) validate() error {
	switch {
	case c.Endpoint == "" || strings.Contains(c.Endpoint, "://") || strings.Contains(c.Endpoint, "/"):
		return fmt.Errorf("%w: recordings bucket endpoint %q: give host[:port] without a scheme or path (secure sets HTTPS)", ErrInvalidConfig, c.Endpoint)
	case c.Bucket == "":
		return fmt.Errorf("%w: no recordings bucket: set one", ErrInvalidConfig)
	case c.Prefix != "" && (!strings.HasSuffix(c.Prefix, "/") || strings.HasPrefix(c.Prefix, "/")):
		return fmt.Errorf("%w: recordings bucket prefix %q: it must end in '/' and not start with one", ErrInvalidConfig, c.Prefix)
	case c.AccessKey == "" || c.SecretKey == "":
		return fmt.Errorf("%w: the recordings bucket %s needs an access key and a secret key: set both", ErrInvalidConfig, c.Bucket)
	}
	return nil
}

// Upload backoff and the grace Close gives uploads in flight.
const (
	defaultRetryMin = time.Second
	defaultRetryMax = time.Minute
	closeGrace      = 10 * time.Second
)

// WithUploadBackoff sets the wait after a failed upload (doubling from
// least to most); a test shortens it. Default 1 s to 1 min.
func WithUploadBackoff(least, most time.Duration) Option {
	return func(r *Recorder) {
		if r.s3 != nil {
			r.s3.retryMin, r.s3.retryMax = least, max(least, most)
		}
	}
}

// bucket is the S3 backend: the uploads of finished spool files.
type bucket struct {
	r        *Recorder
	cfg      S3Config
	client   *minio.Client
	tr       *http.Transport
	retryMin time.Duration
	retryMax time.Duration

	// stop ends the backoff waits (Close); hard ends the attempts in
	// flight, closeGrace after stop.
	stop       chan struct{}
	hard       context.Context
	cancelHard context.CancelFunc
	wg         sync.WaitGroup

	mu      sync.Mutex
	pending map[string]*upload // by key
	stopped bool

	uploads, failures, retries atomic.Uint64
}

// upload is one finished file on its way to the bucket.
type upload struct {
	cancel context.CancelFunc // Remove: the erasure wins
	done   chan struct{}
}

func newBucket(r *Recorder, cfg S3Config) (*bucket, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	tr, err := minio.DefaultTransport(cfg.Secure)
	if err != nil {
		return nil, fmt.Errorf("%w: recordings bucket %s: %w", ErrInvalidConfig, cfg.Bucket, err)
	}
	cl, err := minio.New(cfg.Endpoint, &minio.Options{
		Creds:     credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""),
		Secure:    cfg.Secure,
		Region:    cfg.Region,
		Transport: tr,
		// The recorder retries an upload itself, with its own backoff
		// and counters; one request is one attempt.
		MaxRetries: 1,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: recordings bucket %s at %s: %w", ErrInvalidConfig, cfg.Bucket, cfg.Endpoint, err)
	}
	b := &bucket{r: r, cfg: cfg, client: cl, tr: tr, retryMin: defaultRetryMin, retryMax: defaultRetryMax,
		stop: make(chan struct{}), pending: map[string]*upload{}}
	b.hard, b.cancelHard = context.WithCancel(context.Background())
	return b, nil
}

// object is the bucket's name of a recording's key.
func (b *bucket) object(key string) string { return b.cfg.Prefix + key }

// enqueue starts the upload of the finished spool file key, unless it is
// on its way already or the recorder is closing (then it stays in the
// spool for the next start).
func (b *bucket) enqueue(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		b.failures.Add(1)
		return
	}
	if b.pending[key] != nil {
		return
	}
	ctx, cancel := context.WithCancel(b.hard)
	u := &upload{cancel: cancel, done: make(chan struct{})}
	b.pending[key] = u
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		defer close(u.done)
		defer cancel()
		b.run(ctx, key)
		b.mu.Lock()
		if b.pending[key] == u {
			delete(b.pending, key)
		}
		b.mu.Unlock()
	}()
}

// run uploads key until it lands, the recorder closes or an erasure
// cancels it.
func (b *bucket) run(ctx context.Context, key string) {
	wait := b.retryMin
	for attempt := 0; ; attempt++ {
		err := b.put(ctx, key)
		if err == nil {
			b.uploads.Add(1)
			if attempt > 0 {
				b.r.log.Info().Str("bucket", b.cfg.Bucket).Str("key", b.object(key)).Int("attempts", attempt+1).Msg("recording: uploaded after retries")
			}
			return
		}
		if errors.Is(err, fs.ErrNotExist) || ctx.Err() != nil && !b.closing() {
			return // erased meanwhile: nothing to upload
		}
		if attempt == 0 {
			b.r.log.Warn().Err(err).Str("bucket", b.cfg.Bucket).Str("key", b.object(key)).Msg("recording: uploading the call's recording failed; it stays in the spool and is retried")
		}
		select {
		case <-time.After(wait):
			b.retries.Add(1)
			wait = min(2*wait, b.retryMax)
		case <-ctx.Done():
		case <-b.stop:
		}
		if b.closing() || ctx.Err() != nil {
			if b.closing() {
				b.failures.Add(1)
				b.r.log.Warn().Str("bucket", b.cfg.Bucket).Str("key", b.object(key)).Msg("recording: the recorder closed before the upload landed; the recording stays in the spool and is uploaded at the next start")
			}
			return
		}
	}
}

func (b *bucket) closing() bool {
	select {
	case <-b.stop:
		return true
	default:
		return false
	}
}

// put is one attempt: the spool file to its object, then the local copy
// deleted (a crash between the two uploads it again at the next start:
// the same bytes to the same object).
func (b *bucket) put(ctx context.Context, key string) error {
	f, err := b.r.root.Open(key)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("recording: uploading %s: %w", key, err)
	}
	ctype := "audio/wav"
	if path.Ext(key) == ".ogg" {
		ctype = "audio/ogg"
	}
	if _, err := b.client.PutObject(ctx, b.cfg.Bucket, b.object(key), f, st.Size(),
		// Content-MD5 on every upload, which the server checks, and
		// no aws-chunked payload signing: some S3-compatible servers
		// (s3rver among them) store that framing as the object's bytes.
		minio.PutObjectOptions{ContentType: ctype, DisableMultipart: st.Size() < 64<<20,
			SendContentMd5: true, DisableContentSha256: true}); err != nil {
		return fmt.Errorf("recording: uploading to bucket %s, key %s: %w", b.cfg.Bucket, b.object(key), err)
	}
	if ctx.Err() != nil { // erased while it went: Remove deletes the object after us
		return ctx.Err()
	}
	if err := b.r.root.Remove(key); err != nil && !errors.Is(err, fs.ErrNotExist) {
		b.r.log.Warn().Err(err).Str("key", key).Msg("recording: uploaded, but deleting the spool's copy failed; it is uploaded again at the next start")
	}
	removeEmptyDirs(b.r, key)
	return nil
}

// queueSpool enqueues every finished file of the spool: the recordings a
// failed upload or a crash left (a finished file in the spool is one not
// yet in the bucket: an uploaded one is deleted).
func (b *bucket) queueSpool() {
	fs.WalkDir(b.r.root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && checkKey(p) == nil {
			b.enqueue(p)
		}
		return nil
	})
}

// open reads a recording: the spool's copy while it is not uploaded, else
// the object.
func (b *bucket) open(key string) (io.ReadSeekCloser, error) {
	if f, err := b.r.root.Open(key); err == nil {
		return f, nil
	}
	obj, err := b.client.GetObject(context.Background(), b.cfg.Bucket, b.object(key), minio.GetObjectOptions{})
	if err == nil {
		_, err = obj.Stat()
	}
	if err != nil {
		if obj != nil {
			obj.Close()
		}
		if notFound(err) {
			return nil, fmt.Errorf("%w: no recording %s in bucket %s", records.ErrNotFound, b.object(key), b.cfg.Bucket)
		}
		return nil, fmt.Errorf("recording: reading bucket %s, key %s: %w", b.cfg.Bucket, b.object(key), err)
	}
	return obj, nil
}

// remove deletes a recording: its upload stopped (and waited for), the
// object, the spool's copy.
func (b *bucket) remove(key string) error {
	b.mu.Lock()
	u := b.pending[key]
	b.mu.Unlock()
	if u != nil {
		u.cancel()
		<-u.done
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := b.client.RemoveObject(ctx, b.cfg.Bucket, b.object(key), minio.RemoveObjectOptions{}); err != nil && !notFound(err) {
		return fmt.Errorf("recording: removing bucket %s, key %s: %w (the erasure did not finish: retry it)", b.cfg.Bucket, b.object(key), err)
	}
	if err := b.r.root.Remove(key); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("recording: removing %s from the spool: %w", key, err)
	}
	removeEmptyDirs(b.r, key)
	return nil
}

// close stops the retries, gives the attempts in flight closeGrace and
// waits for every upload; what did not land stays in the spool.
func (b *bucket) close() {
	b.mu.Lock()
	b.stopped = true
	b.mu.Unlock()
	close(b.stop)
	t := time.AfterFunc(closeGrace, b.cancelHard)
	b.wg.Wait()
	t.Stop()
	b.cancelHard()
	b.tr.CloseIdleConnections()
}

func (b *bucket) stats(m map[string]uint64) {
	b.mu.Lock()
	m["pending_uploads"] = uint64(len(b.pending))
	b.mu.Unlock()
	m["uploads"] = b.uploads.Load()
	m["upload_failures"] = b.failures.Load()
	m["upload_retries"] = b.retries.Load()
}

func notFound(err error) bool {
	e := minio.ToErrorResponse(err)
	return e.Code == minio.NoSuchKey || e.StatusCode == http.StatusNotFound && e.Code != minio.NoSuchBucket
}

// removeEmptyDirs removes key's day, month and year directories of the
// spool once they are empty.
func removeEmptyDirs(r *Recorder, key string) {
	for d := path.Dir(key); d != "."; d = path.Dir(d) {
		if r.root.Remove(d) != nil { // not empty (or gone): stop
			break
		}
	}
}
