package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"
)

func rulesOf(tables []TableRule, indexes []PineconeIndex) *Config {
	return &Config{Capture: Capture{Tables: tables}, Pinecone: Pinecone{Indexes: indexes}}
}

func TestRulesDigest_CoversPineconeRules(t *testing.T) {
	tables := []TableRule{{Table: "public.docs", ID: "id", Subjects: []string{"user_id"}}}
	b, _ := json.Marshal(tables)
	sum := sha256.Sum256(b)
	if got := rulesOf(tables, nil).RulesDigest(); got != hex.EncodeToString(sum[:]) {
		t.Fatal("without Pinecone the digest is the tables' alone, as before")
	}
	index := func(host, field string) []PineconeIndex {
		return []PineconeIndex{{Name: "docs", Host: host, Namespaces: []NamespaceRule{{Namespace: "*", Subjects: []string{field}}}}}
	}
	withPinecone := rulesOf(tables, index("https://a.pinecone.io", "user_id")).RulesDigest()
	if withPinecone == rulesOf(tables, nil).RulesDigest() {
		t.Fatal("Pinecone rules do not change the digest")
	}
	if rulesOf(tables, index("https://a.pinecone.io", "owner")).RulesDigest() == withPinecone {
		t.Fatal("another subject field gives the same digest")
	}
	if rulesOf(tables, index("https://b.pinecone.io", "user_id")).RulesDigest() != withPinecone {
		t.Fatal("the host is where the rules apply, not a rule: it must not change the digest")
	}
}

func TestRulesDigest_IgnoresDescriptions(t *testing.T) {
	tables := []TableRule{{Table: "public.docs", ID: "id", Subjects: []string{"user_id"}}}
	indexes := []PineconeIndex{{Name: "docs", Host: "https://a.pinecone.io", Namespaces: []NamespaceRule{{Namespace: "*", Subjects: []string{"user_id"}}}}}
	before := rulesOf(tables, indexes).RulesDigest()
	tables[0].Description = "chat memory embeddings"
	indexes[0].Namespaces[0].Description = "support answers"
	if rulesOf(tables, indexes).RulesDigest() != before {
		t.Fatal("a description changed the rules digest: it is documentation for the data map, not a rule")
	}
}

// The digest's bytes are what certificates already issued carry: the same
// rules must give the same digest after any change to how it is computed.
func TestRulesDigest_SameAsCertificatesAlreadyIssued(t *testing.T) {
	tables := []TableRule{{Table: "public.docs", ID: "id", Subjects: []string{"user_id"}}}
	indexes := []PineconeIndex{{Name: "docs", Host: "https://a.pinecone.io", Namespaces: []NamespaceRule{{Namespace: "*", Subjects: []string{"user_id"}}}}}
	const want = "0187d9b6eb34047380fecc84d9051a67db3b780f7a7b8f657df5ca968ab15b86"
	if got := rulesOf(tables, indexes).RulesDigest(); got != want {
		t.Fatalf("digest %s; certificates issued with these rules carry %s", got, want)
	}
}
