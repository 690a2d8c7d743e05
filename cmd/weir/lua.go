package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/command"
	"github.com/weirflow/weir/redisstore"
)

// newLuaCmd is weir lua [TRANSITION]: the Lua the Redis store runs.
func newLuaCmd() *cobra.Command {
	var list, asJSON bool
	c := &cobra.Command{
		Use:   "lua [TRANSITION]",
		Short: "Print the Lua the Redis store runs: the function library, or one transition's script",
		Long: "weir lua prints the function library the Redis store loads (FUNCTION LOAD, then FCALL),\n" +
			"as this build of weir makes it from its sources (redisstore/lua/scripts, one file per\n" +
			"transition, and redisstore/lua/include, spec/scripts.md). weir lua TRANSITION prints the\n" +
			"script that transition runs as on servers without Redis Functions (EVALSHA). --list\n" +
			"prints the library's name and every transition with its script's SHA-1 (--json: as\n" +
			"{\"library\": NAME, \"scripts\": [{\"name\", \"sha1\"}]}). Nothing is sent to a server.",
		Example: "  weir lua --list\n" +
			"  weir lua --list --json\n" +
			"  weir lua finish",
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 1 || list && len(args) > 0 {
				return command.Usage(fmt.Errorf("weir lua takes a transition name or --list, got %s (usage: %s)", strings.Join(args, " "), c.UseLine()))
			}
			if asJSON && !list {
				return command.Usage(fmt.Errorf("weir lua: --json goes with --list (a script is printed as it is)"))
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			out := c.OutOrStdout()
			switch {
			case list && asJSON:
				return printJSON(out, luaListJSON())
			case list:
				printLuaList(out)
			case len(args) == 1:
				src, _, ok := redisstore.LuaScript(args[0])
				if !ok {
					return command.Usage(fmt.Errorf("weir lua: no transition %q; the transitions are %s", args[0], strings.Join(redisstore.LuaScripts(), ", ")))
				}
				_, _ = io.WriteString(out, src)
			default:
				_, src := redisstore.LuaLibrary()
				_, _ = io.WriteString(out, src)
			}
			return nil
		},
	}
	c.Flags().BoolVar(&list, "list", false, "print the library's name and each transition with its script's SHA-1")
	c.Flags().BoolVar(&asJSON, "json", false, "with --list, print the library's name and the scripts as JSON (docs/cli.md)")
	return c
}

// printLuaList writes the library's name, then per transition its name and
// its script's SHA-1.
func printLuaList(w io.Writer) {
	name, _ := redisstore.LuaLibrary()
	fmt.Fprintf(w, "library %s\n", name)
	for _, n := range redisstore.LuaScripts() {
		_, sha, _ := redisstore.LuaScript(n)
		fmt.Fprintf(w, "%-16s %s\n", n, sha)
	}
}

// luaList is weir lua --list --json: the library's name, then per
// transition its name and its script's SHA-1.
type luaList struct {
	Library string      `json:"library"`
	Scripts []luaScript `json:"scripts"`
}

// luaScript is one transition of a luaList.
type luaScript struct {
	Name string `json:"name"`
	SHA1 string `json:"sha1"`
}

func luaListJSON() luaList {
	l := luaList{Scripts: []luaScript{}}
	l.Library, _ = redisstore.LuaLibrary()
	for _, n := range redisstore.LuaScripts() {
		_, sha, _ := redisstore.LuaScript(n)
		l.Scripts = append(l.Scripts, luaScript{n, sha})
	}
	return l
}
