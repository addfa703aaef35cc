package extract

// DefaultNamespace is the canonical name of Pinecone's default namespace.
// Clients name it "" or "__default__", or leave the namespace out; all three
// are the same namespace and tags name it "__default__".
const DefaultNamespace = "__default__"

// CanonicalNamespace is the one name of a namespace: "", an absent
// namespace and "__default__" are the same one to Pinecone (the Node SDK
// sends "", go-pinecone "__default__"), and are DefaultNamespace here, in
// tags, the ledger and forget's layers alike.
func CanonicalNamespace(ns string) string {
	if ns == "" {
		return DefaultNamespace
	}
	return ns
}
