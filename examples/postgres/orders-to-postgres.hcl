# datagen -> PostgreSQL: the orders of example-datagen-orders (examples/connectors) into table
# "orders" of PostgreSQL, with Confluent's JDBC sink (its class and keys), created at first use and
# upserted by orderid. `make run POSTGRES_URL=jdbc:postgresql://127.0.0.1:5432/postgres` reconciles
# this directory with examples/connectors and grants the worker the database's address
# (plugin.net.allow); the password is read from the worker's environment, PGPASSWORD:
#
#   PGPASSWORD=secret make run POSTGRES_URL=jdbc:postgresql://127.0.0.1:5432/postgres
#   psql -h 127.0.0.1 -U postgres -c 'SELECT count(*), max(orderid) FROM orders'
#
# Against a running worker instead: wasmconnect apply examples/postgres --url http://127.0.0.1:8083
# (the worker's plugin.net.allow must grant the database).
variable "postgres_url" {
  description = "The JDBC URL of the database (WASMCONNECT_VAR_postgres_url)."
  default     = "jdbc:postgresql://127.0.0.1:5432/postgres"
}

variable "postgres_user" {
  default = "postgres"
}

connector "example-orders-postgres" {
  class     = "io.confluent.connect.jdbc.JdbcSinkConnector"
  tasks_max = 1
  config = {
    topics                = "datagen-orders"
    "connection.url"      = var.postgres_url
    "connection.user"     = var.postgres_user
    "connection.password" = secret("env", "PGPASSWORD")
    "table.name.format"   = "orders"
    "auto.create"         = true
    "auto.evolve"         = true
    "insert.mode"         = "upsert"
    "pk.mode"             = "record_value"
    "pk.fields"           = "orderid"
  }

  # The JDBC sink writes flat rows: address.city becomes column address_city.
  transform "flatten" {
    type      = "org.apache.kafka.connect.transforms.Flatten$Value"
    delimiter = "_"
  }
}
