package leaktest

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
// when it runs in one, and of all goroutines otherwise.
//
// It reads them from runtime.Stack: a goroutine's header names its bubble
// ("goroutine 7 [select, synctest bubble 2]:"), but not always. While a
// goroutine helps the garbage collector (an allocation's GC assist, or
// starting a cycle) the runtime takes it out of its bubble, and its header
// names none: a goroutine allocating in a loop was missing from one
// snapshot in five. A leak check that trusted the tag could pass with the
// leak alive. So an untagged goroutine is a member when the goroutine that
// started it is one (a goroutine started in a bubble is always in it), and,
// when that goroutine has ended, when it is waiting on the collector ("GC
// assist wait", "GC assist marking": only a goroutine helping the collector
// shows them). A detached member whose creator has ended and that is
// runnable at that instant is still missed: counting every runnable
// goroutine without a tag would count the test runner's and other tests'
// goroutines now and then, and turn exact counts flaky (it did). Should the
// tag's format change, it takes all goroutines (a leak check then stays
// sound, only noisier).
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
	if !bubbled {
		tag = nil
	}
	return members(buf, tag)
}

// goroutine is what members reads of one goroutine in a dump.
type goroutine struct {
	id, creator uint64 // creator 0: none named
	tagged      bool   // its header names the bubble
	state       string // "select", "runnable", ...
}

// members is the set of the goroutines of dump (runtime.Stack of all
// goroutines) in the bubble whose tag is tag ("synctest bubble 2"), or of
// all of them when tag is nil. See Snapshot for the rule.
func members(dump, tag []byte) Set {
	all := map[uint64]goroutine{}
	order := []uint64{}
	for rest := dump; len(rest) > 0; {
		var block []byte
		block, rest, _ = bytes.Cut(rest, []byte("\n\n"))
		g, ok := parseGoroutine(block, tag)
		if !ok {
			continue
		}
		all[g.id] = g
		order = append(order, g.id)
	}
	set := Set{}
	if tag == nil {
		for _, id := range order {
			set[id] = struct{}{}
		}
		return set
	}
	known := map[uint64]bool{}
	var member func(id uint64, depth int) bool
	member = func(id uint64, depth int) bool {
		if v, ok := known[id]; ok {
			return v
		}
		g := all[id]
		v := g.tagged
		if !v && g.creator != 0 {
			if c, alive := all[g.creator]; alive && depth < len(all) {
				v = member(c.id, depth+1)
			} else {
				v = gcWait(g.state)
			}
		}
		known[id] = v
		return v
	}
	for _, id := range order {
		if member(id, 0) {
			set[id] = struct{}{}
		}
	}
	return set
}

// parseGoroutine reads one block of a dump: "goroutine 7 [select,
// synctest bubble 2]:", frames, and "created by f in goroutine 3".
func parseGoroutine(block, tag []byte) (goroutine, bool) {
	head, frames, _ := bytes.Cut(block, []byte("\n"))
	head, ok := bytes.CutPrefix(head, []byte("goroutine "))
	if !ok {
		return goroutine{}, false
	}
	idText, status, _ := bytes.Cut(head, []byte(" ["))
	id, err := strconv.ParseUint(string(idText), 10, 64)
	if err != nil {
		return goroutine{}, false
	}
	g := goroutine{id: id}
	status, _, _ = bytes.Cut(status, []byte("]"))
	state, _, _ := bytes.Cut(status, []byte(","))
	g.state = string(state)
	if tag != nil {
		if _, after, ok := bytes.Cut(status, tag); ok && (len(after) == 0 || after[0] == ',') {
			g.tagged = true
		}
	}
	if i := bytes.LastIndex(frames, []byte("created by ")); i >= 0 {
		line, _, _ := bytes.Cut(frames[i:], []byte("\n"))
		if _, n, ok := bytes.Cut(line, []byte(" in goroutine ")); ok {
			g.creator, _ = strconv.ParseUint(string(bytes.TrimSpace(n)), 10, 64)
		}
	}
	return g, true
}

// gcWait tells whether a goroutine in state is waiting on the collector
// as only a goroutine helping it does.
func gcWait(state string) bool {
	return state == "GC assist wait" || state == "GC assist marking"
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
