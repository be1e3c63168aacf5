package kubelet

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// volumeTimestamp names the one generation of ConfigMap and Secret data a
// volume holds, as kubelet's atomic writer does (..<timestamp>).
const volumeTimestamp = "..2026_01_01_00_00_00.000000001"

// hostVolume is a pod volume as the host holds it.
type hostVolume struct {
	path string
	// readOnly is the volume source's own readOnly, which makes every
	// mount of it read-only whatever the mount says.
	readOnly bool
}

// makeVolumes creates the pod's volumes under dir (a persistentVolumeClaim
// volume is its claim's directory in claims, wherever that is) and returns
// them by name.
func makeVolumes(dir string, pod *corev1.PodSpec, namespace string, objs Objects, claims map[string]string) (map[string]hostVolume, error) {
	fsGroup := -1
	if sc := pod.SecurityContext; sc != nil && sc.FSGroup != nil {
		fsGroup = int(*sc.FSGroup)
	}
	vols := map[string]hostVolume{}
	for _, v := range pod.Volumes {
		path := filepath.Join(dir, v.Name)
		var err error
		switch {
		case v.PersistentVolumeClaim != nil:
			// The directory itself, not a copy, is what makes the state
			// outlive the pod, the run and Close. It is left as the test
			// made it: fsGroup is not applied, as on volumes without
			// ownership management (hostPath, the local-path provisioner),
			// because doing it would chown the test's files recursively.
			claimPath, err := claimDir(claims, namespace, v)
			if err != nil {
				return nil, err
			}
			vols[v.Name] = hostVolume{path: claimPath, readOnly: v.PersistentVolumeClaim.ReadOnly}
			continue
		case v.EmptyDir != nil:
			// medium: Memory would be a tmpfs; a directory behaves the same
			// for these tests (sizeLimit is not enforced).
			err = makeEmptyDir(path, fsGroup)
		case v.ConfigMap != nil:
			cm := objs.configMap(namespace, v.ConfigMap.Name)
			if cm == nil {
				if v.ConfigMap.Optional != nil && *v.ConfigMap.Optional {
					err = writeAtomic(path, nil, v.ConfigMap.Items, v.ConfigMap.DefaultMode, fsGroup)
					break
				}
				return nil, fmt.Errorf("volume %s: ConfigMap %s/%s not found", v.Name, namespace, v.ConfigMap.Name)
			}
			data := map[string][]byte{}
			for k, s := range cm.Data {
				data[k] = []byte(s)
			}
			maps.Copy(data, cm.BinaryData)
			err = writeAtomic(path, data, v.ConfigMap.Items, v.ConfigMap.DefaultMode, fsGroup)
		case v.Secret != nil:
			s := objs.secret(namespace, v.Secret.SecretName)
			if s == nil {
				if v.Secret.Optional != nil && *v.Secret.Optional {
					err = writeAtomic(path, nil, v.Secret.Items, v.Secret.DefaultMode, fsGroup)
					break
				}
				return nil, fmt.Errorf("volume %s: Secret %s/%s not found", v.Name, namespace, v.Secret.SecretName)
			}
			err = writeAtomic(path, s.Data, v.Secret.Items, v.Secret.DefaultMode, fsGroup)
		default:
			return nil, fmt.Errorf("volume %s: only emptyDir, configMap, secret and persistentVolumeClaim volumes are supported", v.Name)
		}
		if err != nil {
			return nil, fmt.Errorf("volume %s: %w", v.Name, err)
		}
		vols[v.Name] = hostVolume{path: path}
	}
	return vols, nil
}

// claimDir resolves a persistentVolumeClaim volume to the host directory
// standing in for the claim's bound volume, looked up by the claim's name
// alone, whatever the pod's namespace.
func claimDir(claims map[string]string, namespace string, v corev1.Volume) (string, error) {
	name := v.PersistentVolumeClaim.ClaimName
	dir, ok := claims[name]
	if !ok {
		return "", fmt.Errorf("volume %s: PersistentVolumeClaim %s/%s not found (not in Options.Claims)", v.Name, namespace, name)
	}
	// Absolute, so that the shim does not depend on its working directory.
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("volume %s: PersistentVolumeClaim %s: %w", v.Name, name, err)
	}
	info, err := os.Stat(dir)
	if err == nil && !info.IsDir() {
		err = fmt.Errorf("%s is not a directory", dir)
	}
	if err != nil {
		return "", fmt.Errorf("volume %s: PersistentVolumeClaim %s: %w", v.Name, name, err)
	}
	return dir, nil
}

// makeEmptyDir: mode 0777; with fsGroup, group-owned with setgid, so files
// created in it belong to the group.
func makeEmptyDir(path string, fsGroup int) error {
	if err := os.Mkdir(path, 0o777); err != nil {
		return err
	}
	mode := os.FileMode(0o777)
	if fsGroup >= 0 {
		if err := os.Chown(path, 0, fsGroup); err != nil {
			return err
		}
		mode |= os.ModeSetgid
	}
	return os.Chmod(path, mode)
}

// writeAtomic lays out a ConfigMap or Secret volume as kubelet does: the
// files in ..<timestamp>/, ..data -> ..<timestamp>, and each key a symlink
// key -> ..data/key. Files are root-owned with the item's mode or
// defaultMode (0644 when unset); with fsGroup they are group-owned by it and
// get group read (and group execute where the owner has execute).
func writeAtomic(path string, data map[string][]byte, items []corev1.KeyToPath, defaultMode *int32, fsGroup int) error {
	mode := os.FileMode(0o644)
	if defaultMode != nil {
		mode = os.FileMode(*defaultMode)
	}
	type file struct {
		path string
		mode os.FileMode
		data []byte
	}
	var files []file
	if len(items) == 0 {
		for _, k := range slices.Sorted(maps.Keys(data)) {
			files = append(files, file{k, mode, data[k]})
		}
	} else {
		for _, it := range items {
			d, ok := data[it.Key]
			if !ok {
				return fmt.Errorf("key %q not found", it.Key)
			}
			m := mode
			if it.Mode != nil {
				m = os.FileMode(*it.Mode)
			}
			files = append(files, file{it.Path, m, d})
		}
	}
	gen := filepath.Join(path, volumeTimestamp)
	if err := os.MkdirAll(gen, 0o755); err != nil {
		return err
	}
	if err := os.Chmod(path, 0o777|os.ModeSticky); err != nil {
		return err
	}
	for _, f := range files {
		full := filepath.Join(gen, f.path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, f.data, 0o600); err != nil {
			return err
		}
		m := f.mode
		if fsGroup >= 0 {
			if err := os.Chown(full, 0, fsGroup); err != nil {
				return err
			}
			m |= 0o040
			if m&0o100 != 0 {
				m |= 0o010
			}
		}
		if err := os.Chmod(full, m); err != nil {
			return err
		}
	}
	if err := os.Symlink(volumeTimestamp, filepath.Join(path, "..data")); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, f := range files {
		top := f.path
		for filepath.Dir(top) != "." {
			top = filepath.Dir(top)
		}
		if seen[top] {
			continue
		}
		seen[top] = true
		if err := os.Symlink(filepath.Join("..data", top), filepath.Join(path, top)); err != nil {
			return err
		}
	}
	return nil
}
