package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/sluice-serving/sluice/audit"
	"github.com/sluice-serving/sluice/natsbox"
)

// auditCommand is `sluice audit verify`: it reads the whole audit stream, from a stopped
// server's data directory (an embedded server of its own on it) or a NATS cluster, checks every
// replica's chain, and prints each replica's records and the first break. It returns 0 when
// every chain verifies, 1 when one breaks, 2 when the stream cannot be read (or for a usage
// error).
func auditCommand(args, environ []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("audit verify", flag.ContinueOnError)
	flags.SetOutput(stderr)
	dataDir := flags.String("data-dir", "", "the stopped server's data `directory` (default: SLUICE_DATA_DIR)")
	url := flags.String("nats-url", "", "a NATS cluster's `URLs` instead (default: SLUICE_NATS_URL)")
	flags.Usage = func() {
		fmt.Fprintln(stderr, "usage: sluice audit verify [-data-dir DIR | -nats-url URLS]\n\nChecks every replica's hash chain in the audit stream and prints each replica's records and\nthe first break; exits 1 when a chain breaks, 2 when the stream cannot be read. A data\ndirectory must not be in use by a running server (read a running fleet through its cluster);\nopening it applies the stream's retention, as a server would: to keep evidence, verify a copy.")
		flags.PrintDefaults()
	}
	if len(args) == 0 || args[0] != "verify" {
		flags.Usage()
		return 2
	}
	if err := flags.Parse(args[1:]); err != nil || flags.NArg() != 0 || (*dataDir != "" && *url != "") {
		if err == nil {
			flags.Usage()
		}
		return 2
	}
	cfg, err := loadConfig(environ, thisMachine())
	if err != nil {
		fmt.Fprintln(stderr, "sluice:", err)
		return 2
	}
	nc := cfg.NATS
	switch {
	case *url != "":
		nc.URL = *url
	case *dataDir != "":
		nc.URL, nc.DataDir = "", *dataDir
	}
	if nc.Embedded() {
		// An embedded server would make an empty store where there is none: say so instead.
		if _, err := os.Stat(filepath.Join(nc.DataDir, "jetstream")); err != nil {
			fmt.Fprintf(stderr, "sluice: %s holds no JetStream store: %v\n", nc.DataDir, errors.Unwrap(err))
			return 2
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	box, err := natsbox.OpenReader(ctx, nc, slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		fmt.Fprintln(stderr, "sluice:", err)
		return 2
	}
	defer box.Close()
	rep, err := audit.Verify(ctx, box)
	if err != nil {
		fmt.Fprintln(stderr, "sluice:", err)
		return 2
	}
	return printReport(stdout, rep)
}

// printReport writes a verified stream's report and returns the exit code it calls for.
func printReport(w io.Writer, rep audit.Report) int {
	fmt.Fprintf(w, "stream %s: %d records", audit.Stream, rep.Records)
	if rep.Records > 0 {
		fmt.Fprintf(w, " (stream sequences %d to %d)", rep.FirstSeq, rep.LastSeq)
	}
	if rep.Trimmed {
		fmt.Fprint(w, "; older records removed by retention")
	}
	fmt.Fprintln(w)
	for _, c := range rep.Chains {
		state := "verified"
		if !c.Verified {
			state = "BROKEN"
		}
		trimmed := ""
		if c.Trimmed {
			trimmed = " (starts after records removed by retention)"
		}
		fmt.Fprintf(w, "replica %s: %d records, chain %d to %d%s: %s\n", c.Replica, c.Records, c.FirstSeq, c.LastSeq, trimmed, state)
	}
	if len(rep.Breaks) == 0 {
		fmt.Fprintln(w, "every chain verifies")
		return 0
	}
	b := rep.Breaks[0]
	fmt.Fprintf(w, "first break: replica %s, stream sequence %d, record %d: %s (%s)\n", b.Replica, b.StreamSeq, b.Seq, b.Reason, b.Detail)
	more := ""
	if len(rep.Breaks) == audit.MaxBreaks {
		more = " or more"
	}
	fmt.Fprintf(w, "breaks: %d%s\n", len(rep.Breaks), more)
	return 1
}
