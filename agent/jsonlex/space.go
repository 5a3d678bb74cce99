package jsonlex

// SkipSpace returns the index of the first byte at or after i that is not
// JSON white space (space, tab, newline, carriage return), or len(d).
func SkipSpace(d []byte, i int) int {
	for i < len(d) {
		if d[i] > ' ' {
			return i // the common case, compact JSON: one comparison
		}
		switch d[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}
