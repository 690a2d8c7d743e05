package shell

import (
	"errors"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// MaxCommand is Linux's bound, exactly: sh -c starts a command of
// MaxCommand bytes, and not one byte more.
func TestMaxCommandIsLinuxBound(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the per-argument bound is Linux's")
	}
	t.Parallel()
	cmd := ": " + strings.Repeat("x", MaxCommand-2)
	if err := exec.Command("sh", "-c", cmd).Run(); err != nil {
		t.Fatalf("sh -c with %d bytes: %v", len(cmd), err)
	}
	if err := exec.Command("sh", "-c", cmd+"x").Run(); !errors.Is(err, syscall.E2BIG) {
		t.Fatalf("sh -c with %d bytes: %v, want argument list too long", len(cmd)+1, err)
	}
}
