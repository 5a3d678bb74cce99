package rules

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers"
)

// Tool definitions as the engine offers them.
var (
	defGetTime = providers.ToolDef{Name: toolGetTime, Parameters: json.RawMessage(`{"type":"object","properties":{"timezone":{"type":"string"}},"required":["timezone"]}`)}
	defBook    = providers.ToolDef{Name: toolBookTable, Parameters: json.RawMessage(`{"type":"object"}`)}
	defEnd     = providers.ToolDef{Name: agent.EndCallTool, Parameters: json.RawMessage(`{"type":"object"}`)}
	defConfirm = providers.ToolDef{Name: agent.ConfirmPendingTool, Parameters: json.RawMessage(`{"type":"object"}`)}
	allTools   = []providers.ToolDef{defBook, defConfirm, defEnd, defGetTime}
)

func bot(text string, calls ...messages.ToolCall) agent.Message { return agent.Assistant(text, calls) }

func call(id, name, args string) messages.ToolCall {
	return messages.ToolCall{ID: id, ProviderID: "rules-x", Name: name, Arguments: json.RawMessage(args)}
}

func result(id, content string, isErr bool) agent.Message {
	return agent.Message{Role: agent.RoleTool, ToolCallID: id, Text: content, IsError: isErr}
}

// held is the confirmation gate's real answer to a held book_table call.
func held(c messages.ToolCall) agent.Message {
	var g agent.Confirmations
	return agent.ToolMessage(g.Request(c, 1, time.Unix(0, 0)))
}

const sam4at7 = `{"party_size":4,"time":"19:00","name":"Sam"}`

// describeResponse writes a response as `text` [name args]...
func describeResponse(r response) string {
	s := r.text
	for _, c := range r.calls {
		s += fmt.Sprintf(" [%s %s]", c.name, c.args)
	}
	return strings.TrimSpace(s)
}

// TestConversations: the answer to the last message of each conversation,
// text and calls, over recognizer-like text (no punctuation, number words)
// and typed text alike.
func TestConversations(t *testing.T) {
	bookCall := call("t2.0", toolBookTable, sam4at7)
	tests := []struct {
		name   string
		system string
		tools  []providers.ToolDef // nil: allTools
		msgs   []agent.Message
		want   string
	}{
		{name: "what time is it", msgs: []agent.Message{agent.User("what time is it")},
			want: `[get_time {"timezone":"UTC"}]`},
		{name: "the time, typed", msgs: []agent.Message{agent.User("Could you tell me the time, please?")},
			want: `[get_time {"timezone":"UTC"}]`},
		// Catches a zone ignored in the system prompt.
		{name: "zone from the system prompt", system: "You answer for a bistro in Europe/Paris.",
			msgs: []agent.Message{agent.User("what time is it")}, want: `[get_time {"timezone":"Europe/Paris"}]`},
		{name: "get_time without a timezone parameter",
			tools: []providers.ToolDef{{Name: toolGetTime, Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}},
			msgs:  []agent.Message{agent.User("what time is it")}, want: `[get_time {}]`},
		// Catches a call of a tool the request does not offer.
		{name: "time not offered", tools: []providers.ToolDef{defBook},
			msgs: []agent.Message{agent.User("what time is it")}, want: lineNoTime},
		{name: "hello", msgs: []agent.Message{agent.User("hello")}, want: lineGreeting},
		{name: "good morning", msgs: []agent.Message{agent.User("good morning")}, want: lineGreeting},
		{name: "anything else", msgs: []agent.Message{agent.User("do you sell shoes")}, want: lineHelp},
		{name: "empty text", msgs: []agent.Message{agent.User("")}, want: lineHelp},
		{name: "system only", msgs: nil, want: lineGreeting},
		{name: "bye", msgs: []agent.Message{agent.User("bye")}, want: lineGoodbye + ` [end_call {"reason":"the caller said goodbye"}]`},
		{name: "thats all", msgs: []agent.Message{agent.User("that's all thank you")}, want: lineGoodbye + ` [end_call {"reason":"the caller said goodbye"}]`},
		{name: "hang up", msgs: []agent.Message{agent.User("you can hang up now")}, want: lineGoodbye + ` [end_call {"reason":"the caller said goodbye"}]`},
		{name: "goodbye without end_call", tools: []providers.ToolDef{defGetTime},
			msgs: []agent.Message{agent.User("goodbye")}, want: lineGoodbye},
		{name: "booking, everything at once, recognizer text",
			msgs: []agent.Message{agent.User("book a table for four at seven p m under sam")}, want: `[book_table ` + sam4at7 + `]`},
		{name: "booking asks the name",
			msgs: []agent.Message{agent.User("book a table for four at seven p m")}, want: "A table for four at seven PM. Under what name?"},
		{name: "booking asks the party first",
			msgs: []agent.Message{agent.User("I'd like to reserve a table")}, want: lineAskParty},
		{name: "booking asks the time",
			msgs: []agent.Message{agent.User("a table for 2 please")}, want: "A table for two. At what time?"},
		{name: "booking: the name from the next turn",
			msgs: []agent.Message{agent.User("book a table for four at seven"), bot("A table for four at seven PM. Under what name?"), agent.User("sam")},
			want: `[book_table ` + sam4at7 + `]`},
		// Catches slots kept only from the last turn: the party and
		// the time come from two turns back.
		{name: "booking: slots over three turns",
			msgs: []agent.Message{
				agent.User("i want to book a table"), bot(lineAskParty),
				agent.User("four people"), bot("A table for four. At what time?"),
				agent.User("half past seven"), bot("... Under what name?"),
				agent.User("it's sam lee please"),
			},
			want: `[book_table {"party_size":4,"time":"19:30","name":"Sam Lee"}]`},
		{name: "booking: seven thirty as the time answer",
			msgs: []agent.Message{agent.User("book a table for two"), bot("At what time?"), agent.User("seven thirty")},
			want: "A table for two at seven thirty PM. Under what name?"},
		{name: "booking: for for is four",
			msgs: []agent.Message{agent.User("book a table for for at 8 o'clock under ana")},
			want: `[book_table {"party_size":4,"time":"20:00","name":"Ana"}]`},
		{name: "booking: digits and 24 h",
			msgs: []agent.Message{agent.User("Table for 6 at 19:45, name is Kim.")},
			want: `[book_table {"party_size":6,"time":"19:45","name":"Kim"}]`},
		{name: "booking: eleven thirty am",
			msgs: []agent.Message{agent.User("book a table for three at eleven thirty a m for bo")},
			want: "A table for three at eleven thirty AM. Under what name?"},
		{name: "booking: a party too large",
			msgs: []agent.Message{agent.User("book a table for thirty")}, want: lineBadParty},
		// Catches a dialog dropped at a turn it did not understand.
		{name: "booking: not understood asks again",
			msgs: []agent.Message{agent.User("book a table"), bot(lineAskParty), agent.User("hmm")},
			want: lineReask + " For how many people?"},
		{name: "booking: a new intent leaves the dialog",
			msgs: []agent.Message{agent.User("book a table"), bot(lineAskParty), agent.User("what time is it")},
			want: `[get_time {"timezone":"UTC"}]`},
		{name: "booking: after the dialog left, a number is not a party",
			msgs: []agent.Message{agent.User("book a table"), bot(lineAskParty), agent.User("hello"), bot(lineGreeting), agent.User("four")},
			want: lineHelp},
		{name: "booking not offered",
			tools: []providers.ToolDef{defGetTime},
			msgs:  []agent.Message{agent.User("book a table for two at eight under jo")}, want: lineNoBooking},
		// Catches a confirmation that does not read the held call's id.
		{name: "yes please confirms the held call",
			msgs: []agent.Message{agent.User("book a table for four at seven under sam"), bot("", bookCall), held(bookCall),
				bot("A table for four at seven PM under Sam. Shall I book it?"), agent.User("yes please")},
			want: `[confirm_pending {"call_id":"t2.0"}]`},
		{name: "yeah confirms",
			msgs: []agent.Message{agent.User("book"), bot("", bookCall), held(bookCall), bot("Shall I book it?"), agent.User("yeah go ahead")},
			want: `[confirm_pending {"call_id":"t2.0"}]`},
		// Catches "no thanks" read as yes (it holds "thanks", and no
		// is checked first).
		{name: "no thanks cancels",
			msgs: []agent.Message{agent.User("book"), bot("", bookCall), held(bookCall), bot("Shall I book it?"), agent.User("no thanks")},
			want: lineDeclined},
		// Catches a pending request kept past the reply that did not
		// answer it: the gate wants the NEXT reply.
		{name: "yes two turns later confirms nothing",
			msgs: []agent.Message{agent.User("book"), bot("", bookCall), held(bookCall), bot("Shall I book it?"),
				agent.User("what time is it"), bot("It's seven PM."), agent.User("yes")},
			want: lineHelp},
		{name: "yes without confirm_pending offered",
			tools: []providers.ToolDef{defBook},
			msgs:  []agent.Message{agent.User("book"), bot("", bookCall), held(bookCall), bot("Shall I book it?"), agent.User("yes")},
			want:  lineNoConfirm},
		{name: "get_time result",
			msgs: []agent.Message{agent.User("what time is it"), bot("", call("t1.0", toolGetTime, `{"timezone":"Europe/Paris"}`)),
				result("t1.0", `{"time":"2026-12-01T15:04:05+01:00"}`, false)},
			want: "It's three oh four PM."},
		{name: "get_time result in UTC",
			msgs: []agent.Message{agent.User("what time is it"), bot("", call("t1.0", toolGetTime, `{"timezone":"UTC"}`)),
				result("t1.0", `{"time":"2026-12-01T00:30:00Z"}`, false)},
			want: "It's twelve thirty AM in UTC."},
		{name: "get_time error",
			msgs: []agent.Message{agent.User("what time is it"), bot("", call("t1.0", toolGetTime, `{}`)),
				result("t1.0", agent.ErrorContent(agent.KindTimeout, toolGetTime, "slow"), true)},
			want: lineTimeFailed},
		{name: "book_table held",
			msgs: []agent.Message{agent.User("book a table for four at seven under sam"), bot("", bookCall), held(bookCall)},
			want: "A table for four at seven PM under Sam. Shall I book it?"},
		{name: "book_table done without a gate",
			msgs: []agent.Message{agent.User("book a table for four at seven under sam"), bot("", bookCall),
				result("t2.0", "booked: table for 4 at 19:00 under Sam, reference B-0001", false)},
			want: "Done, your table for four at seven PM is booked. Your reference is B zero zero zero one."},
		{name: "book_table failed",
			msgs: []agent.Message{agent.User("book a table for four at seven under sam"), bot("", bookCall),
				result("t2.0", agent.ErrorContent(agent.KindToolFailed, toolBookTable, "full"), true)},
			want: lineBookFailed},
		{name: "confirm_pending done",
			msgs: []agent.Message{agent.User("book a table for four at seven under sam"), bot("", bookCall), held(bookCall),
				bot("Shall I book it?"), agent.User("yes"), bot("", call("t3.0", agent.ConfirmPendingTool, `{"call_id":"t2.0"}`)),
				result("t3.0", "booked: table for 4 at 19:00 under Sam, reference B-0001", false)},
			want: "Done, your table for four at seven PM is booked. Your reference is B zero zero zero one."},
		{name: "confirm_pending refused",
			msgs: []agent.Message{agent.User("yes"), bot("", call("t3.0", agent.ConfirmPendingTool, `{"call_id":"t2.0"}`)),
				result("t3.0", agent.ErrorContent(agent.KindToolFailed, agent.ConfirmPendingTool, "no request"), true)},
			want: lineConfirmFailed},
		{name: "end_call result says nothing",
			msgs: []agent.Message{agent.User("bye"), bot(lineGoodbye, call("t4.0", agent.EndCallTool, `{}`)), result("t4.0", "the call will end", false)},
			want: ""},
		{name: "an unknown tool's error",
			msgs: []agent.Message{agent.User("x"), bot("", call("t1.0", "lookup", `{}`)), result("t1.0", agent.ErrorContent(agent.KindTimeout, "lookup", ""), true)},
			want: lineToolFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tools := tt.tools
			if tools == nil {
				tools = allTools
			}
			msgs := tt.msgs
			if tt.system != "" {
				msgs = append([]agent.Message{agent.System(tt.system)}, msgs...)
			}
			if tt.msgs == nil {
				msgs = []agent.Message{agent.System("You are a host.")}
			}
			req := &providers.Request{Messages: msgs, Tools: tools}
			if got := describeResponse(newConversation(req).respond()); got != tt.want {
				t.Errorf("answer\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestTimes: the time expressions a recognizer writes.
func TestTimes(t *testing.T) {
	tests := []struct {
		text string
		bare bool
		want string // "" for none
	}{
		{"at seven", false, "19:00"},
		{"seven pm", false, "19:00"},
		{"seven p m", false, "19:00"},
		{"7pm", false, "19:00"},
		{"7 a.m.", false, "07:00"},
		{"seven oclock", false, "19:00"},
		{"seven o clock in the morning", false, "07:00"},
		{"at half past seven", false, "19:30"},
		{"quarter to eight", false, "19:45"},
		{"quarter past twelve", false, "12:15"},
		{"twenty past seven", false, "19:20"},
		{"at seven oh five", false, "19:05"},
		{"at seven forty five", false, "19:45"},
		{"at 19:30", false, "19:30"},
		{"at noon", false, "12:00"},
		{"at midnight", false, "00:00"},
		{"twelve am", false, "00:00"},
		{"at eleven", false, "11:00"},
		{"at twenty one", false, "21:00"},
		{"seven thirty", false, "19:30"},
		// Catches a bare count read as a time.
		{"seven", false, ""},
		{"seven", true, "19:00"},
		{"four people", true, ""},
		{"at 25", false, ""},
		{"at thirteen pm", false, "13:00"},
		{"at seven 99", false, "19:00"},
		{"thirteen am", false, ""},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/bare=%v", tt.text, tt.bare), func(t *testing.T) {
			c, ok := timeOf(normalize(tt.text), tt.bare)
			got := ""
			if ok {
				got = c.String()
			}
			if got != tt.want {
				t.Errorf("time %q, want %q", got, tt.want)
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"That's all, THANKS!", "thats all thanks"},
		{"7:30pm", "7:30 pm"},
		{"o'clock", "oclock"},
		{"a.m.", "a m"},
		{"19:", "19"},
		{"", ""},
		{"é à", "é à"},
	}
	for _, tt := range tests {
		if got := strings.Join(normalize(tt.in), " "); got != tt.want {
			t.Errorf("normalize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSpoken(t *testing.T) {
	tests := []struct {
		c    clock
		want string
	}{
		{clock{19, 0}, "seven PM"}, {clock{19, 30}, "seven thirty PM"}, {clock{7, 5}, "seven oh five AM"},
		{clock{12, 0}, "twelve PM"}, {clock{0, 0}, "twelve AM"}, {clock{23, 59}, "eleven fifty nine PM"},
	}
	for _, tt := range tests {
		if got := tt.c.spoken(); got != tt.want {
			t.Errorf("%v spoken %q, want %q", tt.c, got, tt.want)
		}
	}
}

// FuzzRespond: any text of the caller, and any tool result, gets an answer
// without a panic, and every call's arguments are valid JSON.
func FuzzRespond(f *testing.F) {
	f.Add("book a table for four at seven", "sam", `{"time":"2026-12-01T15:04:05+01:00"}`)
	f.Add("what time is it", "yes please", `booked: table for 4 at 19:00 under Sam, reference B-0001`)
	f.Add("at half past", "quarter to", `{"status":"confirmation_required","call_id":""}`)
	f.Add("for for for", "under under", "reference ")
	f.Add("7:", "twenty past", `{"time":"x"}`)
	f.Fuzz(func(t *testing.T, first, second, res string) {
		bookCall := call("t2.0", toolBookTable, sam4at7)
		for _, msgs := range [][]agent.Message{
			{agent.User(first), bot("Under what name?"), agent.User(second)},
			{agent.User(first), bot("", bookCall), result("t2.0", res, false), bot("Shall I?"), agent.User(second)},
			{agent.User(first), bot("", bookCall, call("t2.1", toolGetTime, second), call("t2.2", agent.ConfirmPendingTool, res)),
				result("t2.0", res, false), result("t2.1", res, true), result("t2.2", res, false)},
		} {
			r := newConversation(&providers.Request{Messages: msgs, Tools: allTools}).respond()
			for _, c := range r.calls {
				if !json.Valid([]byte(c.args)) {
					t.Fatalf("call %s args %q are not JSON", c.name, c.args)
				}
			}
		}
	})
}
