package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// build compiles the pause program as the image gets it (static).
func build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "pause")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestExitsZeroOnSignal: SIGTERM (kubelet stopping the sandbox) and SIGINT
// end it with status 0, and it does not end by itself.
func TestExitsZeroOnSignal(t *testing.T) {
	bin := build(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		cmd := exec.Command(bin)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		waitCaught(t, cmd.Process.Pid, sig)
		select {
		case err := <-done:
			t.Fatalf("pause ended by itself: %v", err)
		case <-time.After(300 * time.Millisecond):
		}
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("after %v: %v, want exit 0", sig, err)
			}
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("pause still running 5s after %v", sig)
		}
	}
}

// waitCaught waits until the process catches sig (its SigCgt mask in
// /proc), so a signal sent early on a loaded machine is not taken for
// pause's fault: before Notify runs, SIGTERM's default action kills.
func waitCaught(t *testing.T, pid int, sig syscall.Signal) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		status, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
		for _, line := range strings.Split(string(status), "\n") {
			if hex, ok := strings.CutPrefix(line, "SigCgt:"); ok {
				mask, err := strconv.ParseUint(strings.TrimSpace(hex), 16, 64)
				if err == nil && mask&(1<<(uint(sig)-1)) != 0 {
					return
				}
			}
		}
	}
	t.Fatalf("pid %d does not catch %v after 10s", pid, sig)
}

// TestReapsChildren: a shell starts a short sleep in the background and
// then becomes pause (exec), so the sleep is pause's child, as an orphan is
// PID 1's; once it ends it must be reaped, not left a zombie.
func TestReapsChildren(t *testing.T) {
	bin := build(t)
	pidFile := filepath.Join(t.TempDir(), "child")
	cmd := exec.Command("sh", "-c", `sleep 0.2 & echo $! >"$1"; exec "$2"`, "sh", pidFile, bin)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}()
	var child int
	for deadline := time.Now().Add(5 * time.Second); child == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		data, _ := os.ReadFile(pidFile)
		child, _ = strconv.Atoi(strings.TrimSpace(string(data)))
	}
	if child == 0 {
		t.Fatal("the shell did not report its child")
	}
	state := ""
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(child) + "/stat")
		if err != nil {
			return // gone: reaped
		}
		// pid (comm) state ...: the state follows the last ')'.
		s := string(stat)
		state = strings.Fields(s[strings.LastIndex(s, ")")+1:])[0]
	}
	t.Errorf("child %d still there in state %s after 5s: not reaped", child, state)
}
