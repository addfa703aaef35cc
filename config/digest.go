package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// RulesDigest is the hex SHA-256 a certificate commits to as the rules in
// force: capture.tables and, when any Pinecone index is configured, each
// index's name and namespace rules (not its host or key, which say where
// the rules apply, not what they are). Without Pinecone it is the digest of
// the tables alone, as before Pinecone rules existed. Descriptions are not
// rules (their fields are left out of the JSON).
func (c *Config) RulesDigest() string {
	var b []byte
	if len(c.Pinecone.Indexes) == 0 {
		b, _ = json.Marshal(c.Capture.Tables)
	} else {
		type indexRules struct {
			Name       string          `json:"name"`
			Namespaces []NamespaceRule `json:"namespaces"`
		}
		rules := struct {
			Tables   []TableRule  `json:"tables"`
			Pinecone []indexRules `json:"pinecone"`
		}{Tables: c.Capture.Tables}
		for _, ix := range c.Pinecone.Indexes {
			rules.Pinecone = append(rules.Pinecone, indexRules{Name: ix.Name, Namespaces: ix.Namespaces})
		}
		b, _ = json.Marshal(rules)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
