//go:build unix

package shell

import (
	"os"
	"os/exec"
	"runtime"
	"syscall"
)

// startScript is what sh runs first: it waits for the worker's go-ahead on
// descriptor 3, given once the command's watchdog is in place, then becomes
// `sh -c COMMAND` (the same process: its PID stays the group's ID, as $$
// says). An end of the pipe without it (the worker died) exits without
// running the command.
const startScript = `read -r _ <&3 || exit 125; exec sh -c "$0" 3<&-`

// watchdogScript is the watchdog's command: it ignores the signals a
// terminal or a command's own `kill 0` sends, waits for the end of its
// standard input (a pipe only the worker holds open, so the end comes when
// the worker closes it or dies, however it dies) and then kills its process
// group, the command's.
const watchdogScript = `trap '' HUP INT QUIT TERM; read _; kill -s KILL 0`

// shellCommand returns the command that runs the shell command run with
// startProc.
func shellCommand(run string) *exec.Cmd {
	return exec.Command("sh", "-c", startScript, run)
}

// proc is a command started in a process group of its own with a watchdog
// in the group, so that killing the group kills what the command started
// too, and the group dies with the worker.
type proc struct {
	cmd  *exec.Cmd
	done chan error // the command's Wait, once it ended

	watchdog *exec.Cmd // nil when it could not start
	hold     *os.File  // the write end of the watchdog's standard input
}

// startProc starts cmd (of shellCommand) as the leader of a new process
// group, with, on Linux, the parent-death signal SIGKILL; then a watchdog
// (another sh) in the same group, reading a pipe the worker holds; and
// only then lets the command run (startScript). When the worker process
// dies, the kernel closes the pipe and the watchdog kills the group; on
// Linux sh also gets SIGKILL from the kernel directly. Nothing the command
// starts can precede the watchdog.
//
// The parent-death signal is sent when the thread that forked the child
// ends, not the process: the Go runtime ends a thread when a goroutine
// locked to it exits, and could so kill a healthy command. So the command
// is started and waited for from a goroutine locked to its thread until
// the command has been reaped: no other goroutine runs on that thread
// meanwhile, and it is not ended (a waiting goroutine holds a thread
// anyway, so the lock costs none).
//
// A watchdog that cannot start (the system is out of processes) leaves the
// command guarded by the parent-death signal alone, which covers sh but
// not what it started; the command still runs.
func startProc(cmd *exec.Cmd) (*proc, error) {
	goRead, goWrite, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer func() { _ = goWrite.Close() }()
	cmd.ExtraFiles = []*os.File{goRead} // descriptor 3
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setParentDeathSignal(cmd.SysProcAttr)
	p := &proc{cmd: cmd, done: make(chan error, 1)}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		err := cmd.Start()
		_ = goRead.Close()
		if err != nil {
			started <- err
			return
		}
		// sh waits for the go-ahead, so its group exists.
		p.startWatchdog()
		_, _ = goWrite.Write([]byte("\n"))
		started <- nil
		p.done <- cmd.Wait()
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return p, nil
}

// startWatchdog starts the watchdog in the command's process group.
func (p *proc) startWatchdog() {
	r, w, err := os.Pipe()
	if err != nil {
		return
	}
	wd := exec.Command("sh", "-c", watchdogScript)
	wd.Stdin = r
	wd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: p.cmd.Process.Pid}
	err = wd.Start()
	_ = r.Close()
	if err != nil {
		_ = w.Close()
		return
	}
	p.watchdog, p.hold = wd, w
}

// kill kills the command's whole process group, watchdog included.
func (p *proc) kill() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
}

// release ends the watchdog after the command ended, leaving alone what
// the command left running in its group (as without a watchdog): the
// watchdog is killed and reaped before its pipe is closed, so it never
// reads the end.
func (p *proc) release() {
	if p.watchdog == nil {
		return
	}
	_ = p.watchdog.Process.Kill()
	_ = p.watchdog.Wait()
	_ = p.hold.Close()
}
