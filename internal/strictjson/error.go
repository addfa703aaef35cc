package strictjson

import (
	"fmt"
	"strconv"
)

// A Field names a part of a document for errors: Name, then [Index] if
// Index ≥ 0, then .Member if Member is set. The zero Field is the whole
// body. Its names come from the schema the caller reads, never from the
// document.
type Field struct {
	Name   string
	Index  int
	Member string
}

func (f Field) String() string {
	s := f.Name
	if s == "" {
		return "the body"
	}
	if f.Index >= 0 {
		s += "[" + strconv.Itoa(f.Index) + "]"
	}
	if f.Member != "" {
		s += "." + f.Member
	}
	return s
}

// A SyntaxError says what is wrong with a document and where: the byte
// offset and the Field being read. It never quotes the document.
type SyntaxError struct {
	What  string
	Pos   int
	Where string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s at byte %d (in %s)", e.What, e.Pos, e.Where)
}
