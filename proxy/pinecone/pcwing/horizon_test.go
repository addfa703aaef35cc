package pcwing

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/connector"
)

// TestHorizon_PurgeAndDeclaredBackups: the provider's purge is dated 90
// days after the delete with Pinecone's statement and its source; each
// index with rules states its backups from its declared retention, or
// unknown naming the setting; an index without rules states none.
func TestHorizon_PurgeAndDeclaredBackups(t *testing.T) {
	deleted := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	rules := []config.NamespaceRule{{Namespace: "*"}}
	hs := pineconeHorizons([]config.PineconeIndex{
		{Name: "docs", Namespaces: rules},
		{Name: "chat", Namespaces: rules, Retention: config.PineconeRetention{Backups: config.Kept{Declared: true, Period: 7 * 24 * time.Hour}}},
		{Name: "relayed"},
	}, deleted)
	require.Len(t, hs, 3)
	require.Equal(t, "provider_purge", hs[0].Copy)
	require.Equal(t, connector.HorizonDated, hs[0].Status)
	require.Equal(t, time.Date(2027, 3, 6, 10, 0, 0, 0, time.UTC), hs[0].Until)
	require.Contains(t, hs[0].Basis, "https://docs.pinecone.io/guides/operations/data-deletion")
	require.Equal(t, connector.HorizonUnknown, hs[1].Status)
	require.Contains(t, hs[1].Basis, "index docs: not declared: set pinecone.indexes[].retention.backups")
	require.Equal(t, connector.HorizonDated, hs[2].Status)
	require.Equal(t, deleted.Add(7*24*time.Hour), hs[2].Until)
}
