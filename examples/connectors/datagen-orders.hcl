# A data generator, as kafka-connect-datagen (its class and keys): orders of the "orders" quickstart
# into topic datagen-orders, as Struct values with their schema (the worker's JsonConverter), about
# two a second. Read them with:
#
#   kcat -C -b 127.0.0.1:9092 -t datagen-orders -c 3
#
# `make run POSTGRES_URL=...` also copies them into PostgreSQL (examples/postgres).
connector "example-datagen-orders" {
  class     = "io.confluent.kafka.connect.datagen.DatagenConnector"
  tasks_max = 1
  config = {
    "kafka.topic"  = "datagen-orders"
    quickstart     = "orders"
    "max.interval" = 1000 # ms, at most, between two orders
  }
}
