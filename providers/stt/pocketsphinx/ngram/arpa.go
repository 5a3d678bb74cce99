package ngram

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"io"
	"slices"
)

// WriteARPA writes the model in the ARPA text format: the \data\ counts,
// then each order's n-grams sorted by word (the vocabulary's order), one
// a line, "log10(p) words [log10(backoff)]", and \end\. sphinxbase's
// ngram_model_read reads it (NGRAM_ARPA).
func (m *Model) WriteARPA(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "\\data\\\n")
	for n, g := range m.grams {
		fmt.Fprintf(bw, "ngram %d=%d\n", n+1, len(g))
	}
	for n, g := range m.grams {
		fmt.Fprintf(bw, "\n\\%d-grams:\n", n+1)
		keys := make([]key, 0, len(g))
		for k := range g {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b key) int {
			for i := range n + 1 {
				if c := cmp.Compare(a[i], b[i]); c != 0 {
					return c
				}
			}
			return 0
		})
		for _, k := range keys {
			e := g[k]
			fmt.Fprintf(bw, "%.6f\t", e.logp)
			for i := range n + 1 {
				if i > 0 {
					bw.WriteByte(' ')
				}
				bw.WriteString(m.vocab[k[i]])
			}
			if e.hasBow {
				fmt.Fprintf(bw, "\t%.6f", e.bow)
			}
			bw.WriteByte('\n')
		}
	}
	fmt.Fprintf(bw, "\n\\end\\\n")
	return bw.Flush()
}

// ARPA is the model's ARPA text (WriteARPA into memory).
func (m *Model) ARPA() []byte {
	var b bytes.Buffer
	_ = m.WriteARPA(&b) // a bytes.Buffer does not fail
	return b.Bytes()
}
