# A worker that dials the controller's cluster listener (service name `controller` in
# docker compose and Kubernetes).
disable_mlock = true

worker {
  name              = "worker-1"
  description       = "selfstack gateway worker"
  initial_upstreams = ["controller:9201"]
}

listener "tcp" {
  address = "0.0.0.0:9203"
  purpose = "ops"
}
