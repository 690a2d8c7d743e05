package rest

import (
	"fmt"
	"net/http"
	"strings"
)

// Config.NoShell: a server that refuses shell commands
// (spec/rest.md#shell-commands).

// refuseShell answers 403 NOSHELL and returns true when the API refuses
// shell commands and shell, the paths of the fields of a body that a shell
// worker would run, is not empty.
func (a *api) refuseShell(w http.ResponseWriter, shell []string) bool {
	if !a.cfg.NoShell || len(shell) == 0 {
		return false
	}
	what := "a shell command"
	if strings.HasSuffix(shell[0], "payload") {
		what = `a payload with a "run" field, which a shell worker runs as a command,`
	}
	writeError(w, http.StatusForbidden, apiError{Code: codeNoShell, Field: shell[0],
		Message: fmt.Sprintf("%s is in %s: this server refuses shell commands (weir serve --no-shell); send payloads for Go handlers", what, shell[0])})
	return true
}
