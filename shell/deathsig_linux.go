package shell

import "syscall"

// setParentDeathSignal makes the kernel SIGKILL the child when the thread
// that forked it ends (see startProc).
func setParentDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
