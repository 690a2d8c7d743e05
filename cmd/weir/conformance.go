package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"

	"github.com/weirflow/weir/conformance"
	"github.com/weirflow/weir/conformance/luastore"
	"github.com/weirflow/weir/lua"
)

// conformanceReport is what `weir conformance --json` prints.
type conformanceReport struct {
	Server    string `json:"server"`
	Namespace string `json:"namespace"` // the prefix of every namespace the run used
	// Removed reports that no key of the run's namespaces is left.
	Removed bool `json:"removed"`
	conformance.Report
}

func newConformanceCmd(g *globalFlags) *cobra.Command {
	var (
		sequences int
		asJSON    bool
		cluster   bool
		path      string
	)
	cmd := &cobra.Command{
		Use:   "conformance",
		Short: "Run the store conformance suite against a Redis-protocol server",
		Long: "conformance runs weir's conformance suite (spec/conformance.md) with the Lua store on the\n" +
			"server of --redis / WEIR_REDIS_URL, in namespaces of its own (\"<prefix>-<n>\", prefix from\n" +
			"--namespace or random) that it removes afterwards. It prints every test that passed, failed\n" +
			"(with the reproducing sequence) or was skipped (with why), and exits 1 when one failed.",
		Args: exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error {
			if sequences < 0 {
				return usageErr(fmt.Errorf("--sequences %d: want a count", sequences))
			}
			callPath, ok := map[string]lua.CallPath{"auto": lua.PathAuto, "functions": lua.PathFunctions, "scripts": lua.PathScripts}[path]
			if !ok {
				return usageErr(fmt.Errorf("--path %q: want auto, functions or scripts", path))
			}
			u := g.url()
			if u == "" {
				return usageErr(fmt.Errorf("no Redis: give --redis URL or set WEIR_REDIS_URL"))
			}
			prefix := g.namespace
			if prefix == "" {
				b := make([]byte, 6)
				rand.Read(b)
				prefix = "weirconf-" + hex.EncodeToString(b)
			}
			if len(prefix) > 40 || !validPrefix(prefix) {
				return usageErr(fmt.Errorf("--namespace %q: the prefix must match ^[A-Za-z0-9_.-]{1,40}$", prefix))
			}
			var (
				rdb    redis.UniversalClient
				server string // the address(es), never the URL's password
			)
			if cluster {
				opt, err := redis.ParseClusterURL(u)
				if err != nil {
					return usageErr(fmt.Errorf("redis cluster URL: %w", err))
				}
				rdb, server = redis.NewClusterClient(opt), strings.Join(opt.Addrs, ",")
			} else {
				opt, err := redis.ParseURL(u)
				if err != nil {
					return usageErr(fmt.Errorf("redis URL: %w", err))
				}
				rdb, server = redis.NewClient(opt), opt.Addr
			}
			defer rdb.Close()
			ctx := c.Context()
			if err := rdb.Ping(ctx).Err(); err != nil {
				return failErr(fmt.Errorf("connect to %s: %w", server, err))
			}
			if n, err := luastore.Count(ctx, rdb, prefix); err != nil {
				return failErr(fmt.Errorf("scan %s: %w", server, err))
			} else if n > 0 {
				return usageErr(fmt.Errorf("namespaces %q-* already hold %d keys: pick another --namespace", prefix, n))
			}
			// rapid must not write fail files into the working directory;
			// rapid.checks is how many sequences one rapid.Check runs: a
			// share of each of the suite's 8 parallel batches.
			setFlag("rapid.nofailfile", "true")
			setFlag("rapid.checks", strconv.Itoa(min(100, max(1, (sequences+7)/8))))
			opts := []conformance.Option{conformance.Sequences(sequences)}
			rep := conformance.RunReport(ctx, luastore.NewStoreOn(prefix, callPath, rdb), opts...)
			// Remove the run's keys even when ctx was canceled.
			clean, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			out := conformanceReport{Server: server, Namespace: prefix, Report: rep}
			cerr := luastore.Clean(clean, rdb, prefix)
			if cerr == nil {
				n, err := luastore.Count(clean, rdb, prefix)
				cerr = err
				if err == nil && n > 0 {
					cerr = fmt.Errorf("%d keys left", n)
				}
			}
			out.Removed = cerr == nil
			w := c.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				if err := enc.Encode(out); err != nil {
					return failErr(err)
				}
			} else {
				printConformance(w, out)
			}
			if cerr != nil {
				return failErr(fmt.Errorf("remove namespaces %s-*: %w", prefix, cerr))
			}
			if err := ctx.Err(); err != nil {
				return failErr(fmt.Errorf("interrupted: %w", err))
			}
			if !rep.OK() {
				return failErr(errQuiet)
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&sequences, "sequences", 1000, "random operation sequences to run (0: none)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	cmd.Flags().StringVar(&path, "path", "auto", "how the store calls its transitions: auto, functions (Redis Functions, FCALL) or scripts (EVALSHA)")
	cmd.Flags().BoolVar(&cluster, "cluster", false, "the URL names a Redis Cluster (redis://host:port?addr=host2:port2...)")
	return cmd
}

func validPrefix(s string) bool {
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return s != ""
}

// setFlag sets one of rapid's flags (registered on the default flag set
// by package rapid, which the command line of weir does not parse).
func setFlag(name, value string) {
	if f := flag.Lookup(name); f != nil {
		f.Value.Set(value)
	}
}

// printConformance prints the report as text: a line per test without
// subtests, the output of failures and skips indented under it, then the
// counts.
func printConformance(w io.Writer, r conformanceReport) {
	parents := map[string]bool{}
	for _, res := range r.Results {
		if i := strings.LastIndex(res.Name, "/"); i > 0 {
			parents[res.Name[:i]] = true
		}
	}
	for _, res := range r.Results {
		if parents[res.Name] && len(res.Output) == 0 {
			continue
		}
		tag := map[conformance.Status]string{conformance.Passed: "PASS", conformance.Failed: "FAIL", conformance.Skipped: "SKIP"}[res.Status]
		fmt.Fprintf(w, "%s %s (%v)\n", tag, res.Name, res.Elapsed.Round(time.Millisecond))
		if res.Status != conformance.Passed || parents[res.Name] {
			for _, line := range res.Output {
				for _, l := range strings.Split(line, "\n") {
					fmt.Fprintf(w, "    %s\n", l)
				}
			}
		}
	}
	rate := float64(r.Sequences) / max(r.Elapsed.Seconds(), 1e-9)
	fmt.Fprintf(w, "\nserver %s, namespaces %s-*: passed %d, failed %d, skipped %d; %d random sequences, %.1f sequences/s; %v\n",
		r.Server, r.Namespace, r.Passed, r.Failed, r.Skipped, r.Sequences, rate, r.Elapsed.Round(time.Millisecond))
	if r.Removed {
		fmt.Fprintln(w, "namespaces removed")
	}
}
