package webrtc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"testing"
)

// errDuplicateKey: a log object has a key twice, which strict JSON log
// pipelines reject (encoding/json silently keeps the last one).
var errDuplicateKey = errors.New("duplicate key")

// checkLogLines parses every line of out as one strict JSON object and
// fails on a line that is not one, or on an object (at any depth) with a
// key twice.
func checkLogLines(out []byte) error {
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if err := checkLogLine(line); err != nil {
			return fmt.Errorf("log line %d: %w: %.300s", n, err, line)
		}
	}
	return sc.Err()
}

// checkLogLine walks one line with json.Decoder tokens.
func checkLogLine(line []byte) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return errors.New("not a json object")
	}
	if err := walkObject(dec); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data after the object")
	}
	return nil
}

// walkObject reads an object's members after its '{', through its '}'.
func walkObject(dec *json.Decoder) error {
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, ok := tok.(string)
		if !ok {
			return errors.New("object key is not a string")
		}
		if seen[key] {
			return fmt.Errorf("%w %q", errDuplicateKey, key)
		}
		seen[key] = true
		if err := walkValue(dec); err != nil {
			return err
		}
	}
	_, err := dec.Token() // '}'
	return err
}

// walkValue reads one value, descending into objects and arrays.
func walkValue(dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		return walkObject(dec)
	case json.Delim('['):
		for dec.More() {
			if err := walkValue(dec); err != nil {
				return err
			}
		}
		_, err := dec.Token() // ']'
		return err
	}
	return nil
}

// TestCheckLogLines: the strict parser itself. Mutations caught: the seen
// map not consulted (a duplicate passes), nested objects not walked.
func TestCheckLogLines(t *testing.T) {
	cases := []struct {
		name string
		in   string
		dup  bool
		bad  bool
	}{
		{"clean", `{"level":"info","call_id":"a","message":"m"}` + "\n", false, false},
		{"empty lines", "\n\n{\"a\":1}\n\n", false, false},
		{"duplicate call_id", `{"call_id":"a","error":"x","call_id":"a","message":"webrtc call ended"}`, true, false},
		{"duplicate nested", `{"a":{"b":1,"b":2}}`, true, false},
		{"duplicate in an array's object", `{"a":[1,{"c":1,"c":1}]}`, true, false},
		{"same key at two depths", `{"a":{"a":1}}`, false, false},
		{"not json", `level=info msg=x`, false, true},
		{"an array", `[1,2]`, false, true},
		{"trailing", `{"a":1} {"b":2}`, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := checkLogLines([]byte(tc.in))
			switch {
			case tc.dup && !errors.Is(err, errDuplicateKey):
				t.Fatalf("got %v, want a duplicate key", err)
			case tc.bad && (err == nil || errors.Is(err, errDuplicateKey)):
				t.Fatalf("got %v, want not json", err)
			case !tc.dup && !tc.bad && err != nil:
				t.Fatalf("clean input refused: %v", err)
			}
		})
	}
}
