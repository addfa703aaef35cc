// Package layout holds no code, only a test: README.md's "Layout" section
// has one table row per package directory of the module (a directory
// holding non-test .go files, outside testdata and node_modules), and every
// path the section's tables name is a directory that exists. A package
// added, moved or removed without its row fails `go test ./internal/...`
// with the row to add or remove.
package layout
