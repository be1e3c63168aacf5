package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// criConfig turns containerd's CRI plugin on the way the cluster does
// (hack/kube/config.sh): registry hosts from config_path, nothing of the
// machine's (CNI directories, stream server on loopback).
const criConfig = `oom_score = 0
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "jobset-flux.test/pause:1"
  disable_apparmor = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".cni]
    conf_dir = "@DIR@/cni/net.d"
    bin_dir = "@DIR@/cni/bin"
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "@HOSTS@"
`

// TestCRIPull pulls through the CRI image service, as the kubelet does:
// a short name as the examples write it (busybox:1.36, which the CRI
// plugin normalizes to docker.io/library/busybox:1.36) and a :latest
// ghcr.io image, both through config_path's hosts.toml from the registry.
func TestCRIPull(t *testing.T) {
	needContainerd(t)
	layout, refsFile := busyboxLayout(t)
	log := &syncBuffer{}
	port := serve(t, layout, log)
	hosts := hostsDir(t, port, refsFile)
	c := startContainerdWith(t, strings.ReplaceAll(criConfig, "@HOSTS@", hosts))
	conn, err := grpc.NewClient("unix://"+c.sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	images := runtimeapi.NewImageServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, c := range []struct{ image, tag string }{
		{"busybox:1.36", "docker.io/library/busybox:1.36"},
		{"ghcr.io/converged-computing/metric-lammps:latest", "ghcr.io/converged-computing/metric-lammps:latest"},
	} {
		if err := criPull(ctx, images, c.image, c.tag); err != nil {
			t.Error(err)
		}
	}
	for _, want := range []string{"HEAD /v2/docker.io/library/busybox/manifests/1.36?ns=docker.io\n",
		"HEAD /v2/ghcr.io/converged-computing/metric-lammps/manifests/latest?ns=ghcr.io\n"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("registry log lacks %q:\n%s", want, log.String())
		}
	}
}

// criPull pulls image and checks the CRI plugin then lists it under tag.
func criPull(ctx context.Context, images runtimeapi.ImageServiceClient, image, tag string) error {
	pulled, err := images.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: image}})
	if err != nil {
		return fmt.Errorf("CRI PullImage %s: %w", image, err)
	}
	st, err := images.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: pulled.ImageRef}})
	if err != nil || st.Image == nil {
		return fmt.Errorf("CRI ImageStatus %s (%s): %v, image %v", image, pulled.ImageRef, err, st.GetImage())
	}
	if !slices.Contains(st.Image.RepoTags, tag) {
		return fmt.Errorf("CRI image %s: tags %v, want %s", pulled.ImageRef, st.Image.RepoTags, tag)
	}
	return nil
}
