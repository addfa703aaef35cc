package pcstore

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"
)

// names follows extract's rule for tagging writes.
func TestNames_StringNumberTextOrListElement(t *testing.T) {
	for _, tc := range []struct {
		md      map[string]any
		subject string
		want    bool
	}{
		{map[string]any{"u": "alice"}, "alice", true},
		{map[string]any{"u": "Alice"}, "alice", false},
		{map[string]any{"v": "alice"}, "alice", true},
		{map[string]any{"w": "alice"}, "alice", false},
		{map[string]any{"u": 42}, "42", true},
		{map[string]any{"u": 42}, "42.0", false},
		{map[string]any{"u": 4.5}, "4.5", true},
		{map[string]any{"u": []any{"bob", "alice"}}, "alice", true},
		{map[string]any{"u": []any{42}}, "42", false},
		{map[string]any{"u": true}, "true", false},
		{map[string]any{"u": map[string]any{"id": "alice"}}, "alice", false},
		{map[string]any{}, "alice", false},
	} {
		md, err := structpb.NewStruct(tc.md)
		require.NoError(t, err)
		assert.Equal(t, tc.want, names(md, []string{"u", "v"}, tc.subject), "%v %q", tc.md, tc.subject)
	}
	assert.False(t, names(nil, []string{"u"}, "alice"))
}

func TestSubjectFilters_AddTheNumberForANumbersText(t *testing.T) {
	assert.Len(t, subjectFilters([]string{"u", "v"}, "alice"), 2)
	fs := subjectFilters([]string{"u"}, "42")
	require.Len(t, fs, 2)
	assert.Equal(t, "alice", subjectFilters([]string{"u"}, "alice")[0].Fields["u"].GetStructValue().Fields["$eq"].GetStringValue())
	assert.Equal(t, 42.0, fs[1].Fields["u"].GetStructValue().Fields["$eq"].GetNumberValue())
	assert.Len(t, subjectFilters([]string{"u"}, "042"), 1, "not how a number is written")
}
