package pcextract

import (
	"math"
	"strconv"
	"testing"

	"github.com/lethe-privacy/lethe/extract"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A number subject is the float64 Pinecone keeps, in one text, however it
// was spelled: REST's 4242, 4242.0 (Python's json.dumps), 4.242e3, 4242E0
// and gRPC's number_value 4242 all name "4242"; JavaScript's 1e+21 names
// its digits; -0 is 0.
func TestPineconeNumberSubject_OneTextPerNumber(t *testing.T) {
	r := pcRules(t)
	for spelling, want := range map[string]string{
		"4242": "4242", "4242.0": "4242", "4.242e3": "4242", "4242E0": "4242", "42420e-1": "4242",
		"1000.0": "1000", "1e+21": "1000000000000000000000", "1e23": "100000000000000000000000",
		"-0": "0", "-0.0": "0", "0e999999999999999999999": "0", "0.5": "0.5", "0.30000000000000004": "0.30000000000000004",
		"5e-324": strconv.FormatFloat(5e-324, 'f', -1, 64),
	} {
		tags, err := r.UpsertREST([]byte(`{"vectors":[{"id":"a","values":[1],"metadata":{"user_id":` + spelling + `}}]}`))
		require.NoError(t, err, spelling)
		assert.Equal(t, []string{want}, tags[0].Subjects, "REST upsert %s", spelling)

		tags, err = r.UpdateREST([]byte(`{"id":"a","setMetadata":{"user_id":` + spelling + `}}`))
		require.NoError(t, err, spelling)
		assert.Equal(t, []string{want}, tags[0].Subjects, "REST update %s", spelling)

		tags, err = r.UpsertRecordsREST("", []byte(`{"_id":"a","user_id":`+spelling+`}`))
		require.NoError(t, err, spelling)
		assert.Equal(t, []string{want}, tags[0].Subjects, "records upsert %s", spelling)
	}
	for f, want := range map[float64]string{4242: "4242", 4242.5: "4242.5", math.Copysign(0, -1): "0", 1e21: "1000000000000000000000"} {
		tags, err := r.UpsertGRPC(pbUpsert(pbAbsent, pbVector("a", 1, pbStruct(pbEntry("user_id", pbValueNumber(f))))))
		require.NoError(t, err)
		assert.Equal(t, []string{want}, tags[0].Subjects, "gRPC %v", f)
	}
	// Forget's filter finds the number of the subject's text, and only of
	// the one text.
	n, ok := SubjectNumber("4242")
	assert.True(t, ok)
	assert.Equal(t, 4242.0, n)
	for _, s := range []string{"4242.0", "4.242e3", "-0", "NaN", "Inf", "x"} {
		_, ok := SubjectNumber(s)
		assert.False(t, ok, s)
	}
}

// A number beyond float64 (±Inf to Pinecone) is refused, naming the field
// and never the value.
func TestPineconeNumberSubject_OverflowIsRefused(t *testing.T) {
	r := pcRules(t)
	for _, spelling := range []string{"1e400", "-1e400", "1e309"} {
		_, err := r.UpsertREST([]byte(`{"vectors":[{"id":"a","values":[1],"metadata":{"user_id":` + spelling + `}}]}`))
		require.Error(t, err, spelling)
		assert.Contains(t, err.Error(), `"user_id" is a number too large for a float64`)
		assert.NotContains(t, err.Error(), spelling)
		_, err = r.UpsertRecordsREST("", []byte(`{"_id":"a","user_id":`+spelling+`}`))
		assert.Error(t, err, spelling)
		_, err = r.UpdateREST([]byte(`{"id":"a","setMetadata":{"user_id":` + spelling + `}}`))
		assert.Error(t, err, spelling)
	}
	_, ok := NumberSubject(math.Inf(1))
	assert.False(t, ok)
}

// A number a float64 cannot hold as written is refused: Pinecone would
// keep a nearby number, so a forget of the id as written (a 64-bit id that
// Python's json.dumps writes in full) would find nothing and a tombstone
// of it would not stop the write again. The error never quotes the value.
func TestPineconeNumberSubject_NumbersAFloat64CannotHoldAreRefused(t *testing.T) {
	r := pcRules(t)
	for _, spelling := range []string{
		"12345678901234567890", "9007199254740993", "1.0000000000000001", "4242.00000000000000001",
		"1e-400", "-1e-400", "1e-99999999999999999999", "0.1000000000000000055511151231257827",
	} {
		for what, body := range map[string]func() ([]extract.Tag, error){
			"upsert": func() ([]extract.Tag, error) {
				return r.UpsertREST([]byte(`{"vectors":[{"id":"a","metadata":{"user_id":` + spelling + `}}]}`))
			},
			"update": func() ([]extract.Tag, error) {
				return r.UpdateREST([]byte(`{"id":"a","setMetadata":{"user_id":` + spelling + `}}`))
			},
			"records": func() ([]extract.Tag, error) {
				return r.UpsertRecordsREST("", []byte(`{"_id":"a","user_id":`+spelling+`}`))
			},
		} {
			_, err := body()
			require.Error(t, err, "%s %s", what, spelling)
			assert.Contains(t, err.Error(), `"user_id" is a number a float64 cannot hold as written`, what)
			assert.NotContains(t, err.Error(), spelling, what)
		}
	}
}
