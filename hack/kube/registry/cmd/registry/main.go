// Command registry serves an OCI image layout read-only over the pull side
// of the Docker Registry HTTP API v2, so containerd can pull the project's
// test images under their real names (through hosts.toml mirrors) without
// reaching any real registry.
//
//	registry -layout IMAGES/oci -listen 127.0.0.1:PORT [-log FILE] [-addr-file FILE]
//
// A repository is a reference without its registry host: docker.io's
// library/ubuntu, ghcr.io's converged-computing/metric-lammps. containerd's
// ?ns=<host> query, sent on mirror requests, picks the host when two hosts
// have the same name. Every request is logged, one line each.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/jobset-flux/jobset-flux/hack/kube/registry/oci"
)

func main() {
	layout := flag.String("layout", "", "the OCI image layout to serve")
	listen := flag.String("listen", "127.0.0.1:5000", "address to listen on (port 0: any free port)")
	logPath := flag.String("log", "", "append the request log to this file (default: stderr)")
	addrFile := flag.String("addr-file", "", "write the address listened on to this file once serving")
	flag.Parse()
	if *layout == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: registry -layout DIR -listen HOST:PORT [-log FILE] [-addr-file FILE]")
		os.Exit(2)
	}
	if err := run(*layout, *listen, *logPath, *addrFile); err != nil {
		fmt.Fprintln(os.Stderr, "registry:", err)
		os.Exit(1)
	}
}

func run(layout, listen, logPath, addrFile string) error {
	var log io.Writer = os.Stderr
	if logPath != "" {
		f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("open log: %w", err)
		}
		defer f.Close()
		log = f
	}
	s, err := newServer(oci.Layout{Dir: layout}, log)
	if err != nil {
		return fmt.Errorf("load %s: %w", layout, err)
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	srv := &http.Server{Handler: s.logged(s), ReadHeaderTimeout: 10 * time.Second}
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
	fmt.Fprintf(os.Stderr, "registry: serving %d references from %s on http://%s\n", s.refs, layout, ln.Addr())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}
