package datamap

import (
	"path/filepath"
	"strings"
)

// Format is a rendering of the map.
type Format string

// The renderings: Markdown for people, JSON for programs.
const (
	FormatMarkdown Format = "markdown"
	FormatJSON     Format = "json"
)

// FormatOf is the rendering a file's extension names (.md, .markdown or
// .json), for comparing a committed copy of the map; false for any other
// extension.
func FormatOf(file string) (Format, bool) {
	switch strings.ToLower(filepath.Ext(file)) {
	case ".md", ".markdown":
		return FormatMarkdown, true
	case ".json":
		return FormatJSON, true
	}
	return "", false
}

// Render is m in format f.
func Render(m Map, f Format) []byte {
	if f == FormatJSON {
		return JSON(m)
	}
	return Markdown(m)
}
