package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/lethe-privacy/lethe/admin/adminclient"
	"github.com/lethe-privacy/lethe/admin/mcpserver"
	"github.com/lethe-privacy/lethe/certificate"
)

// envRefKeyFile names the reference key file when --ref-key-file is not
// given.
const envRefKeyFile = "LETHE_MCP_REF_KEY_FILE"

// mcpCmd serves the MCP tools, or makes or opens a reference.
func mcpCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	sub := ""
	if len(args) > 0 && (args[0] == "ref" || args[0] == "open") {
		sub, args = args[0], args[1:]
	}
	fs := newFlagSet("mcp", usageOf("mcp"), stderr)
	httpAddr := fs.String("http", "", "serve streamable HTTP on this address instead of stdio")
	keysFile := fs.String("keys", "", "the operator's trusted keys file, for verify")
	refKeyFile := fs.String("ref-key-file", os.Getenv(envRefKeyFile), "file of at least 32 random bytes sealing subject references (env "+envRefKeyFile+")")
	refTTL := fs.Duration("ref-ttl", mcpserver.DefaultReferenceTTL, "how long a reference opens")
	clientFlags := adminclient.AddFlags(fs)
	pos, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		return 2
	}
	fail := failer(stderr, "mcp")
	if len(pos) != map[string]int{"": 0, "ref": 0, "open": 1}[sub] {
		return fail(2, "unexpected arguments\n\n%s", usageOf("mcp"))
	}

	var refs *mcpserver.References
	if *refKeyFile != "" {
		if refs, err = mcpserver.LoadReferences(*refKeyFile, *refTTL); err != nil {
			return fail(2, "%v", err)
		}
	}
	switch sub {
	case "ref", "open":
		if refs == nil {
			return fail(2, "--ref-key-file FILE is required (the key file lethe-proxy mcp serves with)")
		}
		if sub == "open" {
			value, err := refs.OpenAny(pos[0])
			if err != nil {
				return fail(1, "%v", err)
			}
			fmt.Fprintln(stdout, value)
			return 0
		}
		subject, err := adminclient.ReadSubject(stdin)
		if err != nil {
			return fail(2, "%v", err)
		}
		fmt.Fprintln(stdout, refs.Seal(mcpserver.KindSubject, subject))
		return 0
	}

	logger := slog.New(slog.NewTextHandler(stderr, nil))
	if refs == nil {
		if refs, err = mcpserver.EphemeralReferences(*refTTL); err != nil {
			return fail(1, "%v", err)
		}
		logger.Warn("mcp: no --ref-key-file: subject references open only in this process (other replicas and `lethe-proxy mcp ref` need the same key file)")
	}
	cfg := mcpserver.Config{References: refs, Logger: logger, Version: version}
	if *keysFile != "" {
		keys, err := certificate.ReadKeySet(*keysFile)
		if err != nil {
			return fail(2, "--keys: %v", err)
		}
		cfg.Keys = &keys
	}
	adminURL, err := clientFlags.URL()
	if err != nil {
		return fail(2, "%v", err)
	}
	ctx, stop := signalContext()
	defer stop()
	if *httpAddr != "" {
		handler, err := mcpserver.NewHTTPHandler(cfg, adminURL)
		if err != nil {
			return fail(2, "%v", err)
		}
		if err := mcpserver.ServeHTTP(ctx, cfg, handler, *httpAddr); err != nil {
			return fail(1, "%v", err)
		}
		return 0
	}
	client, err := clientFlags.ClientAt(adminURL)
	if err != nil {
		return fail(2, "%v", err)
	}
	if err := mcpserver.ServeStdio(ctx, cfg, client); err != nil && ctx.Err() == nil {
		return fail(1, "%v", err)
	}
	return 0
}
