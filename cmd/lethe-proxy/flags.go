package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/lethe-privacy/lethe/admin/adminclient"
)

// newFlagSet is a subcommand's flag set: its errors go to stderr and,
// when usage is given, -h prints usage there.
func newFlagSet(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	if usage != "" {
		fs.Usage = func() { fmt.Fprint(stderr, usage) }
	}
	return fs
}

// parseInterspersed parses flags placed before, between or after the
// positional arguments, which it returns.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// adminClientFlags defines --admin, --config and --token-file on fs; the
// returned function, called after parsing, builds the client.
func adminClientFlags(fs *flag.FlagSet) func() (*adminclient.Client, error) {
	adminURL, configPath := adminURLFlags(fs)
	tokenFile := fs.String("token-file", "", "file holding the admin API bearer token (default: env LETHE_ADMIN_TOKEN)")
	return func() (*adminclient.Client, error) {
		u, err := adminclient.ResolveURL(*adminURL, *configPath)
		if err != nil {
			return nil, err
		}
		return adminclient.New(u, *tokenFile)
	}
}

// adminURLFlags defines --admin and --config, which adminclient.ResolveURL
// turns into the admin API's URL.
func adminURLFlags(fs *flag.FlagSet) (adminURL, configPath *string) {
	adminURL = fs.String("admin", "", "admin API URL (default env LETHE_ADMIN_URL, else forget.admin of --config, else "+adminclient.DefaultURL+")")
	configPath = fs.String("config", "", "the proxy's configuration, to find its admin API when --admin and LETHE_ADMIN_URL are not set")
	return adminURL, configPath
}
