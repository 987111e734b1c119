# Controller for the self-hosted stack (docker compose, Kubernetes). The database URL
# comes from the environment, as in the anchor's examples.
disable_mlock = true

controller {
  name                            = "controller-1"
  description                     = "selfstack gateway controller"
  graceful_shutdown_wait_duration = "10s"
  database {
    url = "env://DATABASE_URL"
  }
}

listener "tcp" {
  address = "0.0.0.0:9200"
  purpose = "api"
}

listener "tcp" {
  address = "0.0.0.0:9201"
  purpose = "cluster"
}

listener "tcp" {
  address = "0.0.0.0:9203"
  purpose = "ops"
}
