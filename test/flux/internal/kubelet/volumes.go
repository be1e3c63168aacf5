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

// makeVolumes creates the pod's volumes under dir and returns their host
// paths by name.
func makeVolumes(dir string, pod *corev1.PodSpec, namespace string, objs Objects) (map[string]string, error) {
	fsGroup := -1
	if sc := pod.SecurityContext; sc != nil && sc.FSGroup != nil {
		fsGroup = int(*sc.FSGroup)
	}
	paths := map[string]string{}
	for _, v := range pod.Volumes {
		path := filepath.Join(dir, v.Name)
		var err error
		switch {
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
			return nil, fmt.Errorf("volume %s: only emptyDir, configMap and secret volumes are supported", v.Name)
		}
		if err != nil {
			return nil, fmt.Errorf("volume %s: %w", v.Name, err)
		}
		paths[v.Name] = path
	}
	return paths, nil
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
