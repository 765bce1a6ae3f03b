# The sink end of the example pipeline: topic example-orders -> data/files/orders-out.txt, with a
# transformation and Kafka's error handling.
connector "example-orders-sink" {
  class = "FileStreamSink"
  config = {
    topics = ["example-orders"]
    file   = abspath("${var.files}/orders-out.txt")
  }

  # transforms=stamp, transforms.stamp.type=InsertHeader, transforms.stamp.header=...
  transform "stamp" {
    type          = "InsertHeader"
    header        = "pipeline"
    value_literal = "hcl-example"
  }

  # errors.tolerance=all, errors.log.enable=true
  errors {
    tolerance  = "all"
    log_enable = true
  }
}
