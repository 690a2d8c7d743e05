// Command weir-conformance runs weir's store conformance suite
// (spec/conformance.md, package conformance) with the Lua store against a
// Redis-protocol server:
//
//	weir-conformance [--redis URL | --cluster HOST:PORT,...] [--partitions N] [--namespace PREFIX] [--sequences N] [--json] [--path auto|functions|scripts]
//
// It is a command of its own, not a subcommand of weir: the suite's random
// sequences are drawn by pgregory.net/rapid, which imports package
// testing, and the weir binary links neither.
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
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/command"
	"github.com/weirflow/weir/internal/redisflag"
	"github.com/weirflow/weir/redisstore"
	"github.com/weirflow/weir/redisstore/redisconformance"
)

// Exit statuses.
const (
	exitOK    = command.ExitOK    // every test passed and the namespaces are removed
	exitFail  = command.ExitFail  // a test failed, or the namespaces could not be removed
	exitUsage = command.ExitUsage // usage error
)

func main() { command.Main("weir-conformance", newRoot) }

// newRoot is the command, writing to stdout and stderr.
func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := newConformanceCmd()
	root.SetOut(stdout)
	root.SetErr(stderr)
	return root
}

// conformanceReport is what `weir-conformance --json` prints.
type conformanceReport struct {
	Server string `json:"server"` // the address(es)
	// ServerName, ServerVersion and RedisVersion are what the server's
	// INFO says it is (redisstore.IdentifyServer): "valkey", "8.0.1",
	// "7.2.4"; empty where it did not say.
	ServerName    string `json:"server_name"`
	ServerVersion string `json:"server_version"`
	RedisVersion  string `json:"redis_version"`
	// Path is the call path the stores took, "functions" or "scripts";
	// AskedPath is --path (auto, functions or scripts).
	Path      string `json:"path"`
	AskedPath string `json:"asked_path"`
	Namespace string `json:"namespace"` // the prefix of every namespace the run used
	// Partitions is --partitions: every case but the golden scenarios and
	// the regression tapes ran in namespaces of that many partitions
	// (0: each case's own, one).
	Partitions int `json:"partitions,omitempty"`
	// Removed reports that no key of the run's namespaces is left.
	Removed bool `json:"removed"`
	conformance.Report
}

func newConformanceCmd() *cobra.Command {
	var (
		redisURL   string
		namespace  string
		sequences  int
		asJSON     bool
		cluster    string
		path       string
		partitions int
	)
	cmd := &cobra.Command{
		Use:   "weir-conformance",
		Short: "Run the store conformance suite against a Redis-protocol server",
		Long: "weir-conformance runs weir's conformance suite (spec/conformance.md) with the Lua store on\n" +
			"the server of --redis / WEIR_REDIS_URL (or the Redis Cluster of --cluster / WEIR_REDIS_CLUSTER;\n" +
			"a flag beats both variables, WEIR_REDIS_URL beats WEIR_REDIS_CLUSTER), in namespaces of its own (\"<prefix>-<n>\", prefix\n" +
			"from --namespace or random) that it removes afterwards. It prints what the server is (INFO) and the\n" +
			"call path the stores took, then every test that passed, failed (with the reproducing sequence) or\n" +
			"was skipped (with why), and exits 1 when one failed. A server weir refuses (KeyDB,\n" +
			"docs/compatibility.md) stops it before any test; WEIR_ALLOW_UNSAFE_SERVER=1 runs it there anyway.",
		SilenceUsage:  true,
		SilenceErrors: true,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) != 0 {
				return command.Usage(fmt.Errorf("weir-conformance takes no arguments, got %d (usage: %s)", len(args), c.UseLine()))
			}
			return nil
		},
		RunE: func(c *cobra.Command, _ []string) error {
			if sequences < 0 {
				return command.Usage(fmt.Errorf("--sequences %d: want a count", sequences))
			}
			if partitions < 0 || partitions > engine.MaxPartitions {
				return command.Usage(fmt.Errorf("--partitions %d: want 0 (each case's own, one) to %d", partitions, engine.MaxPartitions))
			}
			callPath, ok := map[string]redisstore.CallPath{"auto": redisstore.PathAuto, "functions": redisstore.PathFunctions, "scripts": redisstore.PathScripts}[path]
			if !ok {
				return command.Usage(fmt.Errorf("--path %q: want auto, functions or scripts", path))
			}
			u, clusterAddrs, err := redisflag.Resolve(redisURL, cluster)
			if err != nil {
				return command.Usage(err)
			}
			if u == "" && clusterAddrs == "" {
				return command.Usage(fmt.Errorf("no Redis: give --redis URL or set WEIR_REDIS_URL (or --cluster / WEIR_REDIS_CLUSTER for a Redis Cluster)"))
			}
			prefix := namespace
			if prefix == "" {
				b := make([]byte, 6)
				rand.Read(b)
				prefix = "weirconf-" + hex.EncodeToString(b)
			}
			if len(prefix) > 40 || !validPrefix(prefix) {
				return command.Usage(fmt.Errorf("--namespace %q: the prefix must match ^[A-Za-z0-9_.-]{1,40}$", prefix))
			}
			var (
				rdb    redis.UniversalClient
				server string // the address(es), never the URL's password
			)
			if clusterAddrs != "" {
				opt, err := redisflag.ClusterOptions(clusterAddrs)
				if err != nil {
					return command.Usage(fmt.Errorf("--cluster: %w", err))
				}
				if opt.ReadTimeout == 0 && opt.MaxRetries == 0 { // the URL did not set them
					opt.ReadTimeout, opt.MaxRetries = checkReadTimeout, -1
				}
				rdb, server = redis.NewClusterClient(opt), strings.Join(opt.Addrs, ",")
			} else {
				opt, err := redis.ParseURL(u)
				if err != nil {
					return command.Usage(fmt.Errorf("redis URL: %w", err))
				}
				if opt.ReadTimeout == 0 && opt.MaxRetries == 0 { // the URL did not set them
					opt.ReadTimeout, opt.MaxRetries = checkReadTimeout, -1
				}
				rdb, server = redis.NewClient(opt), opt.Addr
			}
			defer func() { _ = rdb.Close() }()
			ctx := c.Context()
			if err := rdb.Ping(ctx).Err(); err != nil {
				return command.Fail(fmt.Errorf("connect to %s: %w", server, err))
			}
			allow, err := redisflag.AllowUnsafeServer()
			if err != nil {
				return command.Usage(err)
			}
			// What the server is, and the path the stores take there (a
			// store of the run's own, which writes no key: Load loads the
			// library or the scripts); a server redisstore refuses stops
			// the run here.
			srv, err := redisstore.IdentifyServer(ctx, rdb)
			if err != nil {
				return command.Fail(fmt.Errorf("server %s: %w", server, err))
			}
			base := redisstore.Options{Path: callPath, AllowUnsafeServer: allow}
			probeOpts := base
			probeOpts.Namespace = prefix + "-0"
			probe, err := redisstore.New(rdb, probeOpts)
			if err != nil {
				return command.Fail(err)
			}
			if err := probe.Load(ctx); err != nil {
				return command.Fail(fmt.Errorf("server %s (%s), --path %s: %w", server, srv, path, err))
			}
			if n, err := redisconformance.Count(ctx, rdb, prefix); err != nil {
				return command.Fail(fmt.Errorf("scan %s: %w", server, err))
			} else if n > 0 {
				return command.Usage(fmt.Errorf("namespaces %q-* already hold %d keys: pick another --namespace", prefix, n))
			}
			// rapid must not write fail files into the working directory;
			// rapid.checks is how many sequences one rapid.Check runs: a
			// share of each of the suite's 8 parallel batches.
			setFlag("rapid.nofailfile", "true")
			setFlag("rapid.checks", strconv.Itoa(min(100, max(1, (sequences+7)/8))))
			opts := []conformance.Option{conformance.Sequences(sequences), conformance.Partitions(partitions)}
			rep := conformance.RunReport(ctx, redisconformance.NewStoreOptions(prefix, base, 0, rdb), opts...)
			// Remove the run's keys even when ctx was canceled.
			clean, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			out := conformanceReport{Server: server, ServerName: srv.Name, ServerVersion: srv.Version, RedisVersion: srv.RedisVersion,
				Path: probe.CallPath(), AskedPath: path, Namespace: prefix, Partitions: partitions, Report: rep}
			cerr := redisconformance.Clean(clean, rdb, prefix)
			if cerr == nil {
				n, err := redisconformance.Count(clean, rdb, prefix)
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
					return command.Fail(err)
				}
			} else {
				printConformance(w, out)
			}
			if cerr != nil {
				return command.Fail(fmt.Errorf("remove namespaces %s-*: %w", prefix, cerr))
			}
			if err := ctx.Err(); err != nil {
				return command.Fail(fmt.Errorf("interrupted: %w", err))
			}
			if !rep.OK() {
				return command.Fail(command.ErrQuiet)
			}
			return nil
		},
	}
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return command.Usage(err) })
	cmd.Flags().StringVar(&redisURL, "redis", "", "Redis URL (redis:// or rediss://); default $WEIR_REDIS_URL")
	cmd.Flags().StringVar(&namespace, "namespace", "", "prefix of the run's namespaces (default weirconf-<random>)")
	cmd.Flags().IntVar(&sequences, "sequences", 1000, "random operation sequences to run (0: none)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	cmd.Flags().StringVar(&path, "path", "auto", "how the store calls its transitions: auto, functions (Redis Functions, FCALL) or scripts (EVALSHA)")
	cmd.Flags().IntVar(&partitions, "partitions", 0, "run every case but the golden scenarios and regression tapes in namespaces of N partitions (spec/partitions.md; 0: one)")
	cmd.Flags().StringVar(&cluster, "cluster", "", "Redis Cluster seed addresses, `host:port,...` (or a redis:// cluster URL, more seeds in addr=); default $WEIR_REDIS_CLUSTER")
	return cmd
}

// checkReadTimeout is how long the check waits for a reply, with no
// retry: go-redis's default (3 s, then the command again) turns a slow
// reply on a loaded server into a second call, which the store answers as
// a repeat ("unchanged"), and a conformance failure that is not one.
const checkReadTimeout = 30 * time.Second

func validPrefix(s string) bool {
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return s != ""
}

// setFlag sets one of rapid's flags (registered on the default flag set
// by package rapid, which this command's command line does not parse).
func setFlag(name, value string) {
	if f := flag.Lookup(name); f != nil {
		if err := f.Value.Set(value); err != nil {
			panic(fmt.Sprintf("set -%s=%s: %v", name, value, err)) // this command's own values: a bug
		}
	}
}

// printConformance prints the report as text: what the server is and the
// call path the stores took, a line per test without subtests, the output
// of failures and skips indented under it, then the counts.
func printConformance(w io.Writer, r conformanceReport) {
	srv := redisstore.Server{Name: r.ServerName, Version: r.ServerVersion, RedisVersion: r.RedisVersion}
	fmt.Fprintf(w, "server %s: %s; call path %s (--path %s)\n\n", r.Server, srv, r.Path, r.AskedPath)
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
	if r.Partitions > 0 {
		fmt.Fprintf(w, "\nnamespaces of %d partitions (but the golden scenarios' and regression tapes')", r.Partitions)
	}
	fmt.Fprintf(w, "\nserver %s, namespaces %s-*: passed %d, failed %d, skipped %d; %d random sequences, %.1f sequences/s; %v\n",
		r.Server, r.Namespace, r.Passed, r.Failed, r.Skipped, r.Sequences, rate, r.Elapsed.Round(time.Millisecond))
	if r.Removed {
		fmt.Fprintln(w, "namespaces removed")
	}
}
