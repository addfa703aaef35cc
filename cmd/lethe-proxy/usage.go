package main

import (
	"embed"
	"strings"

	"github.com/lethe-privacy/lethe/admin/adminclient"
)

// usageFiles holds the usage text of each command, usage/COMMAND.txt, and
// the top level's, usage/lethe-proxy.txt, as --help prints them.
//
//go:embed usage/*.txt
var usageFiles embed.FS

// adminURLPlaceholder stands in the usage files where the text names the
// admin API's default URL, so that it is written in one place.
const adminURLPlaceholder = "{{adminclient.DefaultURL}}"

// usageOf is the usage text in usage/NAME.txt. The files are embedded at
// build time, so a missing one is a mistake of this package's, which the
// help test finds.
func usageOf(name string) string {
	text, err := usageFiles.ReadFile("usage/" + name + ".txt")
	if err != nil {
		panic("lethe-proxy: no usage text for " + name + ": " + err.Error())
	}
	return strings.ReplaceAll(string(text), adminURLPlaceholder, adminclient.DefaultURL)
}

// usage is the top level's usage text.
var usage = usageOf("lethe-proxy")
