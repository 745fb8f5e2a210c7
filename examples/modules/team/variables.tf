variable "team" {
  description = "The team's name, a DNS label: it prefixes every intent name and is part of the hostname."
  type        = string
  validation {
    condition     = can(regex("^[a-z]([-a-z0-9]*[a-z0-9])?$", var.team))
    error_message = "team must be a DNS label (lowercase letters, digits and '-')."
  }
}

variable "service" {
  description = "The Kubernetes Service that serves the team's API, in namespace in every backend cluster."
  type        = string
}

variable "namespace" {
  description = "Namespace of the service in the backend clusters."
  type        = string
}

variable "port" {
  description = "Port callers use on the global hostname (and the service's port)."
  type        = number
  default     = 8080
}

variable "clusters" {
  description = "Backend clusters, most preferred first: callers fail over in this order."
  type        = list(string)
}

variable "client_cluster_selector" {
  description = "Labels of the clusters whose workloads may resolve the hostname."
  type        = map(string)
  default     = {}
}

variable "timeout" {
  description = "Per-request timeout callers apply."
  type        = string
  default     = "5s"
}

variable "retry_attempts" {
  description = "Retries on 5xx and connection failures."
  type        = number
  default     = 2
}

variable "callers" {
  description = "Workloads allowed to call the service, by namespace and service account."
  type = list(object({
    namespace       = string
    service_account = string
  }))
}

variable "calls" {
  description = "Global hostnames of other teams the team's workloads (in namespace) call, and how those requests behave: a timeout and request headers to set."
  type = map(object({
    timeout         = optional(string)
    request_headers = optional(map(string), {})
  }))
  default = {}
}
