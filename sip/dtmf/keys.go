package dtmf

// eventKeys maps the RFC 4733 DTMF event codes 0-15 to their keys; codes
// from 16 on (flash, tones) are not keys.
const eventKeys = "0123456789*#ABCD"

// keyOfEvent is the key of event code e, and whether it is one.
func keyOfEvent(e int) (byte, bool) {
	if e < 0 || e >= len(eventKeys) {
		return 0, false
	}
	return eventKeys[e], true
}
