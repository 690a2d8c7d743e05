//go:build !unix

package shell

import "os/exec"

// proc is a started command. Without Unix process groups, killing it kills
// the command's own process only, and nothing kills it when the worker
// dies.
type proc struct {
	cmd  *exec.Cmd
	done chan error
}

// shellCommand returns the command that runs the shell command run.
func shellCommand(run string) *exec.Cmd { return exec.Command("sh", "-c", run) }

func startProc(cmd *exec.Cmd) (*proc, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &proc{cmd: cmd, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()
	return p, nil
}

func (p *proc) kill() { _ = p.cmd.Process.Kill() }

func (p *proc) release() {}
