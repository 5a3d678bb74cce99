// Package sipfrag parses the status line of a message/sipfrag body (RFC
// 3420), the body of the NOTIFYs that report a REFER's progress (RFC
// 3515 2.4.5): "SIP/2.0 200 OK", perhaps followed by headers, which are
// not read. Parse is bounded: it reads at most MaxLine bytes of the first
// line and never quotes the input in its errors.
package sipfrag
