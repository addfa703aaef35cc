package adminclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/lethe-privacy/lethe/engine"
)

// PrintAnswer prints the JSON answer of a forget subcommand (preview,
// confirm, status, reverify, lift) indented on stdout and, for preview and
// confirm, the next step on stderr; for status, the open horizons of a
// completed request.
func PrintAnswer(subcommand string, body []byte, stdout, stderr io.Writer) {
	printIndented(stdout, body)
	switch subcommand {
	case "preview":
		var pv struct {
			NothingFound bool   `json:"nothing_found"`
			Warning      string `json:"warning"`
		}
		if json.Unmarshal(body, &pv) == nil && pv.NothingFound {
			// The warning holds counts only, never the subject.
			fmt.Fprintf(stderr, "WARNING: %s\n", pv.Warning)
			fmt.Fprintln(stderr, "To certify that nothing was found, run `lethe-proxy forget confirm --token CONFIRM_TOKEN --nothing-found` with the same subject on stdin.")
			return
		}
		fmt.Fprintln(stderr, "To go ahead, run `lethe-proxy forget confirm --token CONFIRM_TOKEN` with the same subject on stdin.")
	case "status":
		var st engine.Status
		if json.Unmarshal(body, &st) == nil {
			PrintOpenHorizons(st, stderr)
		}
	case "confirm":
		fmt.Fprintln(stderr, "Give subject_secret to the data subject: it is not stored anywhere. Follow the request with `lethe-proxy forget status REQUEST_ID`.")
	}
}

// printIndented prints body indented when it is JSON, as it is otherwise.
func printIndented(w io.Writer, body []byte) {
	var b bytes.Buffer
	if json.Indent(&b, body, "", "  ") != nil {
		w.Write(body)
		return
	}
	b.WriteByte('\n')
	w.Write(b.Bytes())
}
