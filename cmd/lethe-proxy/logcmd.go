package main

import (
	"context"
	"fmt"
	"io"

	"github.com/lethe-privacy/lethe/admin/adminclient"
)

// logCmd reads and checks the transparency log through the admin API.
func logCmd(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || (args[0] != "checkpoint" && args[0] != "verify") {
		fmt.Fprint(stderr, usageOf("log"))
		return 2
	}
	sub := args[0]
	fs := newFlagSet("log "+sub, usageOf("log"), stderr)
	clientFlags := adminclient.AddFlags(fs)
	var keysFile, since, save *string
	if sub == "verify" {
		keysFile = fs.String("keys", "", "trusted keys file (JSON, as published by the operator)")
		since = fs.String("since", "", "a checkpoint saved earlier (by --save)")
		save = fs.String("save", "", "write the verified latest checkpoint to FILE")
	}
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	fail := failer(stderr, "log "+sub)
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "lethe-proxy log %s: unexpected argument %q\n\n%s", sub, fs.Arg(0), usageOf("log"))
		return 2
	}
	if sub == "verify" && *keysFile == "" {
		return fail(2, "--keys KEYS.json is required: the operator's published trusted keys")
	}
	c, err := clientFlags.Client()
	if err != nil {
		return fail(2, "%v", err)
	}
	ctx := context.Background()
	if sub == "checkpoint" {
		note, err := c.Checkpoint(ctx)
		if err != nil {
			return fail(1, "%v", err)
		}
		stdout.Write(note)
		return 0
	}
	if err := c.VerifyLogFiles(ctx, *keysFile, *since, *save, stdout, stderr); err != nil {
		return fail(1, "%v", err)
	}
	return 0
}
