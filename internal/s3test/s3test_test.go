package s3test_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/brisvox/brisvox/internal/s3test"
	"github.com/minio/minio-go/v7"
	"go.uber.org/goleak"
)

// TestServer: an object put is read back whole, and is still there after
// Stop and Restart (the same port, the same data); no goroutine is left.
// Mutation caught: Restart taking a new directory or port (the object is
// gone or the endpoint changed).
func TestServer(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	s := s3test.Start(t)
	c, done := s.Client()
	want := []byte("RIFF and some bytes")
	if _, err := c.PutObject(context.Background(), s3test.Bucket, "a/b.wav", bytes.NewReader(want), int64(len(want)),
		minio.PutObjectOptions{SendContentMd5: true, DisableContentSha256: true}); err != nil {
		t.Fatal(err)
	}
	done()
	ep := s.Endpoint()
	s.Stop()
	s.Restart()
	if s.Endpoint() != ep {
		t.Fatalf("restarted on %s, was %s", s.Endpoint(), ep)
	}
	got, err := s.Object("a/b.wav")
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("after a restart: %q, %v", got, err)
	}
}
