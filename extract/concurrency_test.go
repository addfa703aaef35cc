package extract

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An Analysis is cached per statement text and shared by every connection
// executing it, so Tags must be safe to call concurrently (run with -race).
func TestAnalysis_TagsIsSafeForConcurrentUse(t *testing.T) {
	r := testRules(t)
	as, err := r.Analyze(`INSERT INTO docs (id, user_id, cmetadata) VALUES ($1, $2, $3)`, nil)
	require.NoError(t, err)
	a := as[0]
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				id, user := fmt.Sprintf("d%d-%d", g, i), fmt.Sprintf("u%d", g)
				tags, err := a.Tags(textParams(id, user, fmt.Sprintf(`{"user_id":%q}`, user+"j")))
				if !assert.NoError(t, err) {
					return
				}
				assert.Equal(t, []Tag{write("public.docs", id, user, user+"j")}, tags)
				assert.True(t, r.Mentions("insert into docs"))
			}
		}()
	}
	wg.Wait()
}

func TestUpdate_TagsDoNotShareSubjectSlices(t *testing.T) {
	tags := tagsOf(t, testRules(t), `UPDATE docs SET user_id = 'u' WHERE id IN ('a', 'b')`, Params{})
	require.Len(t, tags, 2)
	tags[0].Subjects[0] = "changed"
	assert.Equal(t, []string{"u"}, tags[1].Subjects)
}
