"""What the operator watches: Prometheus metrics, the health endpoints, shards."""
