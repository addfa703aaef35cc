package datamap

import (
	"fmt"
	"strings"
)

// maxDiffLines bounds the lines Diff prints; the rest are counted.
const maxDiffLines = 60

// Diff describes how got differs from want, line by line, in the style of
// a unified diff: the lines between the common head and the common tail,
// "-" from want, "+" from got, with up to 3 lines of context each side.
// It returns "" when they are equal.
func Diff(wantName, gotName string, want, got []byte) string {
	if string(want) == string(got) {
		return ""
	}
	a, b := lines(want), lines(got)
	head := 0
	for head < len(a) && head < len(b) && a[head] == b[head] {
		head++
	}
	tail := 0
	for tail < len(a)-head && tail < len(b)-head && a[len(a)-1-tail] == b[len(b)-1-tail] {
		tail++
	}
	const context = 3
	from, toA, toB := max(0, head-context), len(a)-tail, len(b)-tail
	endA, endB := min(len(a), toA+context), min(len(b), toB+context)

	var out []string
	for _, l := range a[from:head] {
		out = append(out, " "+l)
	}
	for _, l := range a[head:toA] {
		out = append(out, "-"+l)
	}
	for _, l := range b[head:toB] {
		out = append(out, "+"+l)
	}
	for _, l := range a[toA:endA] {
		out = append(out, " "+l)
	}
	var s strings.Builder
	fmt.Fprintf(&s, "--- %s\n+++ %s\n@@ -%d,%d +%d,%d @@\n", wantName, gotName, from+1, endA-from, from+1, endB-from)
	for i, l := range out {
		if i == maxDiffLines {
			fmt.Fprintf(&s, "… %d more lines\n", len(out)-i)
			break
		}
		s.WriteString(l + "\n")
	}
	return s.String()
}

// lines splits s at newlines; a final newline ends the last line, and a
// missing one shows as a line of its own so that it differs.
func lines(s []byte) []string {
	text := string(s)
	if trimmed, ok := strings.CutSuffix(text, "\n"); ok {
		return strings.Split(trimmed, "\n")
	}
	if text == "" {
		return nil
	}
	return append(strings.Split(text, "\n"), `\ No newline at end of file`)
}
