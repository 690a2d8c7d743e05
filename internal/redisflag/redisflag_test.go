package redisflag

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestClusterOptions(t *testing.T) {
	for in, want := range map[string][]string{
		"127.0.0.1:7001":                    {"127.0.0.1:7001"},
		"a:1,b:2, c:3 ,":                    {"a:1", "b:2", "c:3"},
		"[::1]:7001,localhost:7002":         {"[::1]:7001", "localhost:7002"},
		"redis://a:1?addr=b:2&addr=c:3":     {"a:1", "b:2", "c:3"},
		"rediss://user:secret@a:1?addr=b:2": {"a:1", "b:2"},
	} {
		opt, err := ClusterOptions(in)
		if err != nil || !slices.Equal(opt.Addrs, want) {
			t.Errorf("%q: %v, %v, want %v", in, opt, err, want)
		}
	}
	opt, err := ClusterOptions("redis://u:pw@a:1?addr=b:2")
	if err != nil || opt.Username != "u" || opt.Password != "pw" {
		t.Errorf("credentials of a cluster URL: %+v, %v", opt, err)
	}
	for in, want := range map[string]string{
		"":             "want host:port,...",
		",, ,":         "want host:port,...",
		"a":            `cluster address "a": want host:port`,
		"a:1,:2":       `cluster address ":2"`,
		"a:":           `cluster address "a:"`,
		"redis://[::1": "cluster URL",
		"http://a:1":   "cluster URL",
	} {
		if _, err := ClusterOptions(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error with %q", in, err, want)
		}
	}
}

func TestResolve(t *testing.T) {
	for _, c := range []struct {
		flagURL, flagCluster, envURL, envCluster string
		url, cluster                             string
		err                                      error
	}{
		{},
		{flagURL: "redis://a", envURL: "redis://b", envCluster: "c:1", url: "redis://a"},
		{flagCluster: "c:1", envURL: "redis://b", cluster: "c:1"},
		{envURL: "redis://b", url: "redis://b"},
		{envCluster: "c:1", cluster: "c:1"},
		{envURL: "redis://b", envCluster: "c:1", url: "redis://b"},
		{flagURL: "redis://a", flagCluster: "c:1", err: ErrBoth},
	} {
		t.Setenv(EnvURL, c.envURL)
		t.Setenv(EnvCluster, c.envCluster)
		url, cluster, err := Resolve(c.flagURL, c.flagCluster)
		if url != c.url || cluster != c.cluster || !errors.Is(err, c.err) {
			t.Errorf("%+v: %q %q %v", c, url, cluster, err)
		}
	}
}

func TestAllowUnsafeServer(t *testing.T) {
	for v, want := range map[string]bool{"": false, "0": false, "1": true} {
		t.Setenv(EnvAllowUnsafe, v)
		if got, err := AllowUnsafeServer(); got != want || err != nil {
			t.Errorf("%s=%q: %v, %v; want %v", EnvAllowUnsafe, v, got, err, want)
		}
	}
	for _, v := range []string{"yes", "true", "2"} {
		t.Setenv(EnvAllowUnsafe, v)
		if got, err := AllowUnsafeServer(); got || err == nil || !strings.Contains(err.Error(), EnvAllowUnsafe+` "`+v+`"`) {
			t.Errorf("%s=%q: %v, %v; want an error naming it", EnvAllowUnsafe, v, got, err)
		}
	}
}
