package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/weirflow/weir/dashboard"
	"github.com/weirflow/weir/internal/command"
	"github.com/weirflow/weir/rest"
)

// apiFlags are the flags of the REST API, shared by serve and dev.
type apiFlags struct {
	addr       string
	token      string
	noToken    bool // dev only
	readTokens []string
	// readGenerated: readTokens holds one token that dev generated.
	readGenerated bool
	noShell       bool
	origins       []string
	maxBody       int64
}

func (f *apiFlags) register(c *cobra.Command, defaultAddr string) {
	c.Flags().StringVar(&f.addr, "http", defaultAddr, "address the REST API listens on (host:port; port 0 picks a free one)")
	c.Flags().StringVar(&f.token, "token", "", fmt.Sprintf("bearer token every /v1 route requires, at least %d characters (default $WEIR_TOKEN); required off loopback", rest.MinTokenLen))
	c.Flags().StringArrayVar(&f.readTokens, "read-token", nil, "bearer token that may only read (GET and HEAD), besides --token; repeatable (default $WEIR_READ_TOKEN)")
	c.Flags().BoolVar(&f.noShell, "no-shell", false, "refuse shell commands over the API (workflows with run, payloads with a run field): 403 NOSHELL (default: on when --http is not a loopback address; --no-shell=false allows them there)")
	c.Flags().StringSliceVar(&f.origins, "origin", nil, "web origin (scheme://host[:port]) whose pages may call the API besides its own, such as the public address of a proxy in front; repeatable")
	c.Flags().Int64Var(&f.maxBody, "max-body", rest.DefaultMaxBody, "largest request body accepted, in bytes (larger: 413)")
}

// check validates the flags and returns the token (the flag's, else
// WEIR_TOKEN's, else a new one when generate is set: generated says so).
// It resolves f.readTokens and f.noShell.
func (f *apiFlags) check(c *cobra.Command, generate bool) (token string, generated bool, err error) {
	if f.maxBody < 1 {
		return "", false, command.Usage(fmt.Errorf("--max-body must be at least 1, got %d", f.maxBody))
	}
	for _, o := range f.origins {
		if err := rest.CheckOrigin(o); err != nil {
			return "", false, command.Usage(fmt.Errorf("--origin %w", err))
		}
	}
	if token, generated, err = f.resolveToken(c, generate); err != nil {
		return "", false, err
	}
	if err := checkListen("--http", f.addr, token); err != nil {
		return "", false, err
	}
	if err := f.resolveReadTokens(c, token, generated); err != nil {
		return "", false, err
	}
	if !c.Flags().Changed("no-shell") {
		f.noShell = !isLoopback(f.addr)
	}
	return token, generated, nil
}

// listen opens the API's listener.
func (f *apiFlags) listen() (net.Listener, error) {
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return nil, command.Fail(fmt.Errorf("--http %s: %w", f.addr, err))
	}
	return ln, nil
}

func newServeCmd(g *globalFlags) *cobra.Command {
	var af apiFlags
	c := &cobra.Command{
		Use:   "serve",
		Short: "Serve the REST API (spec/rest.md) on a shared Redis",
		Long: "serve answers the REST API of spec/rest.md against the Redis of --redis or\n" +
			"WEIR_REDIS_URL. Every /v1 route requires the bearer token of --token or WEIR_TOKEN;\n" +
			"without one it only listens on a loopback address, and answers only requests to\n" +
			"that address. Requests from web pages of other origins are refused (spec/rest.md).\n" +
			"Tokens of --read-token or WEIR_READ_TOKEN may only read. Off loopback it refuses\n" +
			"shell commands (--no-shell): only jobs and tasks with payloads for Go handlers.\n" +
			"It serves the web dashboard (spec/dashboard.md) at /. It prints\n" +
			"WEIR_HTTP_URL=<url> on stdout once listening, and stops gracefully on\n" +
			"SIGINT or SIGTERM.",
		Example: "  WEIR_TOKEN=... weir serve --redis redis://127.0.0.1:6379/0\n" +
			"  weir serve --http 0.0.0.0:8080 --token \"$TOKEN\" --read-token \"$READ_TOKEN\"",
		Args: exactArgs(0),
		RunE: func(c *cobra.Command, args []string) error {
			token, _, err := af.check(c, false)
			if err != nil {
				return err
			}
			ctx := c.Context()
			cn, err := g.open(ctx, false)
			if err != nil {
				return err
			}
			defer cn.Close()
			h, err := rest.NewHandler(rest.Config{
				Store: cn.store, Token: token, ReadTokens: af.readTokens, NoShell: af.noShell,
				MaxBody: af.maxBody, Limits: cn.store.Config().Limits, Ping: cn.ping, Origins: af.origins,
				Logger:    slog.New(slog.NewTextHandler(c.ErrOrStderr(), nil)),
				Metrics:   metricsHandler(cn.store, nil),
				Dashboard: dashboard.Handler(),
			})
			if err != nil {
				return command.Usage(err)
			}
			ln, err := af.listen()
			if err != nil {
				return err
			}
			tr, err := startTracing(ctx, "serve", c.ErrOrStderr())
			if err != nil {
				_ = ln.Close()
				return err
			}
			defer tr.shutdown()
			fmt.Fprintf(c.OutOrStdout(), "WEIR_HTTP_URL=http://%s\n", ln.Addr())
			fmt.Fprintf(c.ErrOrStderr(), "weir serve: dashboard at http://%s/\n", ln.Addr())
			if err := serveAPI(ctx, ln, tr.handler(h)); err != nil {
				return command.Fail(err)
			}
			fmt.Fprintln(c.ErrOrStderr(), "weir serve: stopped")
			return nil
		},
	}
	af.register(c, "127.0.0.1:8080")
	return c
}

// isLoopback reports whether the listen address addr (host:port) only
// accepts connections from this machine.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkListen refuses to serve the API on a non-loopback address without a
// token.
func checkListen(flag, addr, token string) error {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return command.Usage(fmt.Errorf("%s %q: %w", flag, addr, err))
	}
	if token == "" && !isLoopback(addr) {
		return command.Usage(fmt.Errorf("%s %s is not a loopback address: set a token (--token or WEIR_TOKEN) to serve the API there", flag, addr))
	}
	return nil
}

// serveAPI serves h on ln until ctx is done, then shuts the server down
// gracefully: it stops accepting, lets requests in flight finish (up to
// shutdownTimeout) and returns once every connection is closed. The REST
// handler ends its event streams as the shutdown begins (rest.Config's
// StreamFor), so an open dashboard tab does not hold it.
func serveAPI(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		WriteTimeout:      time.Minute,
		IdleTimeout:       2 * time.Minute,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve http: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	err := srv.Shutdown(sctx)
	if err != nil {
		_ = srv.Close()
	}
	_ = <-errc // http.ErrServerClosed
	return err
}
