# examples/dev.properties in HCL: `wasmconnect dev --config examples/worker.hcl` runs the same
# worker. Every attribute is a worker setting, underscores read as dots (group_id is group.id), lists
# joined with commas; keys that are awkward as HCL names go in `properties`.
bootstrap_servers = ["127.0.0.1:9092"]
group_id          = "connect-cluster"

config_storage_topic = "connect-configs"
offset_storage_topic = "connect-offsets"
status_storage_topic = "connect-status"
# One broker: internal topics cannot have three replicas.
config_storage_replication_factor = 1
offset_storage_replication_factor = 1
status_storage_replication_factor = 1

key_converter   = "org.apache.kafka.connect.json.JsonConverter"
value_converter = "org.apache.kafka.connect.json.JsonConverter"

listeners   = ["http://127.0.0.1:8083"]
plugin_path = ["build/plugins"]
# Plugins see only these directories (FileStreamSource/Sink files must live here).
plugin_fs_allow          = ["data/files"]
offset_flush_interval_ms = 10000

# Connectors as code: the connectors declared in examples/connectors/*.hcl.
connectors_dir = "examples/connectors"

# Config providers for secret("env", ...) placeholders.
config_providers = ["env"]

properties = {
  "key.converter.schemas.enable"   = true
  "value.converter.schemas.enable" = true
  "config.providers.env.class"     = "org.apache.kafka.common.config.provider.EnvVarConfigProvider"
}
