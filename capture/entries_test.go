package capture

import (
	"fmt"
	"testing"

	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
)

// Every entry carries its own subject's hash, however the subjects of a
// write repeat: runs of one, a cycle the remembered hashes hold, and one
// longer than they hold.
func TestEntries_EachSubjectHashedAsItself(t *testing.T) {
	h := followHasher(t)
	c := New(Config{Hasher: h})
	defer c.Close()
	for _, distinct := range []int{1, 3, 8, 9, 20} {
		var tags []extract.Tag
		for i := range 60 {
			tags = append(tags, extract.Tag{Op: extract.OpWrite, Table: "ns", ID: fmt.Sprint(i),
				Subjects: []string{fmt.Sprintf("person-%d", i%distinct), fmt.Sprintf("person-%d", (i*7)%distinct)}})
		}
		got := c.entries(ledger.StorePinecone, tags)
		if len(got) != 120 {
			t.Fatalf("%d distinct: %d entries, want 120", distinct, len(got))
		}
		for i, e := range got {
			want := h.Hash(tags[i/2].Subjects[i%2])
			if e.Subject != want || e.RecordID != tags[i/2].ID {
				t.Fatalf("%d distinct: entry %d is record %s with another subject's hash", distinct, i, e.RecordID)
			}
		}
	}
}
