package realworld

import (
	"fmt"
	"strings"
	"text/tabwriter"
)

// HistoryTable prints a concurrent history with what the real World did:
// per batch, each call with its interval (microseconds from the batch's
// first invocation) and answer, then each run's read-back. marks, when not
// nil, adds a note to a call (indexed [batch][call]).
func HistoryTable(h History, results []BatchResult, marks map[[2]int]string) string {
	var b strings.Builder
	for bi, batch := range h.Batches {
		if bi >= len(results) {
			fmt.Fprintf(&b, "batch %d: not run\n", bi)
			continue
		}
		res := results[bi]
		start := int64(0)
		for i, r := range res.Replies {
			if i == 0 || r.T0 < start {
				start = r.T0
			}
		}
		fmt.Fprintf(&b, "batch %d (%d calls at once)\n", bi, len(batch.Calls))
		w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(w, "  #\tcall\tinvoked µs\tanswered µs\treal answer\t")
		for i, c := range batch.Calls {
			r := res.Replies[i]
			note := ""
			if m, ok := marks[[2]int{bi, i}]; ok {
				note = "  <-- " + m
			}
			ans := ReplyString(c, r)
			if r.Msg != "" && r.Res != "ok" {
				ans += " (" + firstLine(r.Msg, 60) + ")"
			}
			fmt.Fprintf(w, "  %d\t%s\t%.0f\t%.0f\t%s\t%s\n", i, c, float64(r.T0-start)/1e3, float64(r.T1-start)/1e3, ans, note)
		}
		w.Flush()
		for run, rb := range res.Readbacks {
			fmt.Fprintf(&b, "  read back r%d: %s\n", run, rb)
		}
	}
	return b.String()
}

func firstLine(s string, n int) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}
