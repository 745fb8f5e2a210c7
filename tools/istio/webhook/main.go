// Command webhook is Istio's own configuration validation, as istiod serves
// it to the API server, for the local mesh: every Istio object written to a
// local cluster is admitted or refused by the code istiod runs
// (istio.io/istio/pkg/webhooks/validation/server with Pilot's schemas),
// with Istio's own messages.
//
//	webhook --cert-dir DIR [--listen 127.0.0.1:0] [--addr-file FILE]
//
// DIR holds the serving certificate and key as tls.crt and tls.key. It
// serves HTTPS on --listen: /validate for AdmissionReview requests and
// /ready for a readiness probe. The bound address (useful with port 0) is
// printed on stdout and, with --addr-file, written to that file once the
// server accepts connections. It stops on SIGINT or SIGTERM.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"istio.io/istio/pkg/config/schema/collections"
	"istio.io/istio/pkg/webhooks/validation/server"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to serve HTTPS on")
	certDir := flag.String("cert-dir", "", "directory holding the PEM serving certificate and key, tls.crt and tls.key")
	addrFile := flag.String("addr-file", "", "file to write the bound address to, once serving")
	domain := flag.String("domain-suffix", "cluster.local", "the mesh's DNS domain suffix, as istiod's --domain")
	flag.Parse()
	if err := run(*listen, *certDir, *addrFile, *domain); err != nil {
		fmt.Fprintln(os.Stderr, "webhook:", err)
		os.Exit(1)
	}
}

func run(listen, certDir, addrFile, domain string) error {
	if certDir == "" {
		return errors.New("--cert-dir is required")
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(certDir, "tls.crt"), filepath.Join(certDir, "tls.key"))
	if err != nil {
		return fmt.Errorf("loading the serving certificate: %w", err)
	}
	mux := http.NewServeMux()
	// The same options istiod passes (pilot/pkg/bootstrap/validation.go):
	// every Pilot kind, validated as istiod would accept it.
	if _, err := server.New(server.Options{Schemas: collections.Pilot, DomainSuffix: domain, Mux: mux}); err != nil {
		return fmt.Errorf("starting Istio's validation: %w", err)
	}
	mux.HandleFunc("/ready", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })

	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           mux,
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 10 * time.Second,
	}
	addr := ln.Addr().String()
	fmt.Println(addr)
	if addrFile != "" {
		// Written to a temporary name first, so a reader never sees half.
		if err := os.WriteFile(addrFile+".tmp", []byte(addr+"\n"), 0o600); err != nil {
			return err
		}
		if err := os.Rename(addrFile+".tmp", addrFile); err != nil {
			return err
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.ServeTLS(ln, "", "") }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv.Shutdown(shutdown)
	}
}
