package journal

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brisvox/brisvox/internal/logtest"
	"github.com/rs/zerolog"
)

// What the journal logs of a damaged directory (a corrupt frame, a torn
// tail, a torn ack) names the files, offsets and counts, never a byte of
// a payload: payloads are call records and webhook bodies. Catches a log
// line that carries the skipped bytes: seen failing with loadSegment's
// corrupt-frame line given .Bytes("data", data).
func TestLogsNoPayload(t *testing.T) {
	const secret = "caller said my card is 4111 1111 1111 1111, call +441234567890"
	dir := t.TempDir()
	j := openT(t, dir, 0)
	for range 4 {
		appendT(t, j, 1, secret)
	}
	if err := j.Ack(1); err != nil {
		t.Fatal(err)
	}
	j.Close()
	seg := filepath.Join(dir, segName(1)+walExt)
	data, _ := os.ReadFile(seg)
	data[headerSize+3] ^= 0x40 // the first frame corrupt
	data = data[:len(data)-10] // the last one torn
	if err := os.WriteFile(seg, data, 0o600); err != nil {
		t.Fatal(err)
	}
	ack := filepath.Join(dir, segName(1)+ackExt)
	if err := os.WriteFile(ack, append(appendFrame(nil, 1, kindAck, nil), 0xff, 0x01), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	j2, err := Open(Config{Dir: dir, Log: zerolog.New(&logs)})
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	if st := j2.Stats(); st["corrupt"] != 1 || st["torn_tail"] != 2 {
		t.Fatalf("stats %v: want corrupt 1, torn_tail 2", st)
	}
	out := logs.String()
	t.Logf("logs:\n%s", out)
	if err := logtest.Check(logs.Bytes(), nil); err != nil {
		t.Fatalf("log lines: %v", err)
	}
	for _, want := range []string{"corrupt frames skipped", "torn last frame cut off", "torn last ack cut off"} {
		if !strings.Contains(out, want) {
			t.Errorf("no log line says %q", want)
		}
	}
	for _, leak := range []string{"4111", "441234567890", "caller said", "card"} {
		if strings.Contains(out, leak) {
			t.Errorf("the logs hold payload bytes (%q)", leak)
		}
	}
}
