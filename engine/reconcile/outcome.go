package reconcile

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// Outcome is what a reconcile run reports (lethe-proxy reconcile's
// output): the counts per table, their sums, and with an adoption its
// signed report. It holds counts and request ids only.
type Outcome struct {
	Tables      []Count  `json:"tables"`
	Unknown     int64    `json:"unknown"`
	Adopted     int64    `json:"adopted"`
	Forgotten   int64    `json:"forgotten"`
	ForgottenBy []string `json:"forgotten_by"` // forget request ids, sorted
	RunID       string   `json:"run_id,omitempty"`
	Report      string   `json:"report,omitempty"` // the file the signed report was written to
}

// Summarize sums counts into an Outcome.
func Summarize(counts []Count) Outcome {
	o := Outcome{Tables: counts, ForgottenBy: []string{}}
	for _, c := range counts {
		o.Unknown += c.Unknown
		o.Adopted += c.Adopted
		o.Forgotten += c.Forgotten
		for _, id := range c.ForgottenBy {
			if !slices.Contains(o.ForgottenBy, id) {
				o.ForgottenBy = append(o.ForgottenBy, id)
			}
		}
	}
	slices.Sort(o.ForgottenBy)
	return o
}

// Clean reports whether every record is known or was adopted, and none
// names a forgotten subject.
func (o Outcome) Clean() bool {
	return o.Unknown <= o.Adopted && o.Forgotten == 0
}

// WriteJSON writes o as indented JSON and a newline.
func (o Outcome) WriteJSON(w io.Writer) {
	b, _ := json.MarshalIndent(o, "", "  ") // counts and strings: cannot fail
	fmt.Fprintf(w, "%s\n", b)
}

// WriteText writes o as a table and a sentence that says what to do next;
// adopt says whether the run was asked to adopt.
func (o Outcome) WriteText(w io.Writer, adopt bool) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STORE\tTABLE\tSCANNED\tKNOWN\tUNKNOWN\tUNREADABLE\tFORGOTTEN\tADOPTED")
	var absent []string
	for _, c := range o.Tables {
		if c.Absent {
			fmt.Fprintf(tw, "%s\t%s\t-\t-\t-\t-\t-\t-\n", c.Store, c.Table)
			absent = append(absent, c.Table)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\n", c.Store, c.Table, c.Scanned, c.Known, c.Unknown, c.Unreadable, c.Forgotten, c.Adopted)
	}
	tw.Flush()
	for _, t := range absent {
		fmt.Fprintf(w, "%s does not exist (yet): it holds nothing\n", t)
	}
	if o.Forgotten > 0 {
		fmt.Fprintf(w, "%d records name a subject already forgotten, written after the forget where nothing caught them; "+
			"they are not adopted: forget the subject of request %s again to delete them and certify it (docs/reconcile.md)\n",
			o.Forgotten, strings.Join(o.ForgottenBy, ", "))
	}
	switch {
	case o.Unknown == 0 && o.Forgotten == 0:
		fmt.Fprintln(w, "every record is known to the ledger")
	case o.Unknown > 0 && o.Adopted == o.Unknown:
		fmt.Fprintf(w, "adopted %d records into the ledger; signed report (run %s) written to %s and its reconcile.adopted event appended to the transparency log\n", o.Adopted, o.RunID, o.Report)
	case o.Unknown > 0 && !adopt:
		fmt.Fprintf(w, "%d records name a subject the ledger does not know under their id; run again with --adopt to record them (docs/reconcile.md)\n", o.Unknown)
	}
}
