package main

import (
	"bytes"
	"encoding/binary"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brisvox/brisvox/internal/s3test"
)

// TestRecordingInBucket: the keyless agent with recording = "wav" and a
// [records.bucket] (a local S3-compatible server, s3rver) records a PCM
// call through brisvox serve: once the call has ended its record names
// the recording, the object lands in the bucket under the prefix as a
// two-channel WAV of the record's length, the spool's copy is deleted,
// the operator API's recording route serves the object's bytes, and
// neither the bucket's secret key nor the credentials' values are in
// serve's output. Real time: skipped with -short.
//
// Mutations caught (each seen failing): openKept not passing
// [records.bucket] to the recorder (the file stays in the directory, no
// object); the upload dropping Content-MD5 and signing the payload in
// aws-chunked framing over HTTP (s3rver stores the framing: the object
// is not the file).
func TestRecordingInBucket(t *testing.T) {
	if testing.Short() {
		t.Skip("a real-time call on loopback")
	}
	s3 := s3test.Start(t)
	check := noLeaks(t)
	question := say(t, "What time is it?")
	t.Setenv(recordsTokenEnv, recordsToken)
	t.Setenv("BRISVOX_RECORDINGS_ACCESS_KEY", s3test.AccessKey)
	t.Setenv("BRISVOX_RECORDINGS_SECRET_KEY", s3test.SecretKey)
	src, err := os.ReadFile(keyless(t))
	if err != nil {
		t.Fatal(err)
	}
	agent := filepath.Join(t.TempDir(), "local.toml")
	extra := "\n[records]\nrecording = \"wav\"\n[records.bucket]\nendpoint = \"" + s3.Endpoint() + "\"\nsecure = false\nname = \"" + s3test.Bucket +
		"\"\nprefix = \"e2e/\"\nregion = \"" + s3test.Region + "\"\n"
	if err := os.WriteFile(agent, append(src, extra...), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	stdout := &syncBuffer{}
	base, stop, stderr := servedOut(t, serveFlags{agent: agent, maxCalls: 2, drain: 2 * time.Second, recordsDir: dir, operatorTokenEnv: recordsTokenEnv}, stdout)
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()
	c := dialKeptCaller(t, base)
	greeted(t, c.seen)
	answeredTurn(t, c.seen, c.play, question, "time")
	c.hangup(t)
	rec := apiRecord(t, base, waitRecord(t, base, "pcm").CallID)
	r := rec.Recording
	if r == nil || r.Format != "wav" || r.Key == "" || r.DurationMS < 1000 || r.DroppedFrames != 0 {
		t.Fatalf("the record's recording: %+v", r)
	}
	var obj []byte
	eventually(t, 20*time.Second, "the recording in the bucket", func() bool {
		obj, err = s3.Object("e2e/" + r.Key)
		return err == nil
	})
	if int64(len(obj)) != r.Bytes {
		t.Fatalf("the object has %d bytes, the record says %d", len(obj), r.Bytes)
	}
	// A WAV header: RIFF, two channels, its data the rest of the object,
	// as long as the record says (16-bit samples).
	if len(obj) < 44 || string(obj[:4]) != "RIFF" || string(obj[8:12]) != "WAVE" || binary.LittleEndian.Uint16(obj[22:]) != 2 {
		t.Fatalf("the object is not a two-channel WAV: % x", obj[:min(len(obj), 44)])
	}
	rate := binary.LittleEndian.Uint32(obj[24:])
	frames := float64(len(obj)-44) / 4
	if got := frames / float64(rate) * 1000; got < r.DurationMS-20 || got > r.DurationMS+20 {
		t.Errorf("the object holds %.0f ms of audio, the record says %.0f ms", got, r.DurationMS)
	}
	eventually(t, 10*time.Second, "the spool's copy deleted", func() bool {
		_, err := os.Stat(filepath.Join(dir, "recordings", filepath.FromSlash(r.Key)))
		return os.IsNotExist(err)
	})
	code, body := fetch(t, "GET", base+"/operator/records/"+url.PathEscape(rec.CallID)+"/recording", recordsToken)
	if code != 200 || !bytes.Equal([]byte(body), obj) {
		t.Errorf("GET the recording: %d, %d bytes; want 200 and the object's %d", code, len(body), len(obj))
	}
	stopped = true
	if code := stop(); code != 0 {
		t.Errorf("serve exited with %d:\n%s", code, stderr)
	}
	for _, out := range []string{stdout.String(), stderr.String()} {
		if strings.Contains(out, s3test.SecretKey) {
			t.Error("the bucket's secret key is in serve's output")
		}
	}
	check()
}
