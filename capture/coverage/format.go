package coverage

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Formats Write prints.
const (
	FormatText   = "text"
	FormatGitHub = "github"
	FormatJSON   = "json"
)

// Formats lists the formats Write accepts.
var Formats = []string{FormatText, FormatGitHub, FormatJSON}

// JSONVersion is the version of the JSON output's schema
// (docs/coverage.md): fields are only ever added within a version.
const JSONVersion = 1

// Write prints r in format: text for people, github for GitHub Actions
// workflow commands (::error and ::warning annotations, then the
// summary), json for programs.
func Write(w io.Writer, format string, r Report) error {
	switch format {
	case FormatText:
		return writeText(w, r)
	case FormatGitHub:
		return writeGitHub(w, r)
	case FormatJSON:
		return writeJSON(w, r)
	}
	return fmt.Errorf("unknown format %q: use one of %s", format, strings.Join(Formats, ", "))
}

// Summary is the report's last line.
func (r Report) Summary() string {
	verdict, unchecked := "ok", ""
	switch {
	case r.Errors() > 0:
		verdict = "FAILED"
	case len(r.Unchecked) > 0:
		verdict = "INCOMPLETE"
	}
	if len(r.Unchecked) > 0 {
		unchecked = "; not checked: " + strings.Join(r.Unchecked, ", ")
	}
	return fmt.Sprintf("coverage %s: %d %s, %d %s (%d %s, %d %s checked%s)", verdict,
		r.Errors(), plural(r.Errors(), "error", "errors"), r.Warnings(), plural(r.Warnings(), "warning", "warnings"),
		r.TablesChecked, plural(r.TablesChecked, "table", "tables"), r.NamespacesChecked, plural(r.NamespacesChecked, "namespace", "namespaces"), unchecked)
}

func writeText(w io.Writer, r Report) error {
	var b strings.Builder
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "%-7s %s: %s\n", strings.ToUpper(string(f.Severity)), f.Where, f.Message)
		for _, line := range strings.Split(f.Fix, "\n") {
			b.WriteString("        " + line + "\n")
		}
	}
	b.WriteString(r.Summary() + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// writeGitHub prints workflow commands
// (https://docs.github.com/actions/reference/workflow-commands-for-github-actions):
// "::error file=F,line=L,title=T::message", with the file and line when
// the finding is about a line of the configuration.
func writeGitHub(w io.Writer, r Report) error {
	var b strings.Builder
	for _, f := range r.Findings {
		props := []string{}
		if file, line, ok := fileLine(f.Where); ok {
			props = append(props, "file="+escapeProperty(file), "line="+strconv.Itoa(line))
		}
		props = append(props, "title="+escapeProperty("Lethe coverage: "+subject(f)))
		fmt.Fprintf(&b, "::%s %s::%s\n", f.Severity, strings.Join(props, ","), escapeData(f.Message+"\n"+f.Fix))
	}
	b.WriteString(r.Summary() + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func writeJSON(w io.Writer, r Report) error {
	out := struct {
		Version  int       `json:"version"`
		Findings []Finding `json:"findings"`
		Summary  struct {
			OK                bool     `json:"ok"`
			Errors            int      `json:"errors"`
			Warnings          int      `json:"warnings"`
			TablesChecked     int      `json:"tables_checked"`
			NamespacesChecked int      `json:"namespaces_checked"`
			Unchecked         []string `json:"unchecked,omitempty"`
		} `json:"summary"`
	}{Version: JSONVersion, Findings: r.Findings}
	if out.Findings == nil {
		out.Findings = []Finding{}
	}
	out.Summary.OK = r.Errors() == 0 && len(r.Unchecked) == 0
	out.Summary.Errors, out.Summary.Warnings = r.Errors(), r.Warnings()
	out.Summary.TablesChecked, out.Summary.NamespacesChecked = r.TablesChecked, r.NamespacesChecked
	out.Summary.Unchecked = r.Unchecked
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// subject names what a finding is about.
func subject(f Finding) string {
	switch {
	case f.Table != "" && f.Column != "":
		return f.Table + "." + f.Column
	case f.Table != "":
		return f.Table
	case f.Index != "":
		return f.Index + "/" + f.Namespace
	}
	return f.Code
}

// fileLine splits "file:line".
func fileLine(where string) (string, int, bool) {
	i := strings.LastIndexByte(where, ':')
	if i <= 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(where[i+1:])
	if err != nil || n <= 0 {
		return "", 0, false
	}
	return where[:i], n, true
}

// escapeData and escapeProperty escape as the runner's toolkit does
// (actions/toolkit, core/src/command.ts).
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
