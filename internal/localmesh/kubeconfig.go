package localmesh

import (
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// writeKubeconfig writes the file returned by Kubeconfig: one cluster, user
// and context per cluster, all named after it.
func (m *Mesh) writeKubeconfig() error {
	cfg := clientcmdapi.NewConfig()
	for _, name := range m.names {
		admin := m.clusters[name].admin
		cfg.Clusters[name] = &clientcmdapi.Cluster{Server: admin.Host, CertificateAuthorityData: admin.CAData}
		cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{ClientCertificateData: admin.CertData, ClientKeyData: admin.KeyData}
		cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	}
	cfg.CurrentContext = m.names[0]
	return clientcmd.WriteToFile(*cfg, m.Kubeconfig())
}
