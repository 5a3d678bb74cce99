package stock

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/brisvox/brisvox/agent"
)

// BookTableTool is the name the model calls book_table by.
const BookTableTool = "book_table"

// Bounds of a booking; the schema says the same (a test holds them
// equal).
const (
	MinPartySize    = 1
	MaxPartySize    = 20
	MaxBookingRunes = 40
)

// Booking is one table booked.
type Booking struct {
	// Reference is what the caller quotes: B-0001, B-0002, ...
	Reference string
	PartySize int
	// Time is HH:MM, 24 h.
	Time string
	Name string
}

// BookingStore keeps bookings in memory, keyed by the idempotency key of
// the call that made them. Safe for concurrent use: one store serves every
// call of the application. A real application keeps its bookings in its
// database, with a unique constraint on the key doing what Book does here.
type BookingStore struct {
	mu       sync.Mutex
	byKey    map[agent.IdempotencyKey]int // key -> index in bookings
	bookings []Booking
}

// NewBookingStore makes an empty store.
func NewBookingStore() *BookingStore {
	return &BookingStore{byKey: make(map[agent.IdempotencyKey]int)}
}

// Book records b under key and returns it with its reference. A second
// Book with the same key and details returns the first booking and booked
// false; with other details, an error wrapping ErrBookingKeyReused. The
// zero key is refused (ErrNoIdempotencyKey).
func (s *BookingStore) Book(key agent.IdempotencyKey, b Booking) (_ Booking, booked bool, _ error) {
	if key == (agent.IdempotencyKey{}) {
		return Booking{}, false, ErrNoIdempotencyKey
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.byKey[key]; ok {
		got := s.bookings[i]
		if got.PartySize != b.PartySize || got.Time != b.Time || got.Name != b.Name {
			return Booking{}, false, ErrBookingKeyReused
		}
		return got, false, nil
	}
	if s.byKey == nil {
		s.byKey = make(map[agent.IdempotencyKey]int)
	}
	b.Reference = fmt.Sprintf("B-%04d", len(s.bookings)+1)
	s.byKey[key] = len(s.bookings)
	s.bookings = append(s.bookings, b)
	return b, true, nil
}

// Bookings returns the bookings in the order they were made.
func (s *BookingStore) Bookings() []Booking {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Booking(nil), s.bookings...)
}

// bookTableParameters: the bounds are MinPartySize, MaxPartySize and
// MaxBookingRunes; the time pattern is anchored (JSON Schema patterns are
// not).
const bookTableParameters = `{"type":"object","properties":{` +
	`"party_size":{"type":"integer","minimum":1,"maximum":20,"description":"How many people, 1 to 20."},` +
	`"time":{"type":"string","pattern":"^([01][0-9]|2[0-3]):[0-5][0-9]$","description":"Today's time of the booking, HH:MM on a 24-hour clock, like 19:30."},` +
	`"name":{"type":"string","minLength":1,"maxLength":40,"description":"The name the table is booked under."}},` +
	`"required":["party_size","time","name"],"additionalProperties":false}`

// BookTable returns the book_table tool: book_table(party_size, time,
// name) books a table in store and answers "booked: table for 4 at 19:00
// under Sam, reference B-0001". It is SideEffect and behind the
// confirmation gate (Confirm): the engine holds the model's call until
// the caller agreed in a later turn. It is keyed on
// CallInfo.IdempotencyKey: a redelivered call books once and answers the
// same reference.
func BookTable(store *BookingStore) agent.Tool {
	spec := agent.NewSpec(BookTableTool,
		"Books a table for today. Ask the caller for the party size, the time and a name first; the caller is asked to confirm before it is booked.",
		agent.SideEffect)
	spec.Parameters = json.RawMessage(bookTableParameters)
	spec.Confirm = true
	return &bookTable{spec: spec, store: store}
}

type bookTable struct {
	spec  agent.Spec
	store *BookingStore
}

var _ agent.Tool = (*bookTable)(nil)

func (t *bookTable) Spec() agent.Spec { return t.spec }

func (t *bookTable) Call(ctx context.Context, args json.RawMessage, call agent.CallInfo) (agent.Output, error) {
	var a struct {
		PartySize int    `json:"party_size"`
		Time      string `json:"time"`
		Name      string `json:"name"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return agent.Output{}, fmt.Errorf("the arguments are not {\"party_size\": integer, \"time\": string, \"name\": string}: %v", err)
	}
	// The schema checks these already; a tool called directly checks too.
	if a.PartySize < MinPartySize || a.PartySize > MaxPartySize {
		return agent.Output{}, fmt.Errorf("%w: party of %d, want %d to %d: ask the caller again", ErrInvalidBooking, a.PartySize, MinPartySize, MaxPartySize)
	}
	if !validHHMM(a.Time) {
		return agent.Output{}, fmt.Errorf("%w: the time is not HH:MM on a 24-hour clock: ask the caller again", ErrInvalidBooking)
	}
	if n := utf8.RuneCountInString(a.Name); n == 0 || n > MaxBookingRunes || strings.TrimSpace(a.Name) == "" {
		return agent.Output{}, fmt.Errorf("%w: the name has %d characters, want 1 to %d: ask the caller again", ErrInvalidBooking, n, MaxBookingRunes)
	}
	// Nothing is booked for a call already given up on.
	if err := ctx.Err(); err != nil {
		return agent.Output{}, err
	}
	b, _, err := t.store.Book(call.IdempotencyKey, Booking{PartySize: a.PartySize, Time: a.Time, Name: a.Name})
	if err != nil {
		return agent.Output{}, fmt.Errorf("%w: nothing was booked: tell the caller", err)
	}
	return agent.Output{
		Content: fmt.Sprintf("booked: table for %d at %s under %s, reference %s", b.PartySize, b.Time, b.Name, b.Reference),
		Summary: fmt.Sprintf("table for %d at %s, reference %s", b.PartySize, b.Time, b.Reference),
	}, nil
}

// validHHMM is the schema's pattern ^([01][0-9]|2[0-3]):[0-5][0-9]$.
func validHHMM(s string) bool {
	if len(s) != 5 || s[2] != ':' {
		return false
	}
	for _, i := range []int{0, 1, 3, 4} {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return (s[0] < '2' || (s[0] == '2' && s[1] <= '3')) && s[3] <= '5'
}
