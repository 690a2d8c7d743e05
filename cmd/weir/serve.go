package main

import (
	"fmt"
	"log/slog"
	"net"

	"github.com/spf13/cobra"
)

// apiFlags are the flags of the REST API, shared by serve and dev.
type apiFlags struct {
	addr    string
	token   string
	noToken bool // dev only
	origins []string
	maxBody int64
}

func (f *apiFlags) register(c *cobra.Command, defaultAddr string) {
	c.Flags().StringVar(&f.addr, "http", defaultAddr, "address the REST API listens on (host:port; port 0 picks a free one)")
	c.Flags().StringVar(&f.token, "token", "", fmt.Sprintf("bearer token every /v1 route requires, at least %d characters (default $WEIR_TOKEN); required off loopback", minTokenLen))
	c.Flags().StringSliceVar(&f.origins, "origin", nil, "web origin (scheme://host[:port]) whose pages may call the API besides its own, such as the public address of a proxy in front; repeatable")
	c.Flags().Int64Var(&f.maxBody, "max-body", defaultMaxBody, "largest request body accepted, in bytes (larger: 413)")
}

// check validates the flags and returns the token (the flag's, else
// WEIR_TOKEN's, else a new one when generate is set: generated says so).
func (f *apiFlags) check(c *cobra.Command, generate bool) (token string, generated bool, err error) {
	if f.maxBody < 1 {
		return "", false, usageErr(fmt.Errorf("--max-body must be at least 1, got %d", f.maxBody))
	}
	for _, o := range f.origins {
		if _, err := canonicalOrigin(o); err != nil {
			return "", false, usageErr(fmt.Errorf("--origin %w", err))
		}
	}
	if token, generated, err = f.resolveToken(c, generate); err != nil {
		return "", false, err
	}
	return token, generated, checkListen("--http", f.addr, token)
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
			"without one it only listens on a loopback address, and answers only requests to\n" +
			"that address. Requests from web pages of other origins are refused (spec/rest.md).\n" +
			"It prints WEIR_HTTP_URL=<url> on stdout once listening, and stops gracefully on\n" +
			"SIGINT or SIGTERM.",
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
			ln, err := af.listen()
			if err != nil {
				return err
			}
			h := newAPI(cn.store, apiConfig{
				Token: token, MaxBody: af.maxBody, Limits: cn.store.Config().Limits, Ping: cn.ping, Origins: af.origins,
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
