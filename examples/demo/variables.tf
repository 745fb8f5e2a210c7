variable "kubeconfig" {
  description = "Path to a kubeconfig with one context per cluster, named east, west and onprem (make demo passes the local mesh's .local-mesh/kubeconfig)."
  type        = string
}
