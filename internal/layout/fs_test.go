package layout

import (
	"testing/fstest"
)

// fsWith is a file system holding the named files, each empty.
func fsWith(names ...string) fstest.MapFS {
	m := fstest.MapFS{}
	for _, n := range names {
		m[n] = &fstest.MapFile{}
	}
	return m
}
