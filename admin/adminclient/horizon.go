package adminclient

import (
	"fmt"
	"io"
	"time"

	"github.com/lethe-privacy/lethe/engine"
	"github.com/lethe-privacy/lethe/ledger"
)

// PrintOpenHorizons says, one line per kind of copy, which copies of a
// completed forget's deleted records are still expected to exist (the
// status's open_horizons: dated after now, conditional or unknown), or
// that none is; nothing for a request not completed.
func PrintOpenHorizons(st engine.Status, w io.Writer) {
	if st.Status != ledger.ForgetCompleted {
		return
	}
	if len(st.OpenHorizons) == 0 {
		fmt.Fprintln(w, "open horizons: none (every copy the certificate dates is past its date, or it states none)")
		return
	}
	fmt.Fprintln(w, "open horizons (copies of the deleted records still expected to exist):")
	for _, h := range st.OpenHorizons {
		when := h.Status
		if h.Status == "dated" {
			when = "until " + h.Until.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(w, "  %s %s: %s: %s\n", h.Store, h.Copy, when, h.Basis)
	}
}
