//go:build unix && !linux

package shell

import "syscall"

// setParentDeathSignal does nothing: only Linux has a parent-death signal;
// the watchdog (startProc) is the guard here.
func setParentDeathSignal(*syscall.SysProcAttr) {}
