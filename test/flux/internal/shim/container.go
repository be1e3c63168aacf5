// Package shim is what the test kubelet runs inside a pod's namespaces: it
// builds a container's root file system from the host's (with image layers
// and volumes on top), sets the hostname and credentials, and execs the
// container's command. It also serves the cluster's DNS names.
package shim

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// ContainerSpec is everything RunContainer needs; the kubelet package writes
// it as JSON.
type ContainerSpec struct {
	// Root and Scratch are empty directories on the host. Root becomes the
	// container's "/" (a tmpfs); Scratch holds the overlays' upper layers.
	Root    string
	Scratch string
	// Layers are the image: for a top-level directory name ("opt", "usr"),
	// host directories laid over the host's own, topmost first. A name the
	// host does not have is created from its layers alone.
	Layers map[string][]string
	// Mounts are the container's volumeMounts, resolved to host paths.
	Mounts []Mount
	// Files are written into the container's root before the mounts
	// (/etc/hosts, /etc/resolv.conf, /etc/hostname), as kubelet does.
	Files        map[string]string
	ReadOnlyRoot bool
	Hostname     string
	UID, GID     uint32
	Groups       []uint32
	// DropAllCapabilities and NoNewPrivileges reproduce
	// capabilities.drop: [ALL] and allowPrivilegeEscalation: false.
	DropAllCapabilities bool
	NoNewPrivileges     bool
	Env                 []string
	WorkingDir          string
	Argv                []string
}

// Mount is one bind mount of a host path into the container.
type Mount struct {
	Source   string
	Target   string
	ReadOnly bool
}

// hostOverlays are the host's top-level directories a container sees as
// its image (copy-on-write, private to the container); hostFresh are
// created empty, as in a fresh image. Everything else of the host (/work,
// /boot, ...) is absent.
var (
	hostOverlays = []string{"etc", "opt", "srv", "usr", "var"}
	hostFresh    = map[string]os.FileMode{"home": 0o755, "media": 0o755, "mnt": 0o755, "root": 0o700, "run": 0o755, "tmp": 0o1777}
)

// RunContainer sets up the container and execs its command; it returns
// only when that fails. It must run as root, as PID 1 of fresh mount, UTS
// and PID namespaces.
func RunContainer(s ContainerSpec) error {
	if len(s.Argv) == 0 {
		return errors.New("no command")
	}
	if err := buildRoot(s); err != nil {
		return fmt.Errorf("root file system: %w", err)
	}
	if err := enterRoot(s.Root); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	if err := unix.Sethostname([]byte(s.Hostname)); err != nil {
		return fmt.Errorf("sethostname: %w", err)
	}
	path, err := lookPath(s.Argv[0], s.Env)
	if err != nil {
		return err
	}
	if err := dropPrivileges(s); err != nil {
		return err
	}
	if err := os.Chdir(s.WorkingDir); err != nil {
		return fmt.Errorf("workingDir: %w", err)
	}
	return fmt.Errorf("exec %s: %w", path, syscall.Exec(path, s.Argv, s.Env))
}

func buildRoot(s ContainerSpec) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make / private: %w", err)
	}
	for _, dir := range []string{s.Root, s.Scratch} {
		if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "mode=0755"); err != nil {
			return fmt.Errorf("tmpfs on %s: %w", dir, err)
		}
	}
	var readOnly []string // mount points to make read-only at the end
	readOnly = append(readOnly, s.Root)

	entries, err := os.ReadDir("/")
	if err != nil {
		return err
	}
	names := map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		switch {
		case e.Type()&os.ModeSymlink != 0: // /bin -> usr/bin and friends
			target, err := os.Readlink("/" + name)
			if err != nil {
				return err
			}
			if err := os.Symlink(target, filepath.Join(s.Root, name)); err != nil {
				return err
			}
		case slices.Contains(hostOverlays, name):
			names[name] = true
		}
	}
	for name := range s.Layers {
		names[name] = true
	}
	for _, name := range slices.Sorted(maps.Keys(names)) {
		lowers := slices.Clone(s.Layers[name])
		if slices.Contains(hostOverlays, name) {
			lowers = append(lowers, "/"+name)
		}
		upper, work := filepath.Join(s.Scratch, name, "upper"), filepath.Join(s.Scratch, name, "work")
		target := filepath.Join(s.Root, name)
		for _, d := range []string{upper, work, target} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
		opts := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s", strings.Join(lowers, ":"), upper, work)
		if err := unix.Mount("overlay", target, "overlay", 0, opts); err != nil {
			return fmt.Errorf("overlay /%s (%s): %w", name, opts, err)
		}
		readOnly = append(readOnly, target)
	}
	for name, mode := range hostFresh {
		if _, layered := names[name]; layered {
			continue
		}
		dir := filepath.Join(s.Root, name)
		if err := os.Mkdir(dir, mode); err != nil {
			return err
		}
		if err := os.Chmod(dir, mode); err != nil { // past the umask
			return err
		}
	}
	for _, dir := range []string{"proc", "sys", "dev"} {
		if err := os.Mkdir(filepath.Join(s.Root, dir), 0o755); err != nil {
			return err
		}
	}
	if err := bind("/dev", filepath.Join(s.Root, "dev"), false); err != nil {
		return err
	}
	// The container runtime's /dev/shm: a private 64 MiB tmpfs.
	if err := unix.Mount("shm", filepath.Join(s.Root, "dev/shm"), "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777,size=65536k"); err != nil {
		return fmt.Errorf("/dev/shm: %w", err)
	}
	if err := bind("/sys", filepath.Join(s.Root, "sys"), true); err != nil {
		return err
	}
	for _, path := range slices.Sorted(maps.Keys(s.Files)) {
		full := filepath.Join(s.Root, path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, []byte(s.Files[path]), 0o644); err != nil {
			return err
		}
	}
	for _, m := range s.Mounts {
		if err := mountVolume(s.Root, m); err != nil {
			return fmt.Errorf("volumeMount %s: %w", m.Target, err)
		}
	}
	if s.WorkingDir != "" {
		// The runtime creates a missing working directory (runc does).
		if err := os.MkdirAll(filepath.Join(s.Root, s.WorkingDir), 0o755); err != nil {
			return fmt.Errorf("workingDir %s: %w", s.WorkingDir, err)
		}
	}
	if s.ReadOnlyRoot {
		for _, mp := range readOnly {
			if err := unix.Mount("", mp, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""); err != nil {
				return fmt.Errorf("read-only %s: %w", mp, err)
			}
		}
	}
	return nil
}

func mountVolume(root string, m Mount) error {
	if !filepath.IsAbs(m.Target) || filepath.Clean(m.Target) != m.Target {
		return errors.New("mountPath must be an absolute, clean path")
	}
	target := filepath.Join(root, m.Target)
	info, err := os.Stat(m.Source)
	if err != nil {
		return err
	}
	if strings.HasPrefix(m.Target, "/dev/") || strings.HasPrefix(m.Target, "/sys/") || strings.HasPrefix(m.Target, "/proc/") {
		// These are the host's own file systems bound in: only mount over
		// what exists, never create anything in them.
		if _, err := os.Stat(target); err != nil {
			return fmt.Errorf("only existing paths can be mounted over under /dev, /sys and /proc: %w", err)
		}
	} else if info.IsDir() {
		if err := os.MkdirAll(target, 0o755); err != nil {
			return err
		}
	} else {
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		if f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY, 0o644); err != nil {
			return err
		} else {
			f.Close()
		}
	}
	return bind(m.Source, target, m.ReadOnly)
}

func bind(source, target string, readOnly bool) error {
	if err := unix.Mount(source, target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s on %s: %w", source, target, err)
	}
	if readOnly {
		if err := unix.Mount("", target, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""); err != nil {
			return fmt.Errorf("read-only %s: %w", target, err)
		}
	}
	return nil
}

func enterRoot(root string) error {
	if err := os.Chdir(root); err != nil {
		return err
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		return err
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detach the host root: %w", err)
	}
	return os.Chdir("/")
}

func dropPrivileges(s ContainerSpec) error {
	groups := make([]int, len(s.Groups))
	for i, g := range s.Groups {
		groups[i] = int(g)
	}
	if err := syscall.Setgroups(groups); err != nil {
		return fmt.Errorf("setgroups: %w", err)
	}
	if s.DropAllCapabilities {
		for c := 0; c <= unix.CAP_LAST_CAP; c++ {
			if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
				return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
			}
		}
	}
	if err := syscall.Setgid(int(s.GID)); err != nil {
		return fmt.Errorf("setgid: %w", err)
	}
	if err := syscall.Setuid(int(s.UID)); err != nil {
		return fmt.Errorf("setuid: %w", err)
	}
	if s.DropAllCapabilities && s.UID == 0 {
		// A root process keeps its permitted set across setuid(0); clear it.
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var data [2]unix.CapUserData
		if err := unix.Capset(&hdr, &data[0]); err != nil {
			return fmt.Errorf("capset: %w", err)
		}
	}
	if s.NoNewPrivileges {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("no_new_privs: %w", err)
		}
	}
	return nil
}

// lookPath finds the command as the container runtime does: a name without
// a slash is searched in the container's own PATH.
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		full := filepath.Join(dir, name)
		if info, err := os.Stat(full); err == nil && !info.IsDir() && info.Mode()&0o111 != 0 {
			return full, nil
		}
	}
	return "", fmt.Errorf("exec: %q: executable file not found in $PATH (%s)", name, path)
}
