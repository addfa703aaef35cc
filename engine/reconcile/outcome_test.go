package reconcile

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/ledger"
)

// Summarize sums the tables' counts and lists each forget request once,
// sorted; an outcome is clean only when nothing is left unknown and no
// record names a forgotten subject.
func TestSummarize_SumsAndListsEachForgetOnce(t *testing.T) {
	o := Summarize([]Count{
		{Store: ledger.StorePostgres, Table: "public.docs", Unknown: 2, Adopted: 2, Forgotten: 1, ForgottenBy: []string{"req-b"}},
		{Store: ledger.StorePinecone, Table: "docs/notes", Unknown: 1, Forgotten: 2, ForgottenBy: []string{"req-a", "req-b"}},
	})
	assert.Equal(t, int64(3), o.Unknown)
	assert.Equal(t, int64(2), o.Adopted)
	assert.Equal(t, int64(3), o.Forgotten)
	assert.Equal(t, []string{"req-a", "req-b"}, o.ForgottenBy)
	assert.False(t, o.Clean())
	assert.True(t, Summarize([]Count{{Unknown: 2, Adopted: 2}}).Clean())
	assert.False(t, Summarize([]Count{{Unknown: 2}}).Clean())
	assert.Equal(t, []string{}, Summarize(nil).ForgottenBy, "an empty list, not null, in JSON")
}

// The text says what to do next: adopt the unknown records, or nothing.
func TestOutcome_WriteTextSaysWhatToDoNext(t *testing.T) {
	for _, tc := range []struct {
		name   string
		counts []Count
		adopt  bool
		want   string
	}{
		{"all known", []Count{{Store: ledger.StorePostgres, Table: "public.docs", Scanned: 2, Known: 2}}, false,
			"every record is known to the ledger\n"},
		{"unknown", []Count{{Store: ledger.StorePostgres, Table: "public.docs", Scanned: 2, Unknown: 2}}, false,
			"2 records name a subject the ledger does not know under their id; run again with --adopt to record them (docs/reconcile.md)\n"},
		{"absent", []Count{{Store: ledger.StorePostgres, Table: "public.gone", Absent: true}}, false,
			"public.gone does not exist (yet): it holds nothing\nevery record is known to the ledger\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			Summarize(tc.counts).WriteText(&out, tc.adopt)
			assert.True(t, strings.HasPrefix(out.String(), "STORE "), out.String())
			assert.Contains(t, out.String(), tc.want)
		})
	}
	o := Summarize([]Count{{Store: ledger.StorePostgres, Table: "public.docs", Unknown: 4, Adopted: 4}})
	o.RunID, o.Report = "reconcile-1", "/tmp/r.json"
	var out bytes.Buffer
	o.WriteText(&out, true)
	assert.Contains(t, out.String(), "adopted 4 records into the ledger; signed report (run reconcile-1) written to /tmp/r.json")
}

// The JSON keys are the command's contract with scripts.
func TestOutcome_WriteJSONKeys(t *testing.T) {
	var out bytes.Buffer
	Summarize([]Count{{Store: ledger.StorePostgres, Table: "public.docs", Scanned: 1, Known: 1, Method: "scan"}}).WriteJSON(&out)
	var got map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &got))
	for _, k := range []string{"tables", "unknown", "adopted", "forgotten", "forgotten_by"} {
		assert.Contains(t, got, k)
	}
	assert.NotContains(t, got, "run_id", "only with an adoption")
	assert.Equal(t, byte('\n'), out.Bytes()[out.Len()-1])
}
