package goroutines

import (
	"bytes"
	"runtime"
)

// Count counts the goroutines of the caller's synctest bubble when it runs
// in one, and all goroutines otherwise. It reads the bubble from the
// headers of runtime.Stack ("goroutine 7 [select, synctest bubble 2]:");
// should that format change, it counts all (a leak check then stays
// sound, only noisier).
func Count() int {
	self := make([]byte, 256)
	self = self[:runtime.Stack(self, false)]
	line, _, _ := bytes.Cut(self, []byte("\n"))
	_, bubble, ok := bytes.Cut(line, []byte("synctest bubble "))
	if !ok {
		return runtime.NumGoroutine()
	}
	id, _, _ := bytes.Cut(bubble, []byte("]"))
	id, _, _ = bytes.Cut(id, []byte(","))
	tag := []byte("synctest bubble " + string(id))
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for rest := buf; len(rest) > 0; {
		var l []byte
		l, rest, _ = bytes.Cut(rest, []byte("\n"))
		if !bytes.HasPrefix(l, []byte("goroutine ")) {
			continue
		}
		if _, after, ok := bytes.Cut(l, tag); ok && (len(after) == 0 || after[0] == ']' || after[0] == ',') {
			count++
		}
	}
	return count
}
