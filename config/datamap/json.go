package datamap

import (
	"bytes"
	"encoding/json"
)

// JSON renders m for tools (schema lethe.datamap/v1): indented, fields in
// declaration order, so that the same map gives the same bytes.
func JSON(m Map) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // SQL's <, > and & read as they are
	_ = enc.Encode(m)        // strings and slices only: cannot fail
	return b.Bytes()
}
