package rules

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers"
)

// The names of the tools the provider calls.
const (
	toolGetTime   = "get_time"
	toolBookTable = "book_table"
)

// The fixed lines.
const (
	lineHelp          = "I can tell you the time or book a table."
	lineGreeting      = "Hello! I can tell you the time or book a table. How can I help?"
	lineGoodbye       = "Thank you for calling. Goodbye!"
	lineNoTime        = "Sorry, I cannot tell the time on this line."
	lineNoBooking     = "Sorry, I cannot book tables on this line."
	lineNoConfirm     = "Sorry, I cannot confirm bookings on this line."
	lineDeclined      = "Okay, I have cancelled it. Nothing is booked."
	lineAskParty      = "Sure. For how many people?"
	lineBadParty      = "I can book for one to twenty people. For how many people?"
	lineReask         = "Sorry, I did not catch that."
	lineShallI        = "Shall I book it?"
	lineBookFailed    = "Sorry, I could not book the table. Nothing was booked."
	lineConfirmFailed = "Sorry, I could not confirm the booking, so nothing was booked. Please ask me again."
	lineTimeFailed    = "Sorry, I could not get the time."
	lineToolFailed    = "Sorry, that did not work."
	lineToolDone      = "Done."
)

// outCall is a tool call of a response.
type outCall struct {
	name, args string
}

// response is what the provider answers to a request.
type response struct {
	text  string
	calls []outCall
}

// conversation is a request read once: the calls of the assistant
// messages by id, the offered tools, the count of calls so far (for the
// ids of new ones).
type conversation struct {
	msgs    []agent.Message
	calls   map[string]messages.ToolCall
	ncalls  int
	offered map[string]providers.ToolDef
}

func newConversation(req *providers.Request) *conversation {
	c := &conversation{msgs: req.Messages, calls: map[string]messages.ToolCall{}, offered: map[string]providers.ToolDef{}}
	for _, m := range req.Messages {
		for _, call := range m.ToolCalls {
			c.calls[call.ID] = call
			c.ncalls++
		}
	}
	for _, t := range req.Tools {
		c.offered[t.Name] = t
	}
	return c
}

// respond decides the answer to the request. It reads nothing but the
// request.
func (c *conversation) respond() response {
	n := len(c.msgs)
	if n == 0 {
		return response{text: lineGreeting}
	}
	switch last := c.msgs[n-1]; last.Role {
	case agent.RoleTool:
		first := n - 1
		for first > 0 && c.msgs[first-1].Role == agent.RoleTool {
			first--
		}
		return c.answerResults(c.msgs[first:])
	case agent.RoleUser:
		st := c.replay(c.msgs[:n-1])
		return c.answer(classify(normalize(last.Text), st), st)
	case agent.RoleSystem:
		return response{text: lineGreeting}
	}
	return response{} // the last word is the assistant's: nothing to add
}

// replay reads the conversation before a caller's turn: each user turn is
// classified as it was when it came, so the booking's slots are recovered
// from the history, and a booking held in the bot's last turn is pending.
func (c *conversation) replay(msgs []agent.Message) state {
	var st state
	for _, m := range msgs {
		switch m.Role {
		case agent.RoleUser:
			d := classify(normalize(m.Text), st)
			st.pending = "" // the caller has replied
			st.dialog = nil
			if d.intent == intentBooking && d.booking.missing() != slotNone {
				b := d.booking
				st.dialog = &b
			}
		case agent.RoleTool:
			if id, ok := heldID(m); ok {
				st.pending = id
			}
		}
	}
	return st
}

// heldID reads a held request's call_id from a confirmation_required
// result.
func heldID(m agent.Message) (string, bool) {
	if m.IsError || !strings.Contains(m.Text, "confirmation_required") {
		return "", false
	}
	var r struct {
		Status string `json:"status"`
		CallID string `json:"call_id"`
	}
	if json.Unmarshal([]byte(m.Text), &r) != nil || r.Status != "confirmation_required" || r.CallID == "" {
		return "", false
	}
	return r.CallID, true
}

// has tells whether the request offers the tool.
func (c *conversation) has(tool string) bool {
	_, ok := c.offered[tool]
	return ok
}

// answer is the response to a caller's turn.
func (c *conversation) answer(d decision, st state) response {
	switch d.intent {
	case intentConfirm:
		if !c.has(agent.ConfirmPendingTool) {
			return response{text: lineNoConfirm}
		}
		return response{calls: []outCall{{agent.ConfirmPendingTool, marshal(struct {
			CallID string `json:"call_id"`
		}{st.pending})}}}
	case intentDecline:
		return response{text: lineDeclined}
	case intentGoodbye:
		r := response{text: lineGoodbye}
		if c.has(agent.EndCallTool) {
			r.calls = []outCall{{agent.EndCallTool, `{"reason":"the caller said goodbye"}`}}
		}
		return r
	case intentBooking:
		return c.bookingStep(d.booking)
	case intentTime:
		if !c.has(toolGetTime) {
			return response{text: lineNoTime}
		}
		args := "{}"
		if takesTimezone(c.offered[toolGetTime]) {
			args = marshal(struct {
				Timezone string `json:"timezone"`
			}{c.zone()})
		}
		return response{calls: []outCall{{toolGetTime, args}}}
	case intentGreeting:
		return response{text: lineGreeting}
	}
	return response{text: lineHelp}
}

// bookingStep asks for the next missing slot, or books.
func (c *conversation) bookingStep(b booking) response {
	var q string
	switch b.missing() {
	case slotParty:
		q = lineAskParty
		if b.badParty {
			q = lineBadParty
		} else if b.reask {
			q = "For how many people?"
		}
	case slotTime:
		q = "A table for " + numberWords(b.party) + ". At what time?"
		if b.reask {
			q = "At what time?"
		}
	case slotName:
		q = "A table for " + numberWords(b.party) + " at " + b.at.spoken() + ". Under what name?"
		if b.reask {
			q = "Under what name?"
		}
	default:
		if !c.has(toolBookTable) {
			return response{text: lineNoBooking}
		}
		return response{calls: []outCall{{toolBookTable, marshal(bookArgs{b.party, b.at.String(), b.name})}}}
	}
	if b.reask {
		q = lineReask + " " + q
	}
	return response{text: q}
}

// bookArgs are book_table's arguments.
type bookArgs struct {
	PartySize int    `json:"party_size"`
	Time      string `json:"time"`
	Name      string `json:"name"`
}

// describe reads a booking back: "a table for four at seven PM under Sam".
func (a bookArgs) describe() string {
	s := "a table for " + numberWords(a.PartySize)
	if c, ok := parseHHMM(a.Time); ok {
		s += " at " + c.spoken()
	}
	if a.Name != "" {
		s += " under " + a.Name
	}
	return s
}

// bookingOf reads the arguments of a book_table call.
func bookingOf(call messages.ToolCall) (bookArgs, bool) {
	var a bookArgs
	if call.Name != toolBookTable || json.Unmarshal(call.Arguments, &a) != nil || a.PartySize == 0 {
		return bookArgs{}, false
	}
	return a, true
}

// answerResults answers the tool results that end the request.
func (c *conversation) answerResults(results []agent.Message) response {
	var lines []string
	for _, m := range results {
		call := c.calls[m.ToolCallID]
		if line := c.answerResult(call, m); line != "" {
			lines = append(lines, line)
		}
	}
	return response{text: strings.Join(lines, " ")}
}

// answerResult is the line that answers one result ("" for none).
func (c *conversation) answerResult(call messages.ToolCall, m agent.Message) string {
	switch call.Name {
	case agent.EndCallTool:
		return ""
	case toolGetTime:
		if m.IsError {
			return lineTimeFailed
		}
		if s, ok := sayTime(m.Text); ok {
			return s
		}
		return lineTimeFailed
	case toolBookTable:
		if _, held := heldID(m); held {
			if a, ok := bookingOf(call); ok {
				return capitalize(a.describe()) + ". " + lineShallI
			}
			return lineShallI
		}
		if m.IsError {
			return lineBookFailed
		}
		a, _ := bookingOf(call)
		return done(a, m.Text)
	case agent.ConfirmPendingTool:
		if m.IsError {
			return lineConfirmFailed
		}
		var target struct {
			CallID string `json:"call_id"`
		}
		_ = json.Unmarshal(call.Arguments, &target)
		a, _ := bookingOf(c.calls[target.CallID])
		return done(a, m.Text)
	}
	if m.IsError {
		return lineToolFailed
	}
	return lineToolDone
}

// done is the line of a booking made: "Done, your table for four at seven
// PM is booked. Your reference is B zero zero zero one."
func done(a bookArgs, result string) string {
	s := "Done, your table is booked."
	if a.PartySize > 0 {
		d := a
		d.Name = ""
		s = "Done, your " + strings.TrimPrefix(d.describe(), "a ") + " is booked."
	}
	if _, ref, ok := strings.Cut(result, "reference "); ok {
		if f := strings.Fields(ref); len(f) > 0 {
			if sp := spellOut(f[0]); sp != "" {
				s += " Your reference is " + sp + "."
			}
		}
	}
	return s
}

// sayTime reads get_time's result ({"time": RFC 3339}, or a bare "15:04")
// and says it: "It's three oh four PM." (with "in UTC" for UTC).
func sayTime(result string) (string, bool) {
	var r struct {
		Time string `json:"time"`
	}
	if json.Unmarshal([]byte(result), &r) == nil && r.Time != "" {
		t, err := time.Parse(time.RFC3339, r.Time)
		if err != nil {
			return "", false
		}
		s := "It's " + clock{t.Hour(), t.Minute()}.spoken()
		if strings.HasSuffix(r.Time, "Z") {
			s += " in UTC"
		}
		return s + ".", true
	}
	if c, ok := parseHHMM(strings.TrimSpace(result)); ok {
		return "It's " + c.spoken() + ".", true
	}
	return "", false
}

// takesTimezone tells whether get_time's schema has a timezone property.
func takesTimezone(t providers.ToolDef) bool {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(t.Parameters, &s) != nil {
		return false
	}
	_, ok := s.Properties["timezone"]
	return ok
}

// zone is the first IANA zone name ("Europe/Paris") in a system message,
// or UTC.
func (c *conversation) zone() string {
	for _, m := range c.msgs {
		if m.Role != agent.RoleSystem {
			continue
		}
		for _, f := range strings.Fields(m.Text) {
			if z := strings.Trim(f, ".,;:()[]\"'`"); isZoneName(z) {
				return z
			}
		}
	}
	return "UTC"
}

// isZoneName tells whether s looks like an IANA name: Area/Location, each
// part starting with a capital, letters, '_', '-' or '+' after it.
func isZoneName(s string) bool {
	parts := strings.Split(s, "/")
	if len(parts) < 2 || len(s) > 64 {
		return false
	}
	for _, p := range parts {
		if p == "" || p[0] < 'A' || p[0] > 'Z' {
			return false
		}
		for _, r := range p {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '_' || r == '-' || r == '+' || r >= '0' && r <= '9') {
				return false
			}
		}
	}
	return true
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// marshal encodes v (plain structs of strings and ints: it cannot fail).
func marshal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "{}"
	}
	return string(b)
}

// callID is the id of the i-th call of a response to a request that holds
// n calls already: "rules-<n+i+1>".
func callID(n, i int) string { return "rules-" + strconv.Itoa(n+i+1) }
