// Command registry serves an OCI image layout (ocibuild's) over the pull
// side of the registry HTTP API, with go-containerregistry's registry, so
// containerd can pull the project's test images under their real names
// without reaching any real registry.
//
//	registry -layout IMAGES/oci -listen 127.0.0.1:PORT [-log FILE] [-addr-file FILE]
//
// Each image is served in the repository named by its full reference's
// host and path (docker.io/library/ubuntu:24.04 as
// /v2/docker.io/library/ubuntu/manifests/24.04): hack/kube/images/hosts.sh
// sends each registry host to its prefix, so two hosts' images of one
// name stay apart. Every request is logged, one line each.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	layoutDir := flag.String("layout", "", "the OCI image layout to serve")
	listen := flag.String("listen", "127.0.0.1:5000", "address to listen on (port 0: any free port)")
	logPath := flag.String("log", "", "append the request log to this file (default: stderr)")
	addrFile := flag.String("addr-file", "", "write the address listened on to this file once serving")
	flag.Parse()
	if *layoutDir == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: registry -layout DIR -listen HOST:PORT [-log FILE] [-addr-file FILE]")
		os.Exit(2)
	}
	if err := run(*layoutDir, *listen, *logPath, *addrFile); err != nil {
		fmt.Fprintln(os.Stderr, "registry:", err)
		os.Exit(1)
	}
}

func run(layoutDir, listen, logPath, addrFile string) error {
	var w io.Writer = os.Stderr
	if logPath != "" {
		f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("open log: %w", err)
		}
		defer f.Close()
		w = f
	}
	// Loaded before listening: no client ever sees a registry still empty.
	h, refs, err := newRegistry(layoutDir, log.New(w, "", log.LstdFlags|log.Lmicroseconds|log.LUTC))
	if err != nil {
		return fmt.Errorf("load %s: %w", layoutDir, err)
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	}()
	if addrFile != "" {
		if err := os.WriteFile(addrFile, []byte(ln.Addr().String()+"\n"), 0o644); err != nil {
			return fmt.Errorf("write address: %w", err)
		}
	}
	fmt.Fprintf(os.Stderr, "registry: serving %d references from %s on http://%s\n", refs, layoutDir, ln.Addr())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}
