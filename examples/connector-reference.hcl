# Every part of a connector file, for reference (wasmconnect validate examples/connector-reference.hcl
# needs DB_HOST set; it is not in examples/connectors, so `make run` does not create it).
#
# A directory of *.hcl files is one desired state: variables and locals are shared by its files,
# connector names are unique across them. Errors name the file, line and column:
#   orders.hcl:3,9: Unsupported argument; An argument named "task_max" is not expected here. Did you mean "tasks_max"?

# Variables: a default, overridden by WASMCONNECT_VAR_<name> in the environment, overridden by
# --var name=value (plan, apply, validate). `type` is optional (string, number, bool, list(...), ...).
variable "env" {
  type    = string
  default = "dev"
}

variable "tasks" {
  type    = number
  default = 2
}

locals {
  prefix = "${var.env}-inventory"
  # env("X") reads the environment of whoever reads the files (the worker, or plan/apply), in
  # clear: the value is stored in the config topic. env("X", "default") when X may be unset.
  db_url = "jdbc:postgresql://${env("DB_HOST")}:5432/inventory"
}

connector "inventory-sink" {
  # connector.class: a class name or an alias, as in Kafka Connect.
  class     = "org.apache.kafka.connect.file.FileStreamSinkConnector"
  tasks_max = var.tasks # tasks.max

  # running (default), paused or stopped: created in that state (initial_state), and kept in it.
  state = "running"

  # The connector's own keys, as Kafka Connect names them; lists are joined with commas, null
  # leaves a key out.
  config = {
    topics          = ["${local.prefix}-items", "${local.prefix}-prices"]
    file            = "/var/lib/wasmconnect/files/inventory.txt"
    "connection.url" = local.db_url
    # secret() writes a config-provider placeholder, ${env:DB_PASSWORD}: the config topic and the
    # REST API hold the placeholder, the worker resolves it with its config.providers when the task
    # starts. Also secret("file", "/etc/kafka/db.properties", "password") (a properties file) and
    # secret("directory", "/run/secrets", "db-password") (a file's content).
    "connection.password" = secret("env", "DB_PASSWORD")
    # "connection.password" = env("DB_PASSWORD") is refused: it would store the password in clear.
  }

  # Predicates and transforms: predicates=..., transforms=a,b (in block order),
  # transforms.<alias>.type, .predicate, .negate and the transformation's own settings, whose
  # names have underscores read as dots (static_field is static.field). `config = { ... }` takes
  # keys exactly as written.
  predicate "is-tombstone" {
    type = "RecordIsTombstone"
  }

  transform "drop-tombstones" {
    type      = "Filter"
    predicate = "is-tombstone"
  }

  transform "origin" {
    type         = "org.apache.kafka.connect.transforms.InsertField$Value"
    static_field = "origin"
    static_value = "inventory"
    predicate    = "is-tombstone"
    negate       = true
  }

  # key.converter / value.converter / header.converter and their settings.
  key_converter {
    class = "org.apache.kafka.connect.storage.StringConverter"
  }
  value_converter {
    class          = "org.apache.kafka.connect.json.JsonConverter"
    schemas_enable = false
  }

  # errors.* (KIP-298).
  errors {
    tolerance                            = "all"
    retry_timeout_ms                     = 30000
    retry_delay_max_ms                   = 5000
    log_enable                           = true
    log_include_messages                 = false
    dead_letter_queue_topic              = "${local.prefix}-dlq"
    dead_letter_queue_replication_factor = 1
    dead_letter_queue_context_headers    = true
  }
}
