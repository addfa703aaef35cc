package extract

import (
	"fmt"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// copyFormat is COPY's FORMAT option.
type copyFormat uint8

const (
	copyText copyFormat = iota
	copyCSV
	copyBinary
)

// copySpec is what a CopyDecoder needs from the COPY statement.
type copySpec struct {
	format  copyFormat
	delim   byte
	quote   byte
	escape  byte
	null    string
	header  bool
	nfields int
	dest    []int // per field: -2 ignored, -1 id, else t.columns index
}

// analyzeCopy handles COPY t (cols) FROM STDIN [WITH (…)]. The rows arrive
// later as CopyData; the Analysis only records how to read them.
func analyzeCopy(t *table, s *pg.CopyStmt) *Analysis {
	if s.IsProgram {
		return unattributed(t, "COPY … FROM PROGRAM: the server reads the rows itself, Lethe never sees them")
	}
	if s.Filename != "" {
		return unattributed(t, "COPY … FROM a server file: the server reads the rows itself, Lethe never sees them; use FROM STDIN")
	}
	if len(s.Attlist) == 0 {
		return unattributed(t, "COPY without a column list: name the columns so Lethe can find the id and subject")
	}
	spec := &copySpec{delim: '\t', null: `\N`, nfields: len(s.Attlist)}
	var delimSet, nullSet bool
	for _, o := range s.Options {
		d := o.GetDefElem()
		if d == nil {
			continue
		}
		v := defString(d.Arg)
		switch d.Defname {
		case "format":
			switch strings.ToLower(v) {
			case "text":
				spec.format = copyText
			case "csv":
				spec.format = copyCSV
			case "binary":
				spec.format = copyBinary
			default:
				return unattributed(t, "COPY format is unknown; use text, csv or binary")
			}
		case "delimiter":
			if len(v) != 1 {
				return unattributed(t, "COPY DELIMITER must be one byte")
			}
			spec.delim, delimSet = v[0], true
		case "null":
			spec.null, nullSet = v, true
		case "quote":
			if len(v) != 1 {
				return unattributed(t, "COPY QUOTE must be one byte")
			}
			spec.quote = v[0]
		case "escape":
			if len(v) != 1 {
				return unattributed(t, "COPY ESCAPE must be one byte")
			}
			spec.escape = v[0]
		case "header":
			switch strings.ToLower(v) {
			case "", "true", "on", "1", "match":
				spec.header = true
			}
		}
	}
	if spec.format == copyCSV {
		if !delimSet {
			spec.delim = ','
		}
		if !nullSet {
			spec.null = ""
		}
		if spec.quote == 0 {
			spec.quote = '"'
		}
		if spec.escape == 0 {
			spec.escape = spec.quote
		}
	}
	spec.dest = make([]int, len(s.Attlist))
	for i, n := range s.Attlist {
		spec.dest[i] = -2
		name := n.GetString_()
		if name == nil {
			continue
		}
		if name.Sval == t.id {
			spec.dest[i] = -1
		} else if c := t.columnIndex(name.Sval); c >= 0 {
			spec.dest[i] = c
		}
	}
	return &Analysis{Table: t.name, Kind: KindCopy, rule: t, copy: spec}
}

// defString is an option argument's text form ("" for a bare option).
func defString(n *pg.Node) string {
	switch {
	case n == nil:
		return ""
	case n.GetString_() != nil:
		return n.GetString_().Sval
	case n.GetAConst() != nil:
		return constText(n.GetAConst())
	case n.GetBoolean() != nil:
		if n.GetBoolean().Boolval {
			return "true"
		}
		return "false"
	case n.GetInteger() != nil:
		return fmt.Sprint(n.GetInteger().Ival)
	}
	return ""
}
