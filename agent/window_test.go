package agent

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/brisvox/brisvox/messages"
)

// txt is a text of about n estimated tokens whose first word is label
// (shape shows the label only).
func txt(label string, n int) string {
	if n*4 <= len(label)+1 {
		return label
	}
	return label + " " + strings.Repeat("x", n*4-len(label)-1)
}

// shape is a compact form of msgs: role letter, the first word of the
// text, the call ids of an assistant, the call id of a result.
func shape(msgs []Message) string {
	var b strings.Builder
	for i, m := range msgs {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(string(m.Role)[:1])
		label, _, _ := strings.Cut(m.Text, " ")
		switch {
		case m.Role == RoleTool:
			if m.Text == CompactedResult {
				label = "~"
			}
			if m.IsError {
				label += "!"
			}
			b.WriteString("(" + m.ToolCallID + ":" + label + ")")
		case label != "":
			b.WriteString("(" + label + ")")
		}
		for _, c := range m.ToolCalls {
			b.WriteString("[" + c.ID + "]")
		}
	}
	return b.String()
}

// call is an assistant message calling ids (tool "lookup").
func call(text string, ids ...string) Message {
	calls := make([]messages.ToolCall, len(ids))
	for i, id := range ids {
		calls[i] = tc(id, "lookup", `{"q":"x"}`)
	}
	return Assistant(text, calls)
}

// result is the answer to id with a content of about n tokens.
func result(id string, n int) Message { return answer(id, txt("r", n)) }

// deepClone copies msgs and their inner slices, to check that Window
// leaves its input alone.
func deepClone(msgs []Message) []Message {
	out := slices.Clone(msgs)
	for i := range out {
		out[i].ToolCalls = slices.Clone(out[i].ToolCalls)
		out[i].ProviderData = slices.Clone(out[i].ProviderData)
	}
	return out
}

func sumTokens(msgs []Message) int {
	n := 0
	for _, m := range msgs {
		n += EstimateMessageTokens(m)
	}
	return n
}

// TestWindow pins what is kept and left out. (Mutations seen failing:
// leaving out single messages instead of whole exchanges — "tool pair
// never split" and the greeting and note cases; the greeting exchange
// never left out — the two greeting cases; no note — every dropping case;
// turnStart not taking the notes just before the user message — "late
// note before the current turn" loses s(Late); compaction into the latest
// round — "only the current turn left"; compacting every older result
// instead of only until it fits — "compaction stops once it fits";
// compaction written into the input — "Window modified its input"; the
// off switch ignored — "off"; a copy under the bound — the two untouched
// cases.)
func TestWindow(t *testing.T) {
	cases := []struct {
		name      string
		msgs      []Message
		max       int
		want      string
		dropped   int
		compacted int
		over      bool
	}{
		{
			name: "under the bound untouched",
			want: "s(prompt) u(u1) a(a1) u(u2)",
			msgs: []Message{System(txt("prompt", 50)), User(txt("u1", 50)), Assistant(txt("a1", 50), nil), User(txt("u2", 50))},
			max:  1000,
		},
		{
			name: "exactly at the bound untouched",
			want: "s(prompt) u(u1)",
			msgs: []Message{System(txt("prompt", 46)), User(txt("u1", 46))},
			max:  100,
		},
		{
			name: "oldest exchanges dropped first",
			want: "s(prompt) s(Note:) u(u3) a(a3) u(u4)",
			msgs: []Message{
				System(txt("prompt", 100)),
				User(txt("u1", 100)), Assistant(txt("a1", 100), nil),
				User(txt("u2", 100)), Assistant(txt("a2", 100), nil),
				User(txt("u3", 100)), Assistant(txt("a3", 100), nil),
				User(txt("u4", 100)),
			},
			max:     650,
			dropped: 4,
		},
		{
			name: "tool pair never split",
			want: "s(prompt) s(Note:) u(u2) a(a2) u(u3)",
			msgs: []Message{
				System(txt("prompt", 50)),
				User(txt("u1", 10)), call("", "t1"), result("t1", 400), Assistant(txt("a1", 10), nil),
				User(txt("u2", 50)), Assistant(txt("a2", 50), nil),
				User(txt("u3", 50)),
			},
			max:     400,
			dropped: 4,
		},
		{
			name: "greeting first: the bot's opening goes first",
			want: "s(prompt) s(Note:) u(u1) a(a1) u(u2)",
			msgs: []Message{
				System(txt("prompt", 50)),
				Assistant(txt("hello", 200), nil),
				User(txt("u1", 50)), Assistant(txt("a1", 50), nil),
				User(txt("u2", 50)),
			},
			max:     400,
			dropped: 1,
		},
		{
			name: "greeting with a tool round goes whole",
			want: "s(prompt) s(Note:) u(u1) a(a1) u(u2)",
			msgs: []Message{
				System(txt("prompt", 50)),
				call(txt("hello", 20), "t0"), result("t0", 300), Assistant(txt("welcome", 20), nil),
				User(txt("u1", 50)), Assistant(txt("a1", 50), nil),
				User(txt("u2", 50)),
			},
			max:     400,
			dropped: 3,
		},
		{
			name: "late note before the current turn stays with it",
			want: "s(prompt) s(Note:) s(Late) u(u2)",
			msgs: []Message{
				System(txt("prompt", 50)),
				User(txt("u1", 200)), call("", "t1"), result("t1", 50), Assistant(txt("a1", 50), nil),
				System(txt("Late", 30)),
				User(txt("u2", 50)),
			},
			max:     400,
			dropped: 4,
		},
		{
			name: "late note inside an old exchange goes with it",
			want: "s(prompt) s(Note:) u(u2) a(a2) u(u3)",
			msgs: []Message{
				System(txt("prompt", 50)),
				User(txt("u1", 200)), call("", "t1"), result("t1", 50), System(txt("Late", 30)), Assistant(txt("a1", 50), nil),
				User(txt("u2", 50)), Assistant(txt("a2", 50), nil),
				User(txt("u3", 50)),
			},
			max:     400,
			dropped: 5,
		},
		{
			name: "compaction of a long tool loop",
			want: "s(prompt) s(Note:) u(u2) a[t1][t2] t(t1:~) t(t2:~!) a[t3] t(t3:r) a(filler) a[t4] t(t4:r)",
			msgs: []Message{
				System(txt("prompt", 50)),
				User(txt("u1", 50)), Assistant(txt("a1", 50), nil),
				User(txt("u2", 20)),
				call("", "t1", "t2"), result("t1", 300), ToolMessage(messages.ToolResult{CallID: "t2", Content: txt("e", 300), IsError: true}),
				call("", "t3"), result("t3", 300),
				Assistant(txt("filler", 5), nil),
				call("", "t4"), result("t4", 300),
			},
			max:       1000,
			dropped:   2,
			compacted: 2,
		},
		{
			name: "compaction stops once it fits",
			want: "s(prompt) u(u1) a[t1] t(t1:~) a[t2] t(t2:r) a[t3] t(t3:r)",
			msgs: []Message{
				System(txt("prompt", 50)),
				User(txt("u1", 20)),
				call("", "t1"), result("t1", 300),
				call("", "t2"), result("t2", 300),
				call("", "t3"), result("t3", 300),
			},
			max:       900,
			compacted: 1,
		},
		{
			name: "only the current turn left, still over",
			want: "s(prompt) s(Note:) u(u2) a[t1] t(t1:~) a[t2] t(t2:r)",
			msgs: []Message{
				System(txt("prompt", 50)),
				User(txt("u1", 50)), Assistant(txt("a1", 50), nil),
				User(txt("u2", 20)),
				call("", "t1"), result("t1", 300),
				call("", "t2"), result("t2", 600),
			},
			max:       400,
			dropped:   2,
			compacted: 1,
			over:      true,
		},
		{
			name: "no user message: everything after the prompt is the turn",
			want: "s(prompt) a(hello)[t1] t(t1:~) a[t2] t(t2:r)",
			msgs: []Message{
				System(txt("prompt", 50)),
				call(txt("hello", 20), "t1"), result("t1", 300),
				call("", "t2"), result("t2", 300),
			},
			max:       500,
			compacted: 1,
		},
		{
			name: "nothing to leave out: sent as it is",
			want: "s(prompt) u(u1)",
			msgs: []Message{System(txt("prompt", 300)), User(txt("u1", 300))},
			max:  400,
			over: true,
		},
		{
			name: "off",
			want: "s(prompt) u(u1) a(a1) u(u2)",
			msgs: []Message{
				System(txt("prompt", 100)),
				User(txt("u1", 1000)), Assistant(txt("a1", 1000), nil),
				User(txt("u2", 100)),
			},
			max: -1,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := ctxOf(tc.msgs...).Validate(); err != nil {
				t.Fatalf("the case is not a valid context: %v", err)
			}
			before := deepClone(tc.msgs)
			out, st := Window(tc.msgs, WindowConfig{MaxTokens: tc.max})
			if got, want := shape(out), tc.want; got != want {
				t.Errorf("window\n got %s\nwant %s", got, want)
			}
			if st.Dropped != tc.dropped || st.Compacted != tc.compacted || st.Over != tc.over {
				t.Errorf("stats %+v, want dropped %d compacted %d over %v", st, tc.dropped, tc.compacted, tc.over)
			}
			if tc.max >= 0 && st.Tokens != sumTokens(out) {
				t.Errorf("stats tokens %d, the output weighs %d", st.Tokens, sumTokens(out))
			}
			if !reflect.DeepEqual(tc.msgs, before) {
				t.Errorf("Window modified its input")
			}
			if err := ctxOf(out...).Validate(); err != nil {
				t.Errorf("the window is not a valid context: %v", err)
			}
			if !st.Windowed() && len(out) > 0 && &out[0] != &tc.msgs[0] {
				t.Errorf("an untouched window is a copy")
			}
			if st.Dropped > 0 {
				want := fmt.Sprintf(WindowNote, st.Dropped)
				prompt := slices.IndexFunc(tc.msgs, func(m Message) bool { return m.Role != RoleSystem })
				first := slices.IndexFunc(out, func(m Message) bool { return m.Role != RoleSystem })
				if !reflect.DeepEqual(out[prompt], System(want)) || first < 0 || out[first].Role != RoleUser {
					t.Errorf("the note %q is not right after the prompt, before a user message", want)
				}
			}
		})
	}
}

// TestWindowConfigValidate: 0 (default) and negative (off) pass, a
// positive bound under MinWindowTokens is refused. (Mutation seen failing:
// Validate returning nil always — the "too small" case.)
func TestWindowConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		max int
		ok  bool
	}{{0, true}, {-1, true}, {MinWindowTokens, true}, {DefaultWindowTokens, true}, {MinWindowTokens - 1, false}, {1, false}} {
		err := WindowConfig{MaxTokens: tc.max}.Validate()
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrInvalidWindowConfig)) {
			t.Errorf("MaxTokens %d: %v", tc.max, err)
		}
	}
}

// TestWindowDefaultBound: 0 takes DefaultWindowTokens. (Mutation seen
// failing: withDefaults not applied — a bound of 0 cuts everything.)
func TestWindowDefaultBound(t *testing.T) {
	under := []Message{System("p"), User(txt("u1", DefaultWindowTokens-100))}
	if _, st := Window(under, WindowConfig{}); st.Windowed() || st.Over {
		t.Errorf("under the default bound: %+v", st)
	}
	over := []Message{System("p"), User(txt("u1", DefaultWindowTokens)), Assistant("a", nil), User("u2")}
	if _, st := Window(over, WindowConfig{}); st.Dropped != 2 {
		t.Errorf("over the default bound: %+v", st)
	}
}

// TestWindowAllocs pins the under-bound case at no allocation: the
// request of every round of a short call goes through it. (Mutation seen
// failing: cloning before checking the bound — 1 allocation.)
func TestWindowAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	msgs := benchConversation(40)
	if n := testing.AllocsPerRun(100, func() {
		out, _ := Window(msgs, WindowConfig{})
		_ = out
	}); n != 0 {
		t.Errorf("%v allocations under the bound, want 0", n)
	}
}

// benchConversation is a call of n exchanges with a tool round each:
// about 90 estimated tokens an exchange.
func benchConversation(n int) []Message {
	msgs := []Message{System(txt("prompt", 300))}
	for i := range n {
		id := fmt.Sprintf("t%d", i)
		msgs = append(msgs, User(txt("u", 20)), call("", id), result(id, 40), Assistant(txt("a", 20), nil))
	}
	return append(msgs, User(txt("u", 20)))
}

func BenchmarkWindow(b *testing.B) {
	for _, bc := range []struct {
		name      string
		exchanges int
		max       int
	}{
		{"under/40", 40, 0},
		{"cut/400", 400, 0},
		{"cut/4000", 4000, 0},
	} {
		msgs := benchConversation(bc.exchanges)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Window(msgs, WindowConfig{MaxTokens: bc.max})
			}
		})
	}
}

// genConversation makes a random valid conversation: a prompt (maybe
// empty or several messages), maybe a greeting (with a tool round), then
// exchanges of notes, a user message, tool rounds (results in any order,
// some errors), fillers and notes between rounds, a text answer; the last
// exchange may end open after a round's results (a tool loop in flight).
func genConversation(r *rand.Rand) []Message {
	size := func() int { return r.IntN(200) + 1 }
	var msgs []Message
	for range r.IntN(3) {
		msgs = append(msgs, System(txt("prompt", size())))
	}
	id := 0
	round := func() {
		n := r.IntN(3) + 1
		ids := make([]string, n)
		for i := range ids {
			ids[i] = fmt.Sprintf("t%d", id)
			id++
		}
		msgs = append(msgs, call(txt("pre", r.IntN(3)*size()/4), ids...))
		for _, i := range r.Perm(n) {
			msgs = append(msgs, ToolMessage(messages.ToolResult{CallID: ids[i], Content: txt("r", size()*r.IntN(4)), IsError: r.IntN(5) == 0}))
		}
		if r.IntN(4) == 0 {
			msgs = append(msgs, Assistant(txt("filler", 4), nil))
		}
		if r.IntN(5) == 0 {
			msgs = append(msgs, System(txt("Late", 20)))
		}
	}
	if r.IntN(3) == 0 {
		if r.IntN(2) == 0 {
			round()
		}
		msgs = append(msgs, Assistant(txt("hello", size()), nil))
	}
	exchanges := r.IntN(12)
	for e := range exchanges {
		for range r.IntN(2) {
			msgs = append(msgs, System(txt("Late", 20)))
		}
		msgs = append(msgs, User(txt("u", size())))
		for range r.IntN(4) {
			round()
		}
		if e < exchanges-1 || r.IntN(2) == 0 {
			msgs = append(msgs, Assistant(txt("a", size()), nil))
		}
	}
	return msgs
}

// checkWindow checks the properties of Window's output out for msgs under
// bound max.
func checkWindow(t *testing.T, msgs []Message, max, from int) {
	t.Helper()
	before := deepClone(msgs)
	out, st := WindowFrom(msgs, WindowConfig{MaxTokens: max}, from)
	if !reflect.DeepEqual(msgs, before) {
		t.Fatalf("Window modified its input")
	}
	if err := ctxOf(out...).Validate(); err != nil {
		t.Fatalf("invalid window: %v\n in  %s\n out %s", err, shape(msgs), shape(out))
	}
	if st.Tokens != sumTokens(out) {
		t.Fatalf("stats tokens %d, the output weighs %d", st.Tokens, sumTokens(out))
	}
	if !st.Windowed() {
		if !reflect.DeepEqual(out, msgs) {
			t.Fatalf("not windowed but changed")
		}
		if st.Tokens > max && !st.Over {
			t.Fatalf("over the bound, not windowed, not Over")
		}
		return
	}
	prompt := 0
	for prompt < len(msgs) && msgs[prompt].Role == RoleSystem {
		prompt++
	}
	if !reflect.DeepEqual(out[:prompt], msgs[:prompt]) {
		t.Fatalf("prompt changed")
	}
	rest := out[prompt:]
	if st.Dropped > 0 {
		if len(rest) < 2 || rest[0].Text != fmt.Sprintf(WindowNote, st.Dropped) {
			t.Fatalf("no note after the prompt: %s", shape(out))
		}
		rest = rest[1:]
		first := slices.IndexFunc(rest, func(m Message) bool { return m.Role != RoleSystem })
		if first < 0 || rest[first].Role != RoleUser {
			t.Fatalf("the first kept message is not a user message: %s", shape(out))
		}
	}
	// The kept messages are a suffix of the input, messages equal but for
	// compacted results.
	kept := msgs[len(msgs)-len(rest):]
	if len(msgs)-len(rest)-prompt != st.Dropped {
		t.Fatalf("dropped %d, stats say %d", len(msgs)-len(rest)-prompt, st.Dropped)
	}
	cur := turnStart(msgs, prompt, len(msgs))
	latest := len(msgs)
	for i := len(msgs) - 1; i >= cur; i-- {
		if msgs[i].Role == RoleAssistant && len(msgs[i].ToolCalls) > 0 {
			latest = i
			break
		}
	}
	compacted := 0
	for i := range kept {
		at := len(msgs) - len(rest) + i
		if reflect.DeepEqual(rest[i], kept[i]) {
			continue
		}
		want := kept[i]
		want.Text = CompactedResult
		if want.Role != RoleTool || !reflect.DeepEqual(rest[i], want) || at < cur || at >= latest {
			t.Fatalf("message %d changed: %s -> %s", at, shape(kept[i:i+1]), shape(rest[i:i+1]))
		}
		compacted++
	}
	if compacted != st.Compacted {
		t.Fatalf("compacted %d, stats say %d", compacted, st.Compacted)
	}
	if len(msgs)-len(kept) > cur {
		t.Fatalf("part of the current turn left out")
	}
	if st.Compacted > 0 && len(msgs)-len(kept) != cur {
		t.Fatalf("compacted while history was left")
	}
	if st.Tokens > max {
		if !st.Over || len(msgs)-len(kept) != cur {
			t.Fatalf("over the bound (%d > %d) with history left or not Over", st.Tokens, max)
		}
		for i := cur; i < latest; i++ {
			if msgs[i].Role == RoleTool && EstimateMessageTokens(out[len(out)-len(msgs)+i]) > EstimateMessageTokens(Message{Role: RoleTool, Text: CompactedResult}) {
				t.Fatalf("over the bound with an older result left whole")
			}
		}
	}
}

// TestWindowProperties runs checkWindow on random valid conversations
// under random bounds. (Mutations seen failing: a cut at any message —
// invalid windows; the greeting never left out, and compacting every
// older result — "compacted while history was left"; compaction into the
// latest round — a changed message;
// compaction written into the input — "Window modified its input".)
func TestWindowProperties(t *testing.T) {
	for seed := range uint64(3000) {
		r := rand.New(rand.NewPCG(seed, 7))
		msgs := genConversation(r)
		if err := ctxOf(msgs...).Validate(); err != nil {
			t.Fatalf("seed %d: generator made an invalid context: %v", seed, err)
		}
		max := r.IntN(sumTokens(msgs)+50) + 1
		from := 0
		if seed%2 == 1 { // half of them with a previous cut, valid or not
			from = r.IntN(len(msgs) + 1)
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) { checkWindow(t, msgs, max, from) })
	}
}

// FuzzWindow: the same properties on conversations of the fuzzer's seed.
func FuzzWindow(f *testing.F) {
	f.Add(uint64(0), uint64(0), 500)
	f.Add(uint64(1), uint64(2), 50)
	f.Add(uint64(42), uint64(9), 3000)
	f.Fuzz(func(t *testing.T, s1, s2 uint64, max int) {
		if max <= 0 {
			return
		}
		msgs := genConversation(rand.New(rand.NewPCG(s1, s2)))
		checkWindow(t, msgs, max, int(s1%uint64(len(msgs)+1)))
	})
}

// TestWindowFromKeepsTheCut: a call past its bound, one exchange (about
// 90 tokens) a turn, each request windowed from the previous request's
// cut. The cut moves seldom (the low water leaves room for about 27
// turns of growth in a bound of 12 000), each request between two moves
// starts with the previous request whole (a prompt cache hit), and every
// request fits. Without the previous cut (Window each time) the cut moves
// at nearly every turn. Mutations caught: from ignored (the cut moves 59
// times), cutting only to the bound instead of the low water (59 moves),
// a from that is not an exchange start used as it is (the "mid-exchange"
// check below).
func TestWindowFromKeepsTheCut(t *testing.T) {
	const limit, turns = 12000, 60
	msgs := benchConversation(130) // about 12 000 tokens: at the bound
	from, moves, statelessMoves, statelessFrom := 0, 0, 0, 0
	var prev []Message
	for turn := range turns {
		id := fmt.Sprintf("n%d", turn)
		msgs = append(msgs, call("", id), result(id, 40), Assistant(txt("a", 20), nil), User(txt("u", 20)))
		out, st := WindowFrom(msgs, WindowConfig{MaxTokens: limit}, from)
		if st.Tokens > limit || sumTokens(out) > limit {
			t.Fatalf("turn %d: %d tokens over %d", turn, sumTokens(out), limit)
		}
		if st.Dropped != from {
			moves++
		} else if prev != nil && !slices.EqualFunc(prev, out[:len(prev)], func(a, b Message) bool {
			return a.Role == b.Role && a.Text == b.Text && a.ToolCallID == b.ToolCallID
		}) {
			t.Fatalf("turn %d: same cut (%d) but the previous request is not a prefix", turn, from)
		}
		from, prev = st.Dropped, out
		_, sst := Window(msgs, WindowConfig{MaxTokens: limit})
		if sst.Dropped != statelessFrom {
			statelessMoves++
		}
		statelessFrom = sst.Dropped
	}
	if moves > 4 || statelessMoves < turns-5 {
		t.Fatalf("the cut moved %d times (stateless: %d) in %d turns", moves, statelessMoves, turns)
	}

	// A from in the middle of an exchange (the context was cut since) is
	// ignored: the result is Window's.
	mid := from + 1
	got, st := WindowFrom(msgs, WindowConfig{MaxTokens: limit}, mid)
	want, wst := Window(msgs, WindowConfig{MaxTokens: limit})
	if st != wst || shape(got) != shape(want) {
		t.Fatalf("mid-exchange from %d: dropped %d, Window dropped %d", mid, st.Dropped, wst.Dropped)
	}
	// A from beyond the current turn is ignored too.
	if _, st := WindowFrom(msgs, WindowConfig{MaxTokens: limit}, len(msgs)); st != wst {
		t.Fatalf("from beyond the turn: %+v, Window %+v", st, wst)
	}
}
