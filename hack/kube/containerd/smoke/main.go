// Command smoke drives the cluster's containerd 2 through its CRI the way
// the kubelet does for a pod of view-mount image (hack/kube/containerd/
// smoke.sh runs it): a pod sandbox, then one container of the app image
// with the view image's opt/software and opt/views as read-only image
// volume subPath mounts, run as the given uid; it prints the container's
// exit code and log. It needs no Kubernetes: it shows what the runtime
// itself does with image volumes.
//
//	smoke SOCKET LOGDIR APP-IMAGE VIEW-IMAGE UID SCRIPT
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	cri "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func main() {
	if len(os.Args) != 7 {
		fmt.Fprintln(os.Stderr, "usage: smoke SOCKET LOGDIR APP-IMAGE VIEW-IMAGE UID SCRIPT")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2], os.Args[3], os.Args[4], os.Args[5], os.Args[6]); err != nil {
		fmt.Fprintln(os.Stderr, "smoke:", err)
		os.Exit(1)
	}
}

func run(sock, logDir, app, view, uid, script string) error {
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("connect %s: %w", sock, err)
	}
	rt := cri.NewRuntimeServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// The node's network and UTS namespaces: no CNI is needed to show
	// the mounts, and a sandbox without its own UTS may set no hostname.
	sbCfg := &cri.PodSandboxConfig{
		Metadata:     &cri.PodSandboxMetadata{Name: "smoke", Uid: "smoke-" + uid, Namespace: "default"},
		LogDirectory: logDir,
		Linux: &cri.LinuxPodSandboxConfig{
			CgroupParent:    "/jobset-flux-smoke",
			SecurityContext: &cri.LinuxSandboxSecurityContext{NamespaceOptions: &cri.NamespaceOption{Network: cri.NamespaceMode_NODE}},
		},
	}
	sb, err := rt.RunPodSandbox(ctx, &cri.RunPodSandboxRequest{Config: sbCfg})
	if err != nil {
		return fmt.Errorf("run the sandbox: %w", err)
	}
	defer func() {
		_, _ = rt.StopPodSandbox(context.Background(), &cri.StopPodSandboxRequest{PodSandboxId: sb.PodSandboxId})
		_, _ = rt.RemovePodSandbox(context.Background(), &cri.RemovePodSandboxRequest{PodSandboxId: sb.PodSandboxId})
	}()
	return runContainer(ctx, rt, sb.PodSandboxId, sbCfg, app, view, uid, script, logDir)
}

// runContainer creates, starts and waits for the app container, then
// prints its exit code and log.
func runContainer(ctx context.Context, rt cri.RuntimeServiceClient, sandbox string, sbCfg *cri.PodSandboxConfig, app, view, uid, script, logDir string) error {
	n, err := strconv.ParseInt(uid, 10, 64)
	if err != nil {
		return fmt.Errorf("uid %q: %w", uid, err)
	}
	mount := func(path, sub string) *cri.Mount {
		return &cri.Mount{ContainerPath: path, Readonly: true, Image: &cri.ImageSpec{Image: view}, ImageSubPath: sub}
	}
	logName := "app-" + uid + ".log"
	c, err := rt.CreateContainer(ctx, &cri.CreateContainerRequest{PodSandboxId: sandbox, SandboxConfig: sbCfg, Config: &cri.ContainerConfig{
		Metadata: &cri.ContainerMetadata{Name: "app"},
		Image:    &cri.ImageSpec{Image: app},
		Command:  []string{"bash", "-c", script},
		LogPath:  logName,
		Mounts:   []*cri.Mount{mount("/opt/software", "opt/software"), mount("/opt/views", "opt/views")},
		Linux:    &cri.LinuxContainerConfig{SecurityContext: &cri.LinuxContainerSecurityContext{RunAsUser: &cri.Int64Value{Value: n}}},
	}})
	if err != nil {
		return fmt.Errorf("create the container: %w", err)
	}
	defer func() {
		_, _ = rt.RemoveContainer(context.Background(), &cri.RemoveContainerRequest{ContainerId: c.ContainerId})
	}()
	if _, err := rt.StartContainer(ctx, &cri.StartContainerRequest{ContainerId: c.ContainerId}); err != nil {
		return fmt.Errorf("start the container: %w", err)
	}
	for {
		st, err := rt.ContainerStatus(ctx, &cri.ContainerStatusRequest{ContainerId: c.ContainerId})
		if err != nil {
			return fmt.Errorf("container status: %w", err)
		}
		if st.Status.State == cri.ContainerState_CONTAINER_EXITED {
			b, err := os.ReadFile(filepath.Join(logDir, logName))
			if err != nil {
				return err
			}
			fmt.Printf("exit %d\n%s", st.Status.ExitCode, b)
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
}
