package emulator

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCompileFilter_Matches(t *testing.T) {
	md := map[string]any{"subject": "alice", "year": 2020.0, "draft": false, "tags": []any{"a", "b"}}
	for _, tc := range []struct {
		filter string
		want   bool
	}{
		{`{}`, true},
		{`{"subject": "alice"}`, true},
		{`{"subject": {"$eq": "bob"}}`, false},
		{`{"subject": {"$ne": "bob"}}`, true},
		{`{"missing": {"$ne": "bob"}}`, true},
		{`{"missing": {"$eq": "bob"}}`, false},
		{`{"subject": {"$in": ["bob", "alice"]}}`, true},
		{`{"subject": {"$nin": ["bob", "alice"]}}`, false},
		{`{"missing": {"$nin": ["x"]}}`, true},
		{`{"tags": "b"}`, true},
		{`{"tags": {"$in": ["c", "a"]}}`, true},
		{`{"tags": {"$nin": ["a"]}}`, false},
		{`{"tags": {"$ne": "z"}}`, true},
		{`{"year": {"$gt": 2019}}`, true},
		{`{"year": {"$gt": 2020}}`, false},
		{`{"year": {"$gte": 2020, "$lte": 2020}}`, true},
		{`{"year": {"$lt": 2020}}`, false},
		{`{"subject": {"$gt": 1}}`, false},
		{`{"draft": false}`, true},
		{`{"draft": {"$exists": true}}`, true},
		{`{"missing": {"$exists": false}}`, true},
		{`{"missing": {"$exists": true}}`, false},
		{`{"$and": [{"subject": "alice"}, {"year": 2020}]}`, true},
		{`{"$and": [{"subject": "alice"}, {"year": 2021}]}`, false},
		{`{"$or": [{"subject": "bob"}, {"year": 2020}]}`, true},
		{`{"$or": [{"subject": "bob"}, {"year": 2021}]}`, false},
		{`{"subject": "alice", "$or": [{"year": 1}, {"draft": false}]}`, true},
	} {
		t.Run(tc.filter, func(t *testing.T) {
			var f map[string]any
			require.NoError(t, json.Unmarshal([]byte(tc.filter), &f))
			m, err := compileFilter(f)
			require.NoError(t, err)
			assert.Equal(t, tc.want, m(md))
		})
	}
}

func TestCompileFilter_RefusesMalformed(t *testing.T) {
	for _, filter := range []string{
		`{"$regex": "a"}`,
		`{"x": {"$like": "a"}}`,
		`{"x": {}}`,
		`{"x": {"$in": "a"}}`,
		`{"x": {"$in": [{"a": 1}]}}`,
		`{"x": {"$gt": "a"}}`,
		`{"x": {"$exists": 1}}`,
		`{"x": {"$eq": ["a"]}}`,
		`{"$and": []}`,
		`{"$or": {"x": 1}}`,
		`{"$or": ["x"]}`,
	} {
		t.Run(filter, func(t *testing.T) {
			var f map[string]any
			require.NoError(t, json.Unmarshal([]byte(filter), &f))
			_, err := compileFilter(f)
			require.Error(t, err)
			assert.Equal(t, InvalidArgument, err.(*Error).Code)
		})
	}
}
