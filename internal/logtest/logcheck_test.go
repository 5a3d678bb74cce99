package logtest

import (
	"errors"
	"testing"
)

// TestCheck: the defect it guards is issue 14's "webrtc call ended" line
// with call_id twice. Mutation caught: the seen map not consulted (a
// duplicate passes), nested objects not walked.
func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		keep func([]byte) bool
		want error
	}{
		{name: "good", in: "{\"a\":1,\"b\":{\"c\":[1,{\"d\":2}]}}\n\n{\"a\":\"x\"}\n"},
		{name: "duplicate", in: `{"call_id":"a","error":"x","call_id":"a"}`, want: ErrDuplicateKey},
		{name: "nested duplicate", in: `{"a":{"b":1,"b":2}}`, want: ErrDuplicateKey},
		{name: "in an array", in: `{"a":[{"b":1,"b":2}]}`, want: ErrDuplicateKey},
		{name: "same key at two depths", in: `{"a":{"a":1}}`},
		{name: "not json", in: "brisvox serve: oops", want: ErrNotJSON},
		{name: "plain text skipped", in: "brisvox serve: oops\n{\"a\":1}", keep: JSONLines},
		{name: "two objects on a line", in: `{"a":1}{"b":2}`, want: ErrNotJSON},
		{name: "an array", in: `[1]`, want: ErrNotJSON},
		{name: "truncated", in: `{"a":`, want: ErrNotJSON},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Check([]byte(tc.in), tc.keep)
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Fatalf("Check = %v, want %v", err, tc.want)
			}
		})
	}
}

func FuzzCheck(f *testing.F) {
	f.Add([]byte(`{"a":1,"a":2}`))
	f.Add([]byte(`{"a":{"b":[1,2,{"c":null}]}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		_ = Check(in, nil) // must not panic or hang
	})
}
