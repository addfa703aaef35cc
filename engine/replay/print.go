package replay

import (
	"encoding/json"
	"fmt"
	"io"
)

// WriteText writes r as lethe-proxy replay prints it: per request what
// was done and each layer's counts, the file its signed report was
// written to (reportFiles, by request id), then the requests skipped and
// why.
func (r Result) WriteText(w io.Writer, reportFiles map[string]string) {
	verb := "replayed"
	if r.DryRun {
		verb = "dry run (nothing deleted or logged)"
	}
	if len(r.Requests) == 0 {
		fmt.Fprintln(w, "no completed forget to replay")
	}
	for _, q := range r.Requests {
		if q.Found() == 0 {
			fmt.Fprintf(w, "request %s: %s: nothing of the subject came back\n", q.RequestID, verb)
		} else {
			fmt.Fprintf(w, "request %s: %s\n", q.RequestID, verb)
		}
		for _, l := range q.Layers {
			fmt.Fprintf(w, "  %-8s %-32s found %d  deleted %d  residual %d\n", l.Store, l.Table, l.Found, l.Deleted, l.Residual)
		}
		if f, ok := reportFiles[q.RequestID]; ok {
			fmt.Fprintf(w, "  report %s: signed, transparency log index %d\n", f, q.LogIndex)
		}
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(w, "request %s: not replayed: %s\n", s.RequestID, s.Reason)
	}
}

// WriteJSON writes r as indented JSON, each request with the file its
// signed report was written to (report_file; reportFiles, by request id).
func (r Result) WriteJSON(w io.Writer, reportFiles map[string]string) {
	type request struct {
		Request
		ReportFile string `json:"report_file,omitempty"`
	}
	doc := struct {
		Result
		Requests []request `json:"requests"`
	}{Result: r}
	for _, q := range r.Requests {
		doc.Requests = append(doc.Requests, request{Request: q, ReportFile: reportFiles[q.RequestID]})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(doc) // counts and strings: cannot fail
}
