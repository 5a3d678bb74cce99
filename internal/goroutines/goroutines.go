package goroutines

import (
	"bytes"
	"runtime"
	"strconv"
)

// Set is the goroutines alive at one moment, by id.
type Set map[uint64]struct{}

// NewSince counts the goroutines of s that are not in base: started after
// base was taken and still alive. Unlike a difference of counts, a
// goroutine of base that ended meanwhile cannot hide a new one.
func (s Set) NewSince(base Set) int {
	n := 0
	for id := range s {
		if _, ok := base[id]; !ok {
			n++
		}
	}
	return n
}

// Count counts the goroutines of the caller's synctest bubble when it runs
// in one, and all goroutines otherwise (see Snapshot).
func Count() int {
	if !inBubble() {
		return runtime.NumGoroutine()
	}
	return len(Snapshot())
}

// Snapshot is the set of the goroutines of the caller's synctest bubble
// when it runs in one, and of all goroutines otherwise. It reads them from
// the headers of runtime.Stack ("goroutine 7 [select, synctest bubble
// 2]:"); should the bubble tag's format change, it takes all goroutines (a
// leak check then stays sound, only noisier).
func Snapshot() Set {
	tag, bubbled := bubbleTag()
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	set := Set{}
	for rest := buf; len(rest) > 0; {
		var l []byte
		l, rest, _ = bytes.Cut(rest, []byte("\n"))
		head, ok := bytes.CutPrefix(l, []byte("goroutine "))
		if !ok {
			continue
		}
		if bubbled {
			_, after, ok := bytes.Cut(head, tag)
			if !ok || (len(after) > 0 && after[0] != ']' && after[0] != ',') {
				continue
			}
		}
		idText, _, _ := bytes.Cut(head, []byte(" "))
		if id, err := strconv.ParseUint(string(idText), 10, 64); err == nil {
			set[id] = struct{}{}
		}
	}
	return set
}

// inBubble tells whether the caller runs in a synctest bubble.
func inBubble() bool {
	_, ok := bubbleTag()
	return ok
}

// bubbleTag is "synctest bubble N" of the caller's bubble, if it is in
// one.
func bubbleTag() ([]byte, bool) {
	self := make([]byte, 256)
	self = self[:runtime.Stack(self, false)]
	line, _, _ := bytes.Cut(self, []byte("\n"))
	_, bubble, ok := bytes.Cut(line, []byte("synctest bubble "))
	if !ok {
		return nil, false
	}
	id, _, _ := bytes.Cut(bubble, []byte("]"))
	id, _, _ = bytes.Cut(id, []byte(","))
	return []byte("synctest bubble " + string(id)), true
}
