package pcwing

import (
	"context"
	"fmt"
	"time"

	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/ledger"
)

// ProviderPurge is how long Pinecone keeps deleted data before it deletes
// it permanently: "Pinecone retains the data for a maximum of 90 days.
// During this period, the data is not accessible to you or any other
// user." (https://docs.pinecone.io/guides/operations/data-deletion).
const ProviderPurge = 90 * 24 * time.Hour

// providerPurgeBasis is the provider_purge horizon's basis, quoting the
// provider's statement and where it is.
const providerPurgeBasis = "Pinecone's own statement: after a deletion request it \"retains the data for a maximum of 90 days\", " +
	"not accessible to any user, and \"before the end of the 90-day retention window, Pinecone permanently deletes the data\" " +
	"(https://docs.pinecone.io/guides/operations/data-deletion); dated 90 days after the delete"

// horizon is the wing's connector.HorizonFunc: the provider's purge, and
// the backups of each index with namespace rules as pinecone.indexes[]
// .retention.backups declares them. It asks Pinecone nothing.
func (w *Wing) horizon(_ context.Context, deleted time.Time) []connector.Horizon {
	return pineconeHorizons(w.settings.Indexes, deleted)
}

func pineconeHorizons(indexes []config.PineconeIndex, deleted time.Time) []connector.Horizon {
	out := []connector.Horizon{{Store: ledger.StorePinecone, Copy: "provider_purge", Status: connector.HorizonDated,
		Until: deleted.Add(ProviderPurge), Basis: providerPurgeBasis}}
	for _, ix := range indexes {
		if len(ix.Namespaces) == 0 {
			continue // relayed only: forget deletes nothing there
		}
		h := connector.Horizon{Store: ledger.StorePinecone, Copy: "backups"}
		switch k := ix.Retention.Backups; {
		case !k.Declared:
			h.Status = connector.HorizonUnknown
			h.Basis = fmt.Sprintf("index %s: not declared: set pinecone.indexes[].retention.backups to how long its backups are kept, or none", ix.Name)
		case k.None:
			h.Status, h.Until = connector.HorizonDated, deleted
			h.Basis = fmt.Sprintf("index %s: declared none (pinecone.indexes[].retention.backups): no backup of it is kept", ix.Name)
		default:
			h.Status, h.Until = connector.HorizonDated, deleted.Add(k.Period)
			h.Basis = fmt.Sprintf("index %s: declared retention %s (pinecone.indexes[].retention.backups): the last backup that can hold the records was taken before the delete and is kept that long after it was taken", ix.Name, k.Period)
		}
		out = append(out, h)
	}
	return out
}
