package datamap

import (
	"fmt"
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

// ChosenFormat is the rendering lethe-proxy export writes or checks:
// check's extension (FormatOf) when check names a committed copy, else
// given, markdown when given is empty. Its errors name the flag to fix.
func ChosenFormat(given, check string) (Format, error) {
	if check != "" {
		f, ok := FormatOf(check)
		if !ok {
			return "", fmt.Errorf("--check %s: cannot tell the format from the extension (name the file .md or .json)", check)
		}
		return f, nil
	}
	switch f := Format(given); f {
	case "":
		return FormatMarkdown, nil
	case FormatMarkdown, FormatJSON:
		return f, nil
	}
	return "", fmt.Errorf("--format %q is not markdown or json", given)
}

// Render is m in format f.
func Render(m Map, f Format) []byte {
	if f == FormatJSON {
		return JSON(m)
	}
	return Markdown(m)
}
