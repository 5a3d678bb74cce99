package stock_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/agent/stock"
	"github.com/brisvox/brisvox/messages"
)

// bookingDelivery is one delivery of a book_table call.
type bookingDelivery struct {
	session, callID string // make the idempotency key; none when session is ""
	args            string
	want            string // the result, for a success
	wantKind        string // for an error result
	wantDetail      string // substring of the error's detail
}

func TestBookTable(t *testing.T) {
	const sam = `{"party_size":4,"time":"19:00","name":"Sam"}`
	tests := []struct {
		name       string
		deliveries []bookingDelivery
		want       []string // the bookings, "4 19:00 Sam B-0001"
	}{
		{
			name:       "a booking",
			deliveries: []bookingDelivery{{session: "s1", callID: "t1.0", args: sam, want: "booked: table for 4 at 19:00 under Sam, reference B-0001"}},
			want:       []string{"4 19:00 Sam B-0001"},
		},
		{
			// Catches a store that books again on a redelivery.
			name: "a redelivered call books once",
			deliveries: []bookingDelivery{
				{session: "s1", callID: "t1.0", args: sam, want: "booked: table for 4 at 19:00 under Sam, reference B-0001"},
				{session: "s1", callID: "t1.0", args: sam, want: "booked: table for 4 at 19:00 under Sam, reference B-0001"},
			},
			want: []string{"4 19:00 Sam B-0001"},
		},
		{
			name: "two calls book twice",
			deliveries: []bookingDelivery{
				{session: "s1", callID: "t1.0", args: sam, want: "booked: table for 4 at 19:00 under Sam, reference B-0001"},
				{session: "s1", callID: "t2.0", args: `{"party_size":2,"time":"12:30","name":"Jo Ann"}`, want: "booked: table for 2 at 12:30 under Jo Ann, reference B-0002"},
			},
			want: []string{"4 19:00 Sam B-0001", "2 12:30 Jo Ann B-0002"},
		},
		{
			name: "a key reused with other details books nothing",
			deliveries: []bookingDelivery{
				{session: "s1", callID: "t1.0", args: sam, want: "booked: table for 4 at 19:00 under Sam, reference B-0001"},
				{session: "s1", callID: "t1.0", args: `{"party_size":5,"time":"19:00","name":"Sam"}`, wantKind: agent.KindToolFailed, wantDetail: "another booking"},
			},
			want: []string{"4 19:00 Sam B-0001"},
		},
		{
			// Catches the zero key treated as a key.
			name:       "no idempotency key books nothing",
			deliveries: []bookingDelivery{{args: sam, wantKind: agent.KindToolFailed, wantDetail: "no idempotency key"}},
		},
		{name: "party of 0", deliveries: []bookingDelivery{{session: "s1", callID: "t1.0", args: `{"party_size":0,"time":"19:00","name":"Sam"}`, wantKind: agent.KindInvalidArguments}}},
		{name: "party of 21", deliveries: []bookingDelivery{{session: "s1", callID: "t1.0", args: `{"party_size":21,"time":"19:00","name":"Sam"}`, wantKind: agent.KindInvalidArguments}}},
		{name: "party of 20", deliveries: []bookingDelivery{{session: "s1", callID: "t1.0", args: `{"party_size":20,"time":"23:59","name":"Sam"}`, want: "booked: table for 20 at 23:59 under Sam, reference B-0001"}},
			want: []string{"20 23:59 Sam B-0001"}},
		{name: "a fractional party", deliveries: []bookingDelivery{{session: "s1", callID: "t1.0", args: `{"party_size":2.5,"time":"19:00","name":"Sam"}`, wantKind: agent.KindInvalidArguments}}},
		{name: "time 7pm", deliveries: []bookingDelivery{{session: "s1", callID: "t1.0", args: `{"party_size":2,"time":"7pm","name":"Sam"}`, wantKind: agent.KindInvalidArguments}}},
		{name: "time 24:00", deliveries: []bookingDelivery{{session: "s1", callID: "t1.0", args: `{"party_size":2,"time":"24:00","name":"Sam"}`, wantKind: agent.KindInvalidArguments}}},
		// Catches an unanchored time pattern.
		{name: "time with a suffix", deliveries: []bookingDelivery{{session: "s1", callID: "t1.0", args: `{"party_size":2,"time":"19:00 tonight","name":"Sam"}`, wantKind: agent.KindInvalidArguments}}},
		{name: "empty name", deliveries: []bookingDelivery{{session: "s1", callID: "t1.0", args: `{"party_size":2,"time":"19:00","name":""}`, wantKind: agent.KindInvalidArguments}}},
		{name: "41 characters", deliveries: []bookingDelivery{{session: "s1", callID: "t1.0", args: `{"party_size":2,"time":"19:00","name":"` + strings.Repeat("é", 41) + `"}`, wantKind: agent.KindInvalidArguments}}},
		{name: "missing name", deliveries: []bookingDelivery{{session: "s1", callID: "t1.0", args: `{"party_size":2,"time":"19:00"}`, wantKind: agent.KindInvalidArguments}}},
		{name: "an unknown argument", deliveries: []bookingDelivery{{session: "s1", callID: "t1.0", args: `{"party_size":2,"time":"19:00","name":"Sam","day":"friday"}`, wantKind: agent.KindInvalidArguments}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := stock.NewBookingStore()
			reg, err := agent.NewRegistry(stock.BookTable(store))
			if err != nil {
				t.Fatal(err)
			}
			for i, d := range tt.deliveries {
				call := messages.ToolCall{ID: d.callID, Name: stock.BookTableTool, Arguments: json.RawMessage(d.args)}
				info := agent.CallInfo{CallID: d.callID, Epoch: 1}
				if d.session != "" {
					info.IdempotencyKey = agent.IdempotencyKey{Session: d.session, Epoch: 1, CallID: d.callID}
				}
				r := agent.RunCall(context.Background(), reg, call, info)
				if d.wantKind != "" {
					b := decodeError(t, r)
					if b.Error != d.wantKind || !strings.Contains(b.Detail, d.wantDetail) {
						t.Errorf("delivery %d: error %q %q, want %q containing %q", i, b.Error, b.Detail, d.wantKind, d.wantDetail)
					}
					continue
				}
				if r.IsError || r.Content != d.want {
					t.Errorf("delivery %d: %s, want %s", i, r.Content, d.want)
				}
			}
			var got []string
			for _, b := range store.Bookings() {
				got = append(got, fmt.Sprintf("%d %s %s %s", b.PartySize, b.Time, b.Name, b.Reference))
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) || len(got) != len(tt.want) {
				t.Errorf("bookings %q, want %q", got, tt.want)
			}
		})
	}
}

// The tool checks its arguments when called directly (without the
// registry's schema check), with the same bounds.
func TestBookTableDirectCall(t *testing.T) {
	store := stock.NewBookingStore()
	tool := stock.BookTable(store)
	key := agent.CallInfo{IdempotencyKey: agent.IdempotencyKey{Session: "s", Epoch: 1, CallID: "t1.0"}}
	for _, args := range []string{
		`{"party_size":0,"time":"19:00","name":"Sam"}`,
		`{"party_size":21,"time":"19:00","name":"Sam"}`,
		`{"party_size":2,"time":"19:60","name":"Sam"}`,
		`{"party_size":2,"time":"9:00","name":"Sam"}`,
		`{"party_size":2,"time":"19:00","name":"   "}`,
		`{"party_size":2,"time":"19:00","name":"` + strings.Repeat("a", 41) + `"}`,
	} {
		if _, err := tool.Call(context.Background(), json.RawMessage(args), key); !errors.Is(err, stock.ErrInvalidBooking) {
			t.Errorf("%s: err %v, want ErrInvalidBooking", args, err)
		}
	}
	if _, err := tool.Call(context.Background(), json.RawMessage(`[]`), key); err == nil {
		t.Error("an array was taken for arguments")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := tool.Call(ctx, json.RawMessage(`{"party_size":2,"time":"19:00","name":"Sam"}`), key); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: err %v", err)
	}
	if n := len(store.Bookings()); n != 0 {
		t.Errorf("%d bookings made by refused calls", n)
	}
}

func TestBookTableSpec(t *testing.T) {
	spec := stock.BookTable(nil).Spec()
	if spec.Effect != agent.SideEffect || !spec.Confirm {
		t.Errorf("effect %v confirm %v, want side_effect behind the gate", spec.Effect, spec.Confirm)
	}
	// The schema's bounds and the constants must agree, or the tool would
	// refuse what the schema let through (or the other way round).
	var schema struct {
		Properties struct {
			PartySize struct{ Minimum, Maximum int } `json:"party_size"`
			Name      struct {
				MaxLength int `json:"maxLength"`
			} `json:"name"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(spec.Parameters, &schema); err != nil {
		t.Fatal(err)
	}
	p := schema.Properties
	if p.PartySize.Minimum != stock.MinPartySize || p.PartySize.Maximum != stock.MaxPartySize || p.Name.MaxLength != stock.MaxBookingRunes {
		t.Errorf("schema bounds %+v, constants %d..%d, %d", p, stock.MinPartySize, stock.MaxPartySize, stock.MaxBookingRunes)
	}
	reg, err := agent.NewRegistry(stock.BookTable(nil))
	if err != nil {
		t.Fatal(err)
	}
	// The gate offers confirm_pending with it.
	var names []string
	for _, s := range agent.OfferedSpecs(reg) {
		names = append(names, s.Name)
	}
	if fmt.Sprint(names) != "[book_table confirm_pending]" {
		t.Errorf("offered %v", names)
	}
}

// Catches a check-then-insert that is not one step: concurrent deliveries
// of one call would each book.
func TestBookingStoreConcurrentDeliveries(t *testing.T) {
	store := stock.NewBookingStore()
	key := agent.IdempotencyKey{Session: "s1", Epoch: 1, CallID: "t1.0"}
	var wg sync.WaitGroup
	refs := make([]string, 16)
	for i := range refs {
		wg.Go(func() {
			b, _, err := store.Book(key, stock.Booking{PartySize: 2, Time: "19:00", Name: "Sam"})
			if err != nil {
				t.Error(err)
			}
			refs[i] = b.Reference
		})
	}
	wg.Wait()
	if n := len(store.Bookings()); n != 1 {
		t.Fatalf("%d bookings for one call", n)
	}
	for i, r := range refs {
		if r != "B-0001" {
			t.Errorf("delivery %d answered %q", i, r)
		}
	}
}
