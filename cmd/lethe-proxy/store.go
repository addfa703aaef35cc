package main

import "github.com/lethe-privacy/lethe/proxy/pgwire/pgwing"

// openStore connects to capture.store for the commands that read or
// delete through it (pgwing.OpenStore: the same words for every caller).
var openStore = pgwing.OpenStore
