# A second sink of the same topic, declared paused: it is created paused (initial_state) and kept
# paused. Set state = "running" to start it, or "stopped" to free its tasks.
connector "example-orders-archive" {
  class = "FileStreamSink"
  state = "paused"
  config = {
    topics = "example-orders"
    file   = abspath("${var.files}/orders-archive.txt")
  }

  value_converter {
    class          = "org.apache.kafka.connect.json.JsonConverter"
    schemas_enable = false
  }
}
