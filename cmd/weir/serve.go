package main

import (
	"fmt"
	"log/slog"
	"net"
	"os"

	"github.com/spf13/cobra"
)

// apiFlags are the flags of the REST API, shared by serve and dev.
type apiFlags struct {
	addr    string
	token   string
	maxBody int64
}

func (f *apiFlags) register(c *cobra.Command, defaultAddr string) {
	c.Flags().StringVar(&f.addr, "http", defaultAddr, "address the REST API listens on (host:port; port 0 picks a free one)")
	c.Flags().StringVar(&f.token, "token", "", "bearer token every /v1 route requires (default $WEIR_TOKEN); required off loopback")
	c.Flags().Int64Var(&f.maxBody, "max-body", defaultMaxBody, "largest request body accepted, in bytes (larger: 413)")
}

// check validates the flags and returns the token (the flag's, else
// WEIR_TOKEN's).
func (f *apiFlags) check() (string, error) {
	token := f.token
	if token == "" {
		token = os.Getenv("WEIR_TOKEN")
	}
	if f.maxBody < 1 {
		return "", usageErr(fmt.Errorf("--max-body must be at least 1, got %d", f.maxBody))
	}
	return token, checkListen("--http", f.addr, token)
}

// listen opens the API's listener.
func (f *apiFlags) listen() (net.Listener, error) {
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return nil, failErr(fmt.Errorf("--http %s: %w", f.addr, err))
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
			"without one it only listens on a loopback address. It prints WEIR_HTTP_URL=<url>\n" +
			"on stdout once listening, and stops gracefully on SIGINT or SIGTERM.",
		Args: exactArgs(0),
		RunE: func(c *cobra.Command, args []string) error {
			token, err := af.check()
			if err != nil {
				return err
			}
			ctx := c.Context()
			cn, err := g.open(ctx, false)
			if err != nil {
				return err
			}
			defer cn.Close()
			ln, err := af.listen()
			if err != nil {
				return err
			}
			h := newAPI(cn.store, apiConfig{
				Token: token, MaxBody: af.maxBody, Limits: cn.store.Config().Limits, Ping: cn.ping,
				Logger: slog.New(slog.NewTextHandler(c.ErrOrStderr(), nil)),
			})
			fmt.Fprintf(c.OutOrStdout(), "WEIR_HTTP_URL=http://%s\n", ln.Addr())
			if err := serveAPI(ctx, ln, h); err != nil {
				return failErr(err)
			}
			fmt.Fprintln(c.ErrOrStderr(), "weir serve: stopped")
			return nil
		},
	}
	af.register(c, "127.0.0.1:8080")
	return c
}
