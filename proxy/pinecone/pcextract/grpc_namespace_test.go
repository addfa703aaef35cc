package pcextract

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/extract"
)

func TestDeleteNamespaceGRPC(t *testing.T) {
	def := []extract.Tag{{Table: "docs/__default__", Op: extract.OpDeleteAll}}
	runPBCases(t, []pbCase{
		{"team", false, pbNamespace(1, "team"), []extract.Tag{{Table: "docs/team", Op: extract.OpDeleteAll}}},
		{"absent namespace is the default", false, nil, def},
		{"empty namespace is the default", false, pbNamespace(1, ""), def},
		{"unknown fields are stepped over", false, append(pbVarint(7, 1), pbNamespace(1, "team")...),
			[]extract.Tag{{Table: "docs/team", Op: extract.OpDeleteAll}}},
		{"uncovered namespace yields nothing", false, pbNamespace(1, "other"), nil},
		{"* covers", true, pbNamespace(1, "other"), []extract.Tag{{Table: "docs/other", Op: extract.OpDeleteAll}}},
	}, (*Rules).DeleteNamespaceGRPC)
}

func TestDeleteNamespaceGRPC_MalformedMessagesAreErrorsWithoutValues(t *testing.T) {
	const secret = "s3cret-namespace"
	for name, c := range map[string]struct {
		msg  []byte
		says string
	}{
		"namespace as varint": {pbVarint(1, 5), "namespace: wrong wire type"},
		"namespace twice":     {append(pbString(1, "team"), pbString(1, secret)...), "namespace appears more than once"},
		"namespace not UTF-8": {pbString(1, "\xff"+secret), "namespace"},
		"truncated":           {pbString(1, secret)[:4], "malformed"},
	} {
		t.Run(name, func(t *testing.T) {
			tags, err := pcRules(t).DeleteNamespaceGRPC(c.msg)
			require.Error(t, err)
			assert.Nil(t, tags)
			assert.Contains(t, err.Error(), c.says)
			assert.NotContains(t, err.Error(), secret)
		})
	}
}
