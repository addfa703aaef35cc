package coverage

import (
	"fmt"
	"slices"

	"github.com/lethe-privacy/lethe/extract"
)

// CheckNamespaces judges the namespaces index reports holding records
// against its namespace rules: each needs a rule of its own, a "*" rule
// or an ignore. The default namespace is spelled "__default__".
func CheckNamespaces(p Policy, index string, namespaces []string) []Finding {
	var rules IndexRules
	for _, ix := range p.Indexes {
		if ix.Index == index {
			rules = ix
		}
	}
	ruled := map[string]bool{}
	for _, ns := range rules.Namespaces {
		ruled[extract.CanonicalNamespace(ns)] = true
	}
	var out []Finding
	sorted := slices.Clone(namespaces)
	slices.Sort(sorted)
	for _, ns := range sorted {
		ns = extract.CanonicalNamespace(ns)
		if ruled[ns] || ruled["*"] {
			continue
		}
		if _, ok := p.ignoredNamespace(index, ns); ok {
			continue
		}
		out = append(out, Finding{
			Severity: Error, Code: CodeUncoveredNamespace, Store: StorePinecone, Index: index, Namespace: ns,
			Where:   "index " + index,
			Message: fmt.Sprintf("namespace %q of Pinecone index %s holds records and has no rule", ns, index),
			Fix: "add a namespace rule to the index in pinecone.indexes (or a \"*\" rule for every namespace):\n" +
				fmt.Sprintf("  namespaces:\n    - {namespace: %q, subjects: [SUBJECT_FIELD]}\n", ns) +
				"or, if no person's data is there, an ignore with the reason:\n" +
				"  coverage:\n    ignore:\n" +
				fmt.Sprintf("      - {index: %s, namespace: %q, reason: \"WHY NO PERSONAL DATA IS THERE\"}", index, ns),
		})
	}
	return out
}
