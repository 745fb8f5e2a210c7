package localmesh

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Istio's own validation runs in front of every cluster, as istiod's
// validating webhook does in a real installation: WebhookBinary (built from
// istio.io/istio by tools/build-binaries.sh, see tools/istio/webhook) serves
// it over HTTPS with a certificate of a CA made for this mesh, and each API
// server calls it for every networking.istio.io and security.istio.io write,
// with failurePolicy Fail. An object istiod would refuse is then refused
// with Istio's own message, and no write gets past a webhook that is down.

const (
	// WebhookBinary is Istio's validation webhook in the binary directory.
	WebhookBinary = "istio-webhook"
	// WebhookConfigName names the ValidatingWebhookConfiguration in every
	// cluster.
	WebhookConfigName = "istio-validator.local-mesh"

	webhookStartTimeout = 30 * time.Second
)

// webhook is the running validation server.
type webhook struct {
	cmd  *exec.Cmd
	log  *os.File
	url  string // https://127.0.0.1:port/validate
	ca   []byte // PEM of the CA that signed its certificate
	done chan struct{}
}

// startWebhook makes a CA and a serving certificate for 127.0.0.1 in dir,
// starts the webhook on a free port and returns once it answers.
func startWebhook(ctx context.Context, dir, binDir string) (*webhook, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	caPEM, certPEM, keyPEM, err := webhookCertificates()
	if err != nil {
		return nil, fmt.Errorf("localmesh: webhook certificates: %w", err)
	}
	for name, data := range map[string][]byte{"ca.crt": caPEM, "tls.crt": certPEM, "tls.key": keyPEM} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return nil, err
		}
	}
	log, err := openLog(filepath.Join(dir, "webhook.log"))
	if err != nil {
		return nil, err
	}
	addrFile := filepath.Join(dir, "addr")
	// --cert-dir=<mesh dir>/... lets KillLeftovers find it, as it finds
	// the API servers.
	cmd := exec.Command(filepath.Join(binDir, WebhookBinary),
		"--cert-dir="+dir, "--listen=127.0.0.1:0", "--addr-file="+addrFile)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("localmesh: starting Istio's validation webhook: %w", err)
	}
	w := &webhook{cmd: cmd, log: log, ca: caPEM, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(w.done) }()

	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	deadline := time.Now().Add(webhookStartTimeout)
	for {
		if addr, err := os.ReadFile(addrFile); err == nil {
			base := "https://" + strings.TrimSpace(string(addr))
			if resp, err := client.Get(base + "/ready"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					w.url = base + "/validate"
					return w, nil
				}
			}
		}
		select {
		case <-w.done:
			w.stop()
			return nil, fmt.Errorf("localmesh: Istio's validation webhook exited at start (log: %s)", log.Name())
		case <-ctx.Done():
			w.stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			w.stop()
			return nil, fmt.Errorf("localmesh: Istio's validation webhook did not answer within %s (log: %s)", webhookStartTimeout, log.Name())
		}
	}
}

// stop ends the webhook process and waits for it.
func (w *webhook) stop() {
	if w == nil {
		return
	}
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.done:
	case <-time.After(5 * time.Second):
		_ = w.cmd.Process.Kill()
		<-w.done
	}
	w.log.Close()
}

// register points the cluster's API server at the webhook and returns once
// the API server refuses, through it, an object Istio's validation refuses.
func (w *webhook) register(ctx context.Context, cfg *rest.Config) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	fail, none := admissionv1.Fail, admissionv1.SideEffectClassNone
	timeout := int32(10)
	url := w.url
	vwc := &admissionv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: WebhookConfigName},
		Webhooks: []admissionv1.ValidatingWebhook{{
			Name:                    "validation.istio.io",
			ClientConfig:            admissionv1.WebhookClientConfig{URL: &url, CABundle: w.ca},
			FailurePolicy:           &fail,
			SideEffects:             &none,
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          &timeout,
			Rules: []admissionv1.RuleWithOperations{{
				Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
				Rule: admissionv1.Rule{
					APIGroups:   []string{"networking.istio.io", "security.istio.io"},
					APIVersions: []string{"*"},
					Resources:   []string{"*"},
				},
			}},
		}},
	}
	vwcs := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	if _, err := vwcs.Create(ctx, vwc, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
		old, err := vwcs.Get(ctx, vwc.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		vwc.ResourceVersion = old.ResourceVersion
		if _, err := vwcs.Update(ctx, vwc, metav1.UpdateOptions{}); err != nil {
			return err
		}
	} else if err != nil {
		return fmt.Errorf("registering Istio's validation webhook: %w", err)
	}
	return waitValidating(ctx, cfg)
}

// waitValidating waits until a dry-run create of a VirtualService without
// routes is refused by Istio's validation: the API server picks up webhook
// configurations asynchronously.
func waitValidating(ctx context.Context, cfg *rest.Config) error {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	probe := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "networking.istio.io/v1", "kind": "VirtualService",
		"metadata": map[string]any{"name": "local-mesh-validation-probe", "namespace": IstioNamespace},
		"spec":     map[string]any{"hosts": []any{"probe.example"}},
	}}
	vs := dyn.Resource(schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1", Resource: "virtualservices"}).Namespace(IstioNamespace)
	deadline := time.Now().Add(webhookStartTimeout)
	var last error
	for time.Now().Before(deadline) {
		_, err := vs.Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil && strings.Contains(err.Error(), "denied the request") {
			return nil
		}
		last = err
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	if last == nil {
		last = errors.New("a VirtualService without routes was admitted")
	}
	//lint:ignore ST1005 Istio is a name
	return fmt.Errorf("Istio's validation webhook is not in effect after %s: %w", webhookStartTimeout, last)
}

// webhookCertificates returns a new CA and a serving certificate (with its
// key) for 127.0.0.1 and localhost, signed by it, all PEM.
func webhookCertificates() (caPEM, certPEM, keyPEM []byte, err error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "local-mesh webhook CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(10 * 365 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, nil, nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, nil, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "istio-validation.local-mesh"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}
