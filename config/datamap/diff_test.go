package datamap

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDiff_ShowsTheChangedLinesWithContext(t *testing.T) {
	want := "a\nb\nc\nd\ne\nf\ng\nh\n"
	got := "a\nb\nc\nd\nE\nf\ng\nh\n"
	assert.Equal(t, "--- want\n+++ got\n@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n", Diff("want", "got", []byte(want), []byte(got)))
}

func TestDiff_EqualIsEmpty(t *testing.T) {
	assert.Empty(t, Diff("a", "b", []byte("x\ny\n"), []byte("x\ny\n")))
}

func TestDiff_AddedAndRemovedLinesAndTheLastNewline(t *testing.T) {
	assert.Equal(t, "--- w\n+++ g\n@@ -1,2 +1,3 @@\n x\n+y\n z\n", Diff("w", "g", []byte("x\nz\n"), []byte("x\ny\nz\n")))
	assert.Equal(t, "--- w\n+++ g\n@@ -1,3 +1,2 @@\n x\n-y\n z\n", Diff("w", "g", []byte("x\ny\nz\n"), []byte("x\nz\n")))
	assert.Contains(t, Diff("w", "g", []byte("x\n"), []byte("x")), `+\ No newline at end of file`)
}

func TestDiff_LongDifferencesAreCut(t *testing.T) {
	var want, got strings.Builder
	for i := range 200 {
		fmt.Fprintf(&want, "line %d\n", i)
		fmt.Fprintf(&got, "LINE %d\n", i)
	}
	d := Diff("w", "g", []byte(want.String()), []byte(got.String()))
	assert.Contains(t, d, "… 340 more lines\n")
	assert.LessOrEqual(t, strings.Count(d, "\n"), maxDiffLines+4)
}
