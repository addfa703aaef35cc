package retention

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// WriteText writes what the sweep found and did, a line of counts per
// table or namespace (lethe-proxy sweep's output); dryRun says the sweep
// only counted.
func (r Result) WriteText(w io.Writer, dryRun bool) {
	if dryRun {
		fmt.Fprintf(w, "dry run %s at %s: nothing was deleted\n", r.RunID, r.At.Format(time.RFC3339))
	} else {
		fmt.Fprintf(w, "sweep %s at %s\n", r.RunID, r.At.Format(time.RFC3339))
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STORE\tTABLE\tCUTOFF\tEXPIRED\tDELETED\tRESIDUAL\tKEPT (NO TIME)\tSTATUS")
	for _, l := range r.Layers {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\n", l.Store, l.Table, l.Cutoff.Format(time.RFC3339),
			l.Expired, l.Deleted, l.Residual, l.Unreadable, l.status(dryRun))
	}
	tw.Flush()
}

// status is a layer's last column: failed, left (expired records remain),
// counted (a dry run) or ok.
func (l Layer) status(dryRun bool) string {
	switch {
	case l.Err != nil:
		return "failed"
	case l.Residual > 0:
		return "left"
	case dryRun:
		return "counted"
	}
	return "ok"
}

// WriteWarnings writes, a line each beginning with prefix, why a layer's
// sweep stopped and how many of its records have no readable retain_by
// (kept: the sweep cannot tell their age).
func (r Result) WriteWarnings(w io.Writer, prefix string) {
	for _, l := range r.Layers {
		if l.Err != nil {
			fmt.Fprintf(w, "%s%s: %v\n", prefix, l.Table, l.Err)
		}
		if l.Unreadable > 0 {
			fmt.Fprintf(w, "%swarning: %s: %d records have no readable retain_by (NULL, or not a time) and are kept; fix them or delete them yourself\n", prefix, l.Table, l.Unreadable)
		}
	}
}
